// Checks the packages as users get them: pack the published packages with the
// README's own `npm pack` line (its "install from a checkout" steps), look
// inside the tarballs, install them all at once into a scratch ESM project
// (strict TypeScript, nodenext) and a scratch CommonJS project, and take one
// lock against a real redis-server from each. Run after `npm run build` (CI does).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisFleet } from '@org/rlock-testing';

const root = new URL('..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'rlock-packages-'));
const problems = [];
const log = (line) => process.stderr.write(`[check:packages] ${line}\n`);
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

let fleet;
let published = [];
try {
  // 1. Pack as the README says, every published package, and look inside.
  const { packArgs, installDir } = readmeInstallSteps();
  const packed = JSON.parse(run('npm', [...packArgs.map((arg) => (arg === installDir ? work : arg)), '--json'], root));
  published = readdirSync(join(root, 'packages'))
    .map((dir) => JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')))
    .filter((manifest) => !manifest.private)
    .map((manifest) => manifest.name)
    .sort();
  const names = packed.map((entry) => entry.name).sort();
  if (names.join() !== published.join())
    problems.push(`the README's npm pack packs ${names.join(', ')}, not every published package (${published.join(', ')})`);
  const tarballs = [];
  for (const { filename, files } of packed) {
    if (!/^org-rlock-.*\.tgz$/.test(filename)) problems.push(`${filename}: not matched by the README's org-rlock-*.tgz`);
    tarballs.push(join(work, filename));
    const paths = files.map((file) => file.path);
    if (paths.some((path) => path.endsWith('.tsbuildinfo'))) problems.push(`${filename}: ships a .tsbuildinfo`);
    if (!paths.some((path) => path.startsWith('src/'))) problems.push(`${filename}: ships no src/ (its source maps point there)`);
    if (!paths.includes('dist/cjs/package.json')) problems.push(`${filename}: no dist/cjs/package.json marking the CommonJS build`);
    if (paths.some((path) => path.startsWith('test/'))) problems.push(`${filename}: ships its tests`);
    log(`${filename}: ${paths.length} files`);
  }

  fleet = await RedisFleet.start({ size: 1 });
  const url = fleet.url(0);

  // 2. A strict TypeScript ESM consumer (nodenext), type-checked and run.
  const esm = join(work, 'esm');
  mkdirSync(esm);
  writeFileSync(join(esm, 'package.json'), JSON.stringify({ name: 'esm-consumer', private: true, type: 'module' }));
  writeFileSync(
    join(esm, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        strict: true,
        outDir: 'out',
        skipLibCheck: false,
        lib: ['es2022', 'esnext.disposable'],
        types: ['node'],
      },
    }),
  );
  writeFileSync(
    join(esm, 'main.ts'),
    `import { Redis } from 'ioredis';
import { createClient, InvalidArgumentError, RLockError, type RLock } from '@org/rlock';

const redis = new Redis(process.env.REDIS_URL as string);
const client = createClient({ redis, keyPrefix: 'packed-esm' });
const lock: RLock<string> = client.getLock('one');
const token: string = await lock.withLock(async ({ token }) => token);
let refused = false;
try {
  client.getLock('');
} catch (error) {
  refused = error instanceof InvalidArgumentError && error instanceof RLockError;
}
await client.close();
redis.disconnect();
console.log(JSON.stringify({ token: /^\\d+$/.test(token), refused }));
`,
  );
  log('installing the tarballs into a strict TypeScript ESM project');
  run('npm', ['install', '--no-audit', '--no-fund', ...tarballs, 'ioredis@^6.0.0', 'typescript@~5.9.3', '@types/node@^20.19.0'], esm);
  run(join(esm, 'node_modules', '.bin', 'tsc'), ['-p', '.'], esm);
  const esmRun = spawnSync(process.execPath, [join(esm, 'out', 'main.js')], { env: { ...process.env, REDIS_URL: url }, encoding: 'utf8', timeout: 30_000 });
  if (esmRun.stdout.trim() !== '{"token":true,"refused":true}') problems.push(`ESM consumer: ${esmRun.stdout}${esmRun.stderr}`);

  // 3. A CommonJS consumer.
  const cjs = join(work, 'cjs');
  mkdirSync(cjs);
  writeFileSync(join(cjs, 'package.json'), JSON.stringify({ name: 'cjs-consumer', private: true }));
  writeFileSync(
    join(cjs, 'main.js'),
    `const { createClient } = require('@org/rlock');
(async () => {
  const client = createClient({ redis: process.env.REDIS_URL, keyPrefix: 'packed-cjs' });
  const token = await client.getLock('one').withLock(async ({ token }) => token);
  await client.close();
  console.log(/^\\d+$/.test(token) ? 'ok' : 'no token');
})().catch((error) => { console.error(error); process.exit(1); });
`,
  );
  log('installing the tarballs into a CommonJS project');
  run('npm', ['install', '--no-audit', '--no-fund', ...tarballs, 'ioredis@^6.0.0'], cjs);
  const cjsRun = spawnSync(process.execPath, [join(cjs, 'main.js')], { env: { ...process.env, REDIS_URL: url }, encoding: 'utf8', timeout: 30_000 });
  if (cjsRun.stdout.trim() !== 'ok') problems.push(`CommonJS consumer: ${cjsRun.stdout}${cjsRun.stderr}`);
} catch (error) {
  problems.push(String(error?.stderr || error?.message || error));
} finally {
  await fleet?.stop();
  rmSync(work, { recursive: true, force: true });
}

/** The README's "install from a checkout" block: its `npm pack` line's arguments and the folder the tarballs go to. */
function readmeInstallSteps() {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = [...readme.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((match) => match[1]).find((text) => /^npm pack /m.test(text));
  const packLine = block?.split('\n').find((line) => line.startsWith('npm pack '));
  const args = packLine?.split(/\s+/).slice(1) ?? [];
  const installDir = args[args.indexOf('--pack-destination') + 1];
  if (!packLine || !args.includes('--pack-destination') || !installDir)
    throw new Error('README.md has no sh block with an `npm pack --pack-destination <dir> …` line');
  if (!new RegExp(`^npm install ${installDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/org-rlock-\\*\\.tgz ioredis$`, 'm').test(block)) {
    throw new Error(`README.md: the install line after npm pack must be \`npm install ${installDir}/org-rlock-*.tgz ioredis\``);
  }
  return { packArgs: args, installDir };
}

if (problems.length > 0) {
  console.error(`check:packages found ${problems.length} problem(s):\n- ${problems.join('\n- ')}`);
  process.exit(1);
}
console.log(
  `check:packages: the README's ${published.length} tarballs packed, installed into an ESM (strict TypeScript) and a CommonJS project, one lock taken from each`,
);
