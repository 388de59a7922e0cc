import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// scripts/embed-lua.mjs run on a copy of the repository's scripts, so a test can break one.
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const OBJECTS = 'packages/core/src/objects';
const LEASE_LOCK = 'packages/redlock/src/lease-lock';

function withCopy(edit: (dir: string) => void): { status: number | null; output: string; generated: (path: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), 'embed-lua-'));
  try {
    cpSync(join(ROOT, 'scripts/embed-lua.mjs'), join(dir, 'scripts/embed-lua.mjs'));
    const lua = (source: string) => source.endsWith('.lua') || statSync(source).isDirectory();
    cpSync(join(ROOT, OBJECTS), join(dir, OBJECTS), { recursive: true, filter: lua });
    cpSync(join(ROOT, LEASE_LOCK), join(dir, LEASE_LOCK), { recursive: true, filter: lua });
    edit(dir);
    const run = spawnSync(process.execPath, [join(dir, 'scripts/embed-lua.mjs')], { encoding: 'utf8', timeout: 30_000 });
    const generated: Record<string, string> = {};
    if (run.status === 0) {
      generated[OBJECTS] = readFileSync(join(dir, OBJECTS, 'scripts.generated.ts'), 'utf8');
      generated[LEASE_LOCK] = readFileSync(join(dir, LEASE_LOCK, 'scripts.generated.ts'), 'utf8');
    }
    return { status: run.status, output: run.stdout + run.stderr, generated: (path) => generated[path] ?? '' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `numberOfKeys` of one entry of a generated module. */
const keysOf = (generated: string, id: string) => new RegExp(`\\n  ${id}: \\{\\n    numberOfKeys: (\\w+),`).exec(generated)?.[1];

const editFile = (path: string, edit: (text: string) => string) => writeFileSync(path, edit(readFileSync(path, 'utf8')));

describe('scripts/embed-lua.mjs', () => {
  it('names an entry by its file (kind + name) and takes the key count from the header: fixed KEYS[1..n], or per-item KEYS[i] for a batch', () => {
    const run = withCopy(() => {});
    expect({ status: run.status, output: run.output }).toMatchObject({ status: 0 });
    expect(run.output).toContain('wrote 35 scripts');
    const core = run.generated(OBJECTS);
    expect(core).toContain('  /** lock/acquire.lua */\n  lockAcquire: {');
    expect(keysOf(core, 'lockAcquire')).toBe('4');
    expect(keysOf(core, 'fairQueueCancel')).toBe('7');
    expect(keysOf(core, 'latchCountDown')).toBe('3');
    expect(keysOf(core, 'lockRenew')).toBe('undefined');
    expect(keysOf(core, 'inspectRead')).toBe('undefined');
    expect(keysOf(run.generated(LEASE_LOCK), 'leaseLockRenew')).toBe('undefined');
    expect(keysOf(run.generated(LEASE_LOCK), 'leaseLockAcquire')).toBe('2');
  });

  it('wraps a script that calls an include function that publishes, found through the includes, or hands it to pcall', () => {
    const core = withCopy(() => {}).generated(OBJECTS);
    const luaOf = (id: string) => JSON.parse(new RegExp(`\\n  ${id}: \\{[^]*?\\n    lua: ("(?:[^"\\\\]|\\\\.)*"),`).exec(core)?.[1] ?? '""') as string;
    const wrapped = (id: string) => luaOf(id).startsWith('local publishRefused\nlocal reply = (function()\n');
    // release.lua calls releaseLock, which calls wakeClient, which calls announce; releaseBatch pcalls releaseLock.
    expect(wrapped('lockRelease')).toBe(true);
    expect(wrapped('lockReleaseBatch')).toBe(true);
    expect(wrapped('lockAcquire')).toBe(false);
    expect(luaOf('lockAcquire')).toContain('acquireLock');
  });

  it('counts a key added to the header without renaming the file', () => {
    const run = withCopy((dir) =>
      editFile(join(dir, OBJECTS, 'lock/wake.lua'), (lua) =>
        lua.replace(/(\nKEYS\[2\][^\n]*\n)/, '$1KEYS[3]  extra: a key the script reads\n').replace(/\n(?!.*\n)/, '\nredis.call("EXISTS", KEYS[3])\n'),
      ),
    );
    expect({ status: run.status, output: run.output }).toMatchObject({ status: 0 });
    expect(keysOf(run.generated(OBJECTS), 'lockWake')).toBe('3');
  });

  it('refuses a file name carrying a key count', () => {
    const run = withCopy((dir) => renameSync(join(dir, OBJECTS, 'lock/wake.lua'), join(dir, OBJECTS, 'lock/wake-2.lua')));
    expect(run.status).toBe(1);
    expect(run.output).toContain('packages/core/src/objects/lock/wake-2.lua:1: expected <camelName>.lua');
  });

  it("refuses a header whose first line does not name the script's file", () => {
    const run = withCopy((dir) => editFile(join(dir, LEASE_LOCK, 'cancel.lua'), (lua) => lua.replace('\ncancel: ', '\ncancel-2: ')));
    expect(run.status).toBe(1);
    expect(run.output).toContain("packages/redlock/src/lease-lock/cancel.lua:2: expected the header's first line to name the script: `cancel: <what it does>`");
  });

  it('refuses per-item ARGV beside fixed keys, and fixed keys beside per-item ones', () => {
    const fixedKeys = withCopy((dir) => editFile(join(dir, OBJECTS, 'lock/renew.lua'), (lua) => lua.replace('\nKEYS[i]     key:', '\nKEYS[1]     key:')));
    expect(fixedKeys.status).toBe(1);
    expect(fixedKeys.output).toContain('lock/renew.lua:5: per-item ARGV in a script of 1 fixed keys');
    const mixed = withCopy((dir) =>
      editFile(join(dir, LEASE_LOCK, 'renew.lua'), (lua) =>
        lua
          .replace('\nKEYS[i]     lock:', '\nKEYS[1]     first: a fixed key\nKEYS[i+1]   lock:')
          .replace('local results = {}', 'local results = {}\nredis.call("EXISTS", KEYS[1])'),
      ),
    );
    expect(mixed.status).toBe(1);
    expect(mixed.output).toContain('lease-lock/renew.lua:4: a batch has no fixed keys');
  });
});
