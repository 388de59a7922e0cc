import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// scripts/check-file-refs.mjs run on a small tree of its own, so a test can cite what it likes.
const SCRIPT = fileURLToPath(new URL('../../../../scripts/check-file-refs.mjs', import.meta.url));

function check(files: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'file-refs-'));
  try {
    cpSync(SCRIPT, join(dir, 'scripts/check-file-refs.mjs'));
    const tree = {
      'README.md': '# x\n',
      'packages/core/src/objects/lock/acquire.lua': '--[[\nacquire: x\n]]\n',
      'packages/core/src/objects/includes/mint-token.lua': '-- mint-token (include)\n',
      'packages/core/src/connection/transport.ts': 'export {};\n',
      'packages/redlock/src/lease-lock/cancel.lua': '--[[\ncancel: x\n]]\n',
      'docs/lock.md': '# lock\n',
      // What the script's own comments cite.
      'scripts/embed-lua.mjs': '\n',
      'packages/core/src/objects/fair-queue/acquire.lua': '--[[\nacquire: x\n]]\n',
      'packages/core/src/objects/fair-queue/release.lua': '--[[\nrelease: x\n]]\n',
      ...files,
    };
    for (const [path, text] of Object.entries(tree)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const run = spawnSync(process.execPath, [join(dir, 'scripts/check-file-refs.mjs')], { encoding: 'utf8', timeout: 30_000 });
    return { status: run.status, output: run.stdout + run.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('scripts/check-file-refs.mjs', () => {
  it('passes references that resolve: from the root, the citing folder, a package src, core objects/ and its kind folders, the lease lock', () => {
    const run = check({
      'docs/guide.md': [
        'See `docs/lock.md`, [the lock](lock.md), `objects/lock/acquire.lua`, `lock/acquire.lua`, `acquire.lua`,',
        '`mint-token.lua`, `connection/transport.ts`, `cancel.lua`, `node ./scripts/check-file-refs.mjs`, https://example.com/x.md,',
        'placeholders `<kind>/<name>.lua` and `objects/latch/*.lua`.',
        '```ts',
        "import { x } from './app.ts';",
        '```',
      ].join('\n'),
      'docs/api/media/CHANGELOG.md': 'A copy the API site build made: `gone.lua`.\n',
      'packages/core/src/objects/lock/store.ts': '// Runs acquire.lua (../includes/mint-token.lua).\nconst lua = script.lua; /* keys: lock/acquire.lua */\n',
    });
    expect(run).toMatchObject({ status: 0 });
    expect(run.output).toMatch(/^file references resolve \(\d+ in 12 files\)/);
  });

  it('fails listing each reference, in a doc or a code or Lua comment, to a file that does not exist', () => {
    const run = check({
      'docs/guide.md': 'The lock runs `objects/lock/acquire-4.lua`; see DESIGN.md.\n',
      'packages/core/src/objects/lock/store.ts': '/**\n * Runs lock/acquire-4.lua.\n */\nexport const lua = script.lua;\n',
      'packages/core/src/objects/lock/acquire.lua': '--[[\nacquire: as renew-n.lua\n]]\n-- see wake-2.lua\n',
      'scripts/tool.mjs': '// After scripts/gone.mjs.\n',
    });
    expect(run.status).toBe(1);
    expect(run.output.trim().split('\n').sort()).toEqual(
      [
        'docs/guide.md:1: objects/lock/acquire-4.lua does not exist',
        'docs/guide.md:1: DESIGN.md does not exist',
        'packages/core/src/objects/lock/store.ts:2: lock/acquire-4.lua does not exist',
        'packages/core/src/objects/lock/acquire.lua:2: renew-n.lua does not exist',
        'packages/core/src/objects/lock/acquire.lua:4: wake-2.lua does not exist',
        'scripts/tool.mjs:1: scripts/gone.mjs does not exist',
        '6 reference(s) to files that do not exist: rename them with the file, or drop them.',
      ].sort(),
    );
  });
});
