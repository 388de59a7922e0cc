// @ts-check
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    // scripts/bench/peers imports the peer libraries, installed only in scripts/bench.
    ignores: ['**/dist/', '**/.tsbuild/', '**/node_modules/', 'docs/', 'coverage/', '.redis-fleet/', '**/*.generated.ts', 'scripts/bench/peers/'],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    // Plain JS (scripts, examples, test fixtures, configs): the recommended rules
    // only, as Node sees them; they catch undefined names and dead code for free.
    files: ['**/*.{js,mjs,cjs}'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    files: ['packages/*/src/**/*.ts', 'packages/*/test/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // One program, the one `typecheck:tests` and jest compile: sources and
        // tests together, siblings through `paths` to their sources. The project
        // service would find only each package's src tsconfig (tests are in none)
        // and, given one per test folder, builds ten programs: 2.5x the CPU.
        project: './tsconfig.test.json',
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A leading underscore marks a parameter or binding kept on purpose
      // (an interface's argument, a property split off with a rest).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Forwarding a caught error or an abort reason (typed unknown) as it came
      // is right; wrapping it would change what the caller sees. `throw` of an
      // unknown is allowed by only-throw-error already: rejection matches it.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // Not in the preset: `return promise` inside try skips its catch and finally.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      // Not in the preset: a switch over a union (object kinds, reasons, votes)
      // must name every member, so adding one shows every place to extend.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // A `let` that a closure reads before its one assignment cannot be a const
      // (Redlock's client wires masters to a set made after them).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ['packages/*/src/**/*.ts'],
    rules: {
      // A library reports through events and errors, never the user's console.
      'no-console': 'error',
    },
  },
  {
    files: ['packages/*/test/**/*.ts'],
    rules: {
      // An async callback without await is deliberate in tests: it exercises the
      // API's promise path (run, withLock, runInTaskOrNew, eventually).
      '@typescript-eslint/require-await': 'off',
    },
  },
  // Last: turns off every stylistic rule that would fight Prettier.
  prettier,
);
