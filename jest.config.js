// Tests run as native ESM (nanoid and p-retry are ESM-only) against the
// TypeScript sources, so a test never depends on a stale build. Child
// processes spawned by tests run the built dist instead: `npm test` builds first.
const moduleNameMapper = {
  '^@org/rlock$': '<rootDir>/packages/rlock/src/index.ts',
  '^@org/rlock-core/internal$': '<rootDir>/packages/core/src/internal.ts',
  '^@org/rlock-(core|watchdog|redlock|testing)$': '<rootDir>/packages/$1/src/index.ts',
  '^(\\.{1,2}/.*)\\.js$': '$1',
};
const transform = {
  '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.test.json', diagnostics: false }],
};
const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper,
  transform,
  rootDir: '.',
  // RLOCK_HOLD_LEAKED warnings are kept off stderr: a test asserts the ones it causes, any other fails it.
  setupFilesAfterEnv: ['<rootDir>/packages/testing/test/setup/hold-leak-warnings.ts'],
};

export default {
  testTimeout: 60_000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/packages/*/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/packages/*/test/integration/**/*.int.test.ts'],
    },
  ],
};
