import { readFileSync } from 'node:fs';
import ts from 'typescript';
import {
  createClient,
  LAYOUT_VERSION,
  MAX_NAME_BYTES,
  MIN_LEASE_MS,
  MultiLock,
  type MultiLockHandle,
  type MultiLockScope,
  type RLockClient,
  type RLockClientOptions,
  type RReadWriteLock,
} from '@org/rlock';

/**
 * Applications import from `@org/rlock` only (its README says so), so every
 * public name of the packages it wires must be exported from it too. The
 * type-level half below compiles only while it is (`npm run typecheck:tests`);
 * the other half compares the entry points, so a name added to core later
 * cannot be forgotten here.
 */

// Type-level: compiles only while @org/rlock exports these names; each failed
// with TS2724 ("has no exported member") before. Never called.
function typed(client: RLockClient, options: RLockClientOptions): [RReadWriteLock, Promise<MultiLockHandle>, Promise<boolean>, unknown] {
  const multi: MultiLock = client.getMultiLock([client.getLock('a'), client.getLock('b')]);
  return [client.getReadWriteLock('doc'), multi.acquire(), multi.withLock((scope: MultiLockScope) => scope.signal.aborted), options.redis];
}

/** Names a package's `src/index.ts` exports, each marked as a type-only export or a value. */
function exportsOf(pkg: string): Map<string, 'type' | 'value'> {
  const path = new URL(`../../../${pkg}/src/index.ts`, import.meta.url);
  const source = ts.createSourceFile(path.pathname, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022);
  const names = new Map<string, 'type' | 'value'>();
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    const clause = statement.exportClause;
    const from = statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier) ? statement.moduleSpecifier.text : '';
    // The one `export *` allowed: @org/rlock is core plus wiring, so it passes
    // core's reviewed list on whole instead of copying it.
    if (!clause && from === '@org/rlock-core') {
      for (const [name, kind] of exportsOf('core')) names.set(name, kind);
      continue;
    }
    if (!clause || !ts.isNamedExports(clause)) throw new Error(`${pkg}/src/index.ts: \`export *\` from ${from} (the style is explicit named exports)`);
    for (const element of clause.elements) {
      names.set(element.name.text, statement.isTypeOnly || element.isTypeOnly ? 'type' : 'value');
    }
  }
  return names;
}

/** What the wired packages export that applications do not need, and why. */
const NOT_FOR_APPLICATIONS: Readonly<Record<string, string>> = {
  createWatchdog: 'createClient and createRedlock wire the watchdog in',
  Watchdog: 'createClient and createRedlock wire the watchdog in',
  resolveRedlockOptions: "createRedlock's own option check",
};

describe('@org/rlock', () => {
  describe('exports', () => {
    it('has the types applications name (RReadWriteLock, MultiLock, its handle and scope, RLockClientOptions)', () => {
      expect(typed).toBeInstanceOf(Function); // the check is that this file compiles
    });

    it('exports the values core exports', () => {
      expect(MultiLock).toBeInstanceOf(Function);
      expect(MIN_LEASE_MS).toBeGreaterThan(0);
      expect(MAX_NAME_BYTES).toBeGreaterThan(0);
      expect(Number.isInteger(LAYOUT_VERSION)).toBe(true);
      const client = createClient({ redis: { port: 1, lazyConnect: true }, keyPrefix: 'exports' });
      client.on('error', () => undefined);
      expect(client.getMultiLock([client.getLock('a')])).toBeInstanceOf(MultiLock);
      return client.close();
    });

    it.each(['core', 'watchdog', 'redlock'])('re-exports every public name of @org/rlock-%s, values as values', (pkg) => {
      const ours = exportsOf('rlock');
      const missing = [...exportsOf(pkg)]
        .filter(([name, kind]) => !(name in NOT_FOR_APPLICATIONS) && !(ours.get(name) === kind || ours.get(name) === 'value'))
        .map(([name, kind]) => `${name} (${kind})`);
      expect(missing).toEqual([]);
    });
  });
});
