import { execFileSync, spawn } from 'node:child_process';
import { hostname, tmpdir } from 'node:os';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createClient, type ObjectInfo, type RLockClient } from '@org/rlock';
import { KINDS } from '@org/rlock-core/internal';
import { RedisCluster, RedisFleet, RedisSentinelGroup, eventually, uniquePrefix } from '@org/rlock-testing';

/** The built `rlock` binary, as package.json's `bin` names it (build before the tests). */
const packageDir = fileURLToPath(new URL('../../', import.meta.url));
const manifest = JSON.parse(readFileSync(`${packageDir}package.json`, 'utf8')) as { bin: { rlock: string } };
const BIN = `${packageDir}${manifest.bin.rlock}`;

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/**
 * Runs the binary to its end (stdin closed unless `input`, or `tty` to give it
 * a terminal through script(1)), with `env` over this process's environment
 * (`RLOCK_*` variables left out unless given, so a developer's own cannot leak in).
 */
function rlock(args: readonly string[], options: { input?: string; tty?: boolean; env?: Record<string, string> } = {}): Promise<Run> {
  const startedAt = performance.now();
  const quoted = [process.execPath, BIN, ...args].map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(' ');
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('RLOCK_'))), ...options.env };
  const child = options.tty
    ? spawn('script', ['-qec', quoted, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env })
    : spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  if (options.input !== undefined) {
    // On a terminal the answer must come once the question is asked.
    const answer = options.input;
    child.stdout.once('data', () => setTimeout(() => child.stdin.write(answer), 100));
  } else {
    child.stdin.end();
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - startedAt });
    }),
  );
}

/** Adds an ACL user with every right and `password` on the server at `port` (of this machine). */
async function aclSetUser(port: number, user: string, password: string): Promise<void> {
  const redis = new Redis({ port, lazyConnect: true });
  try {
    await redis.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all');
  } finally {
    redis.disconnect();
  }
}

/** A port nothing listens on: one the system just handed out and took back. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Characters a terminal may act on (C0 but newline, DEL, C1, format and bidi characters, separators, lone surrogates). */
const UNSAFE_OUTPUT = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/** A scratch directory for files the CLI reads (URL files, certificates), removed after the run. */
const scratch = mkdtempSync(join(tmpdir(), 'rlock-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Writes `text` to a new file in the scratch directory (owner-only, as a secret's file should be) and returns its path. */
function scratchFile(name: string, text: string): string {
  const path = join(scratch, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

describe('rlock CLI', () => {
  describe('--help', () => {
    it('lists every registered kind with what it is, the kinds --kind accepts', async () => {
      const run = await rlock(['--help']);
      expect(run.code).toBe(0);
      for (const kind of KINDS) expect(run.stdout).toMatch(new RegExp(`^  ${kind.name} +${kind.description} \\(${kind.method}\\)$`, 'm'));
    });
  });

  describe('on one Redis', () => {
    let fleet: RedisFleet;
    let client: RLockClient;
    let keyPrefix: string;
    let flags: string[];

    beforeAll(async () => {
      // Server 1 is stopped by a test: its port then refuses connections.
      fleet = await RedisFleet.start({ size: 2 });
    });
    beforeEach(() => {
      keyPrefix = uniquePrefix();
      client = createClient({ redis: fleet.url(0), keyPrefix, watchdogTimeoutMs: 30_000 });
      client.on('error', () => undefined);
      flags = ['--redis', fleet.url(0), '--prefix', keyPrefix];
    });
    afterEach(() => client.close());
    afterAll(() => fleet.stop());

    async function setUp(): Promise<{ token: string }> {
      const held = await client.getLock('order:1').acquire({ leaseMs: 60_000 });
      await held.run(() => client.getLock('order:1').lock({ leaseMs: 60_000 }));
      await client.getLock('order:2').acquire({ leaseMs: 60_000 });
      await client.getReadWriteLock('doc').readLock().acquire({ leaseMs: 60_000 });
      await client.getSemaphore('quota').trySetPermits(3);
      await client.getCountDownLatch('batch').trySetCount(2);
      const permits = client.getPermitExpirableSemaphore('gpu');
      await permits.trySetPermits(2);
      await permits.acquire({ leaseMs: 60_000 });
      return { token: held.token };
    }

    describe('--redis', () => {
      it('takes host:port as well as a URL, and so does RLOCK_REDIS_URL', async () => {
        await client.getLock('order:9').acquire({ leaseMs: 60_000 });
        const hostPort = `127.0.0.1:${fleet.port(0)}`;
        const byFlag = await rlock(['show', 'order:9', '--json', '--redis', hostPort, '--prefix', keyPrefix]);
        const byName = await rlock(['show', 'order:9', '--json', '--redis', `localhost:${fleet.port(0)}`, '--prefix', keyPrefix]);
        const byEnv = await rlock(['show', 'order:9', '--json', '--prefix', keyPrefix], { env: { RLOCK_REDIS_URL: hostPort } });
        for (const run of [byFlag, byName, byEnv]) {
          expect(run.stderr).toBe('');
          expect(run.code).toBe(0);
          expect(JSON.parse(run.stdout)).toMatchObject({ kind: 'lock', holderCount: 1 });
        }
      });
    });

    describe('secrets', () => {
      const password = 'cli-pa55-w0rd';
      let user: string;
      let url: string;

      beforeEach(async () => {
        user = `cli-${keyPrefix}`;
        await client.redis.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all');
        url = `redis://${user}:${password}@127.0.0.1:${fleet.port(0)}`;
        await client.getLock('order:9').acquire({ leaseMs: 60_000 });
      });
      afterEach(() => client.redis.call('ACL', 'DELUSER', user));

      it('reads the URL from RLOCK_REDIS_URL or --redis-file without a word, and warns once when --redis carries a password', async () => {
        const show = ['show', 'order:9', '--json', '--prefix', keyPrefix];
        const byEnv = await rlock(show, { env: { RLOCK_REDIS_URL: url } });
        const byFile = await rlock([...show, '--redis-file', scratchFile(`${user}.url`, `${url}\n`)]);
        const byArgv = await rlock([...show, '--redis', url]);
        for (const run of [byEnv, byFile, byArgv]) {
          expect(run.code).toBe(0);
          expect(JSON.parse(run.stdout)).toMatchObject({ kind: 'lock', holderCount: 1 });
        }
        expect(byEnv.stderr).toBe('');
        expect(byFile.stderr).toBe('');
        const warnings = byArgv.stderr.split('\n').filter((line) => line.length > 0);
        expect(warnings).toEqual([expect.stringMatching(/^rlock: warning: --redis carries a password, which every user of this machine can read \(ps/)]);
        expect(byArgv.stderr).toContain('RLOCK_REDIS_URL');
        expect(byArgv.stderr).not.toContain(password);
        // The file wins over the environment, as a flag does.
        const both = await rlock([...show, '--redis-file', scratchFile(`${user}-2.url`, url)], { env: { RLOCK_REDIS_URL: 'redis://127.0.0.1:1' } });
        expect(both.code).toBe(0);
      });

      it('never prints the password: not for a bad URL, a bad file, a refused or a wrong one', async () => {
        const port = await closedPort();
        const runs = {
          badUrl: await rlock(['show', 'x', '--redis', `redis://${user}:${password}@[bad`]),
          badFile: await rlock(['show', 'x', '--redis-file', scratchFile(`${user}.bad`, `redis//${user}:${password}@127.0.0.1:1`)]),
          tlsWithPlainUrl: await rlock(['show', 'x', '--redis', url, '--tls-ca', scratchFile(`${user}.pem`, 'not a pem')]),
          refused: await rlock(['show', 'x', '--redis', `redis://${user}:${password}@127.0.0.1:${port}`]),
          wrong: await rlock(['show', 'x', '--redis-file', scratchFile(`${user}.wrong`, url.replace(password, `${password}-not`))]),
          badEnv: await rlock(['show', 'x'], { env: { RLOCK_REDIS_URL: `http://${user}:${password}@127.0.0.1:1` } }),
        };
        expect(runs.badUrl.code).toBe(2);
        expect(runs.badUrl.stderr).toContain(`${user}:***@`);
        expect(runs.badFile.code).toBe(2);
        expect(runs.badFile.stderr).toMatch(/--redis-file: ".*\.bad" does not hold a redis:\/\/ or rediss:\/\/ URL or host:port/);
        expect(runs.tlsWithPlainUrl.code).toBe(2);
        expect(runs.tlsWithPlainUrl.stderr).toMatch(/--tls-ca connects with TLS: give a rediss:\/\/ URL or host:port/);
        expect(runs.refused.code).toBe(3);
        expect(runs.wrong.code).not.toBe(0);
        expect(runs.badEnv.code).toBe(2);
        expect(runs.badEnv.stderr).toContain(`RLOCK_REDIS_URL takes a redis:// or rediss:// URL or host:port, got "http://${user}:***@`);
        for (const run of Object.values(runs)) {
          expect(run.stderr).not.toContain(password);
          expect(run.stdout).not.toContain(password);
        }
      });

      it('exits 2 for a --redis-file it cannot read, or with another address flag', async () => {
        const missing = await rlock(['show', 'x', '--redis-file', join(scratch, 'missing.url')]);
        expect(missing.code).toBe(2);
        expect(missing.stderr).toMatch(/--redis-file: cannot read ".*missing\.url" \(ENOENT\)/);
        const empty = await rlock(['show', 'x', '--redis-file', scratchFile('empty.url', '\n')]);
        expect(empty.code).toBe(2);
        expect(empty.stderr).toMatch(/must hold one line/);
        const twice = await rlock(['show', 'x', '--redis-file', scratchFile(`${user}-3.url`, url), '--redis', fleet.url(0)]);
        expect(twice.code).toBe(2);
        expect(twice.stderr).toMatch(/give one of --redis, --redis-file, --cluster and --sentinels/);
      });
    });

    describe('what it prints from Redis', () => {
      // Each could clear the screen, draw a fake row, reorder a line or hide text on a terminal.
      const names = ['clear:\x1b[2J\x1b[H', 'row:\nNAME  lock  0  -  -  fake', 'bidi:\u202egnp.exe', 'csi:\x9b31m', 'sep:\u2028x', 'del:\x7f', 'tag:\u{e0041}'];

      it('escapes control, bidi and format characters in names, owners and client names: table and JSON', async () => {
        const hostile = createClient({ redis: fleet.url(0), keyPrefix, name: 'api\x1b]0;owned\x07\u202e' });
        hostile.on('error', () => undefined);
        try {
          for (const name of names) await hostile.getLock(name).acquire({ leaseMs: 60_000 });
          const table = await rlock(['ls', ...flags]);
          expect(table.code).toBe(0);
          expect(table.stdout).not.toMatch(UNSAFE_OUTPUT);
          // One row per object: a newline in a name draws no row of its own.
          expect(table.stdout.trim().split('\n')).toHaveLength(1 + names.length);
          expect(table.stdout).toContain('clear:\\x1b[2J\\x1b[H');
          expect(table.stdout).toContain('row:\\x0aNAME');
          expect(table.stdout).toContain('bidi:\\u202egnp.exe');
          expect(table.stdout).toContain('csi:\\x9b31m');
          expect(table.stdout).toContain('tag:\\u{e0041}');
          expect(table.stdout).toContain('api\\x1b]0;owned\\x07\\u202e');
          const json = await rlock(['ls', '--json', ...flags]);
          expect(json.stdout).not.toMatch(UNSAFE_OUTPUT);
          const listed = JSON.parse(json.stdout) as ObjectInfo[];
          expect(listed.map((info) => info.name).sort()).toEqual([...names].sort());
          for (const name of names) {
            const shown = await rlock(['show', name, ...flags]);
            expect(shown.code).toBe(0);
            expect(shown.stdout).not.toMatch(UNSAFE_OUTPUT);
            const shownJson = await rlock(['show', name, '--json', ...flags]);
            expect(shownJson.stdout).not.toMatch(UNSAFE_OUTPUT);
            expect(JSON.parse(shownJson.stdout)).toMatchObject({ name, holders: [{ client: { name: 'api\x1b]0;owned\x07\u202e' } }] });
          }
          const missing = await rlock(['show', 'gone:\x1b[2J\u202e', ...flags]);
          expect(missing.code).toBe(1);
          expect(missing.stderr).not.toMatch(UNSAFE_OUTPUT);
        } finally {
          await hostile.close();
        }
      });
    });

    describe('ls', () => {
      it('lists every object with its kind, as a table and as JSON', async () => {
        await setUp();
        await client.getPermitExpirableSemaphore('spare').trySetPermits(4);
        const human = await rlock(['ls', ...flags]);
        expect(human.code).toBe(0);
        const rows = human.stdout.trim().split('\n');
        expect(rows[0]).toMatch(/^NAME\s+KIND\s+HOLDERS\s+WAITERS\s+TTL\s+DETAIL$/);
        expect(rows).toHaveLength(8);
        expect(human.stdout).toMatch(/order:1\s+lock\s+1\s+-\s+\d+\.\ds\s+owner \S+ count 2/);
        expect(human.stdout).toMatch(/gpu\s+permitExpirableSemaphore\s+1\s+-\s+-\s+permits 1/);
        // Bare integers all three, named by their kind markers.
        expect(human.stdout).toMatch(/quota\s+semaphore\s+0\s+-\s+-\s+permits 3/);
        expect(human.stdout).toMatch(/batch\s+countDownLatch\s+0\s+-\s+-\s+count 2/);
        expect(human.stdout).toMatch(/spare\s+permitExpirableSemaphore\s+0\s+-\s+-\s+permits 4/);
        expect(human.stdout).not.toMatch(/semaphoreOrLatch/);

        const json = await rlock(['ls', 'order:*', '--json', ...flags]);
        expect(json.code).toBe(0);
        const listed = JSON.parse(json.stdout) as ObjectInfo[];
        expect(listed.map((info) => info.name).sort()).toEqual(['order:1', 'order:2']);
        expect(listed.every((info) => info.kind === 'lock')).toBe(true);
      });

      it('lists a non-reentrant lock as its kind, and unlocks it', async () => {
        await client.getNonReentrantLock('job:5').acquire({ leaseMs: 60_000 });
        const listed = await rlock(['ls', 'job:*', ...flags]);
        expect(listed.code).toBe(0);
        expect(listed.stdout).toMatch(/job:5\s+nonReentrantLock\s+1\s+-\s+\d+\.\ds\s+owner \S+ count 1/);
        const unlocked = await rlock(['unlock', 'job:5', '--yes', ...flags]);
        expect(unlocked.stdout).toMatch(/released nonReentrantLock "job:5"/);
        expect(await client.getNonReentrantLock('job:5').isLocked()).toBe(false);
      });

      it('lists a non-reentrant fair lock with a waiter as its kind, and unlocks it, handing it to the waiter', async () => {
        await client.getNonReentrantFairLock('job:6').acquire({ leaseMs: 60_000 });
        const waiter = client.getNonReentrantFairLock('job:6').acquire({ leaseMs: 60_000, waitMs: 20_000 });
        expect(await eventually(async () => (await client.inspect('job:6'))?.kind === 'nonReentrantFairLock', 10_000)).toBe(true);
        const listed = await rlock(['ls', 'job:*', ...flags]);
        expect(listed.code).toBe(0);
        expect(listed.stdout).toMatch(/job:6\s+nonReentrantFairLock\s+1\s+1\s+\d+\.\ds\s+owner \S+ count 1/);
        const unlocked = await rlock(['unlock', 'job:6', '--yes', ...flags]);
        expect(unlocked.stdout).toMatch(/released nonReentrantFairLock "job:6"/);
        await (await waiter).unlock();
        expect(await client.getNonReentrantFairLock('job:6').isLocked()).toBe(false);
      });

      it('stops at --max, and exits 1 when nothing matches', async () => {
        await setUp();
        const bounded = await rlock(['ls', '--max', '2', '--json', ...flags]);
        expect(bounded.code).toBe(0);
        expect(JSON.parse(bounded.stdout)).toHaveLength(2);
        expect(bounded.stderr).toMatch(/stopped at --max 2/);
        const none = await rlock(['ls', 'nothing:*', ...flags]);
        expect(none.code).toBe(1);
        expect(none.stderr).toMatch(/nothing matches "nothing:\*"/);
      });

      it('names the server it asked when nothing matches, however it was chosen', async () => {
        const address = `127.0.0.1:${fleet.port(0)}`;
        const byFlag = await rlock(['ls', ...flags]);
        expect(byFlag.code).toBe(1);
        expect(byFlag.stderr).toContain(`nothing matches "*" under the prefix "${keyPrefix}" on ${address}\n`);
        const byEnv = await rlock(['ls', '--prefix', keyPrefix], { env: { RLOCK_REDIS_URL: fleet.url(0) } });
        expect(byEnv.code).toBe(1);
        expect(byEnv.stderr).toContain(`on ${address}\n`);
        const shown = await rlock(['show', 'missing', ...flags]);
        expect(shown.stderr).toContain(`no object named "missing" under the prefix "${keyPrefix}" on ${address}\n`);
      });
    });

    describe('show', () => {
      it("prints an object's holders with owner, count, token and lease, or JSON", async () => {
        const { token } = await setUp();
        const human = await rlock(['show', 'order:1', ...flags]);
        expect(human.code).toBe(0);
        expect(human.stdout).toMatch(/kind\s+lock/);
        expect(human.stdout).toMatch(new RegExp(`${client.clientId}:\\S+\\s+2\\s+${token}\\s+\\d+\\.\\ds`));
        // Global flags work after the command too.
        const json = await rlock(['show', 'order:1', '--json', ...flags]);
        expect(JSON.parse(json.stdout)).toMatchObject({ kind: 'lock', holders: [{ count: 2, token }] });
        const latch = await rlock(['show', 'batch', '--kind', 'countDownLatch', '--json', ...flags]);
        expect(JSON.parse(latch.stdout)).toMatchObject({ kind: 'countDownLatch', count: 2 });
      });

      it("names the holder's client: its name option, host and pid, in show, ls and JSON", async () => {
        const named = createClient({ redis: fleet.url(0), keyPrefix, name: 'orders-api' });
        named.on('error', () => undefined);
        try {
          await named.getLock('order:7').acquire({ leaseMs: 60_000 });
          const label = `orders-api (${hostname()} pid ${process.pid})`;
          const shown = await rlock(['show', 'order:7', ...flags]);
          expect(shown.stdout).toMatch(/OWNER\s+COUNT\s+TOKEN\s+TTL\s+HELD\s+CLIENT/);
          expect(shown.stdout).toContain(label);
          const listed = await rlock(['ls', 'order:7', ...flags]);
          expect(listed.stdout).toMatch(new RegExp(`owner ${named.clientId}:\\S+ count 1 by ${label.replace(/[()]/g, '\\$&')}`));
          const json = await rlock(['show', 'order:7', '--json', ...flags]);
          expect(JSON.parse(json.stdout)).toMatchObject({ holders: [{ client: { name: 'orders-api', host: hostname(), pid: process.pid } }] });
        } finally {
          await named.close();
        }
      });

      it('exits 1 for an object that does not exist', async () => {
        const run = await rlock(['show', 'missing', ...flags]);
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/no object named "missing"/);
        expect(JSON.parse((await rlock(['show', 'missing', '--json', ...flags])).stdout)).toBeNull();
      });
    });

    describe('unlock', () => {
      it('refuses to act without --yes when stdin is not a terminal (exit 2), then releases with it', async () => {
        await setUp();
        const refused = await rlock(['unlock', 'order:2', ...flags]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(/pass --yes/);
        expect(await client.getLock('order:2').isLocked()).toBe(true);

        const released = await rlock(['unlock', 'order:2', '--yes', ...flags]);
        expect(released.code).toBe(0);
        expect(released.stdout).toMatch(/released lock "order:2"/);
        expect(await client.getLock('order:2').isLocked()).toBe(false);
        const again = await rlock(['unlock', 'order:2', '--yes', '--json', ...flags]);
        expect(again.code).toBe(1);
        expect(JSON.parse(again.stdout)).toMatchObject({ name: 'order:2', released: false });
      });

      it('asks on a terminal, and releases only on yes', async () => {
        await setUp();
        const declined = await rlock(['unlock', 'order:2', ...flags], { tty: true, input: 'n\n' });
        expect(declined.stdout).toMatch(/Force-unlock lock "order:2", held by/);
        expect(declined.code).toBe(1);
        expect(await client.getLock('order:2').isLocked()).toBe(true);
        const accepted = await rlock(['unlock', 'order:2', ...flags], { tty: true, input: 'y\n' });
        expect(accepted.code).toBe(0);
        expect(await client.getLock('order:2').isLocked()).toBe(false);
      });

      it('releases a fair lock and a read-write lock, and wakes the waiter', async () => {
        await setUp();
        await client.getFairLock('payout').acquire({ leaseMs: 60_000 });
        const waiter = client.getFairLock('payout').acquire({ leaseMs: 60_000, waitMs: 20_000 });
        const run = await rlock(['unlock', 'payout', '--yes', ...flags]);
        expect(run.code).toBe(0);
        expect(run.stdout).toMatch(/released fairLock "payout"/);
        await (await waiter).unlock();
        expect((await rlock(['unlock', 'doc', '--yes', ...flags])).code).toBe(0);
        expect(await client.inspect('doc')).toBeUndefined();
      });

      it("ends the holder's hold at once with reason forced, not at its next renewal as expired", async () => {
        // A watchdog lease of 30 s, renewed every 10 s: only the notice explains a loss within 5 s.
        const held = await client.getLock('plain:1').acquire();
        const channel = `${keyPrefix}:client:${client.clientId}`;
        const listening = async () => Number(((await fleet.client(0).pubsub('NUMSUB', channel)) as [string, number])[1]) === 1;
        expect(await eventually(listening, 5_000)).toBe(true);
        const lost = new Promise<string>((resolve) => client.on('lockLost', (event) => resolve(event.reason)));
        const startedAt = performance.now();
        const run = await rlock(['unlock', 'plain:1', '--yes', ...flags]);
        expect(run.code).toBe(0);
        const within = new Promise<string>((resolve) => setTimeout(resolve, 5_000, 'no lockLost within 5 s'));
        expect(await Promise.race([lost, within])).toBe('forced');
        expect(performance.now() - startedAt).toBeLessThan(9_000);
        expect(((held.signal.reason ?? {}) as { reason?: string }).reason).toBe('forced');
      });

      it('exits 1 for what is not a lock', async () => {
        await setUp();
        const run = await rlock(['unlock', 'quota', '--yes', ...flags]);
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/not a lock: nothing released/);
        expect(await client.getSemaphore('quota').availablePermits()).toBe(3);
      });
    });

    describe('release', () => {
      it('releases one permit of a permit-expirable semaphore by its id, and only with --yes when stdin is not a terminal', async () => {
        await setUp();
        const permits = client.getPermitExpirableSemaphore('gpu');
        const held = await permits.acquire({ leaseMs: 60_000 });
        expect(await permits.availablePermits()).toBe(0);
        const refused = await rlock(['release', 'gpu', held.id, ...flags]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(/pass --yes/);
        expect(await permits.availablePermits()).toBe(0);

        const released = await rlock(['release', 'gpu', held.id, '--yes', ...flags]);
        expect(released.code).toBe(0);
        expect(released.stdout).toMatch(new RegExp(`released permit "${held.id}" of "gpu"`));
        expect(await permits.availablePermits()).toBe(1);
        const again = await rlock(['release', 'gpu', held.id, '--yes', '--json', ...flags]);
        expect(again.code).toBe(1);
        expect(JSON.parse(again.stdout)).toMatchObject({ name: 'gpu', permit: held.id, released: false });
        expect(await permits.availablePermits()).toBe(1);
      });

      it('asks on a terminal, and exits 1 for what is not a permit-expirable semaphore', async () => {
        await setUp();
        const permits = client.getPermitExpirableSemaphore('gpu');
        const held = await permits.acquire({ leaseMs: 60_000 });
        const declined = await rlock(['release', 'gpu', held.id, ...flags], { tty: true, input: 'n\n' });
        expect(declined.stdout).toMatch(/Release permit .* of "gpu"\?/);
        expect(declined.code).toBe(1);
        expect(await permits.availablePermits()).toBe(0);
        const notPermits = await rlock(['release', 'quota', 'any-id', '--yes', ...flags]);
        expect(notPermits.code).toBe(1);
        expect(notPermits.stderr).toMatch(/"quota" is a semaphore, not a permit-expirable semaphore: nothing released/);
        expect(await client.getSemaphore('quota').availablePermits()).toBe(3);
      });
    });

    describe('watch', () => {
      it('prints --count frames every --interval, one JSON line each', async () => {
        await setUp();
        const run = await rlock(['watch', 'order:1', '--count', '3', '--interval', '100', '--json', ...flags]);
        expect(run.code).toBe(0);
        const frames = run.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as ObjectInfo);
        expect(frames).toHaveLength(3);
        expect(frames.every((frame) => frame.kind === 'lock')).toBe(true);
        expect(frames[2]!.serverTimeMs - frames[0]!.serverTimeMs).toBeGreaterThanOrEqual(200);
        const human = await rlock(['watch', 'order:1', '--count', '2', '--interval', '50', ...flags]);
        expect(human.code).toBe(0);
        expect(human.stdout.match(/^--- \d{4}-/gm)).toHaveLength(2);
      });
    });

    describe('exit codes', () => {
      it('exits 2 on bad usage', async () => {
        expect((await rlock(['bogus'])).code).toBe(2);
        expect((await rlock(['show'])).code).toBe(2);
        expect((await rlock(['watch', 'x', '--interval', 'soon'])).code).toBe(2);
        expect((await rlock(['show', 'x', '--kind', 'mutex'])).code).toBe(2);
        expect((await rlock(['show', 'a{b}', ...flags])).code).toBe(2);
        expect((await rlock(['show', 'x', '--redis', 'http://127.0.0.1'])).code).toBe(2);
        const portless = await rlock(['show', 'x', '--redis', '127.0.0.1']);
        expect(portless.code).toBe(2);
        expect(portless.stderr).toMatch(/--redis takes a redis:\/\/ or rediss:\/\/ URL or host:port, got "127\.0\.0\.1"/);
        expect((await rlock(['show', 'x', '--sentinels', '127.0.0.1:1'])).code).toBe(2);
        expect((await rlock(['show', 'x', '--cluster', 'redis://127.0.0.1:1', '--redis', fleet.url(0)])).code).toBe(2);
        const help = await rlock(['--help']);
        expect(help.code).toBe(0);
        expect(help.stdout).toMatch(/Exit codes:/);
      });

      it('exits 3 when Redis refuses the connection or does not answer in --timeout', async () => {
        const refusedUrl = fleet.url(1);
        await fleet.kill(1);
        const refused = await rlock(['show', 'x', '--redis', refusedUrl]);
        expect(refused.code).toBe(3);
        expect(refused.stderr).toMatch(/Redis unreachable/);
        expect(refused.stderr).toContain(`127.0.0.1:${fleet.port(1)}`);
        expect(refused.stderr).toContain('ECONNREFUSED');

        await fleet.pause(0);
        try {
          const silent = await rlock(['ls', '--timeout', '300', ...flags]);
          expect(silent.code).toBe(3);
          expect(silent.ms).toBeLessThan(10_000);
        } finally {
          await fleet.resume(0);
        }
      });
    });
  });

  describe('with nothing listening on the port', () => {
    it('exits 3 at once, naming the host:port that refused and the socket error code', async () => {
      const port = await closedPort();
      const startup = await rlock(['--version']);
      for (const command of [['ls'], ['show', 'x'], ['watch', 'x', '--count', '1']]) {
        const run = await rlock([...command, '--redis', `redis://127.0.0.1:${port}`]);
        expect(run.code).toBe(3);
        expect(run.stderr).toBe(`rlock: Redis unreachable at 127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}\n`);
        // It took 2.7 s, 2 of them ioredis waiting for a socket that never opened to close.
        expect(run.ms).toBeLessThan(startup.ms + 1_500);
      }
    });
  });

  describe('on a Cluster (--cluster)', () => {
    let cluster: RedisCluster;

    beforeAll(async () => {
      cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 0 });
    });
    afterAll(() => cluster.stop());

    it('lists objects on every master, shows and unlocks them', async () => {
      const keyPrefix = uniquePrefix();
      const urls = cluster.startupNodes.map(({ host, port }) => `redis://${host}:${port}`);
      const client = createClient({ redis: { cluster: urls }, keyPrefix, name: 'cluster-worker' });
      client.on('error', () => undefined);
      try {
        const names = Array.from({ length: 12 }, (_, i) => `job:${i}`);
        for (const name of names) await client.getLock(name).acquire({ leaseMs: 60_000 });
        const flags = ['--cluster', urls.join(','), '--prefix', keyPrefix];
        const listed = await rlock(['ls', 'job:*', '--json', ...flags]);
        expect(listed.code).toBe(0);
        expect((JSON.parse(listed.stdout) as ObjectInfo[]).map((info) => info.name).sort()).toEqual([...names].sort());
        const shown = await rlock(['show', 'job:3', '--json', ...flags]);
        // The holder's client, found on the master of the lock's slot.
        expect(JSON.parse(shown.stdout)).toMatchObject({ kind: 'lock', holderCount: 1, holders: [{ client: { name: 'cluster-worker', pid: process.pid } }] });
        expect((await rlock(['unlock', 'job:3', '--yes', ...flags])).code).toBe(0);
        expect(await client.getLock('job:3').isLocked()).toBe(false);
        // A startup node's credentials are every node's, and a password on the command line is warned of.
        const user = `cli-${keyPrefix}`;
        await Promise.all(cluster.startupNodes.map((node) => aclSetUser(node.port, user, 'cluster-pa55')));
        const withAuth = cluster.startupNodes.map(({ host, port }) => `redis://${user}:cluster-pa55@${host}:${port}`);
        const authed = await rlock(['ls', 'job:*', '--json', '--cluster', withAuth.join(','), '--prefix', keyPrefix]);
        expect(authed.code).toBe(0);
        expect(JSON.parse(authed.stdout)).toHaveLength(names.length - 1);
        expect(authed.stderr).toMatch(/^rlock: warning: --cluster carries a password/);
        expect(authed.stderr).not.toContain('cluster-pa55');
      } finally {
        await client.close();
      }
    });
  });

  describe('over TLS (--tls-ca, rediss://)', () => {
    let fleet: RedisFleet;
    let tlsPort: number;
    let ca: string;

    beforeAll(async () => {
      // A CA and a certificate it signed for 127.0.0.1, made for this run.
      const dir = mkdtempSync(join(scratch, 'tls-'));
      const file = (name: string): string => join(dir, name);
      const openssl = (...args: string[]): void => void execFileSync('openssl', args, { stdio: 'ignore' });
      const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
      openssl('req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=rlock test CA');
      openssl('req', ...ec, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=127.0.0.1');
      writeFileSync(file('ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
      openssl(
        'x509',
        '-req',
        '-in',
        file('server.csr'),
        '-CA',
        file('ca.pem'),
        '-CAkey',
        file('ca.key'),
        '-CAcreateserial',
        '-out',
        file('server.pem'),
        '-days',
        '2',
        '-extfile',
        file('ext.cnf'),
      );
      ca = file('ca.pem');
      tlsPort = await closedPort();
      fleet = await RedisFleet.start({
        backend: 'process',
        extraArgs: [
          '--tls-port',
          String(tlsPort),
          '--tls-cert-file',
          file('server.pem'),
          '--tls-key-file',
          file('server.key'),
          '--tls-ca-cert-file',
          ca,
          '--tls-auth-clients',
          'no',
        ],
      });
    });
    afterAll(() => fleet.stop());

    it('connects with TLS trusting the CA it is given, and refuses a server it cannot verify', async () => {
      const keyPrefix = uniquePrefix();
      const client = createClient({ redis: fleet.url(0), keyPrefix });
      client.on('error', () => undefined);
      try {
        await client.getLock('order:1').acquire({ leaseMs: 60_000 });
        const show = ['show', 'order:1', '--json', '--prefix', keyPrefix];
        for (const address of [`rediss://127.0.0.1:${tlsPort}`, `127.0.0.1:${tlsPort}`]) {
          const run = await rlock([...show, '--redis', address, '--tls-ca', ca]);
          expect(run.stderr).toBe('');
          expect(run.code).toBe(0);
          expect(JSON.parse(run.stdout)).toMatchObject({ kind: 'lock', holderCount: 1 });
        }
        // rediss:// alone trusts the system's CAs, which did not sign this certificate.
        const unverified = await rlock([...show, '--redis', `rediss://127.0.0.1:${tlsPort}`, '--timeout', '1000']);
        expect(unverified.code).toBe(3);
        const missing = await rlock([...show, '--redis', `rediss://127.0.0.1:${tlsPort}`, '--tls-ca', join(scratch, 'none.pem')]);
        expect(missing.code).toBe(2);
        expect(missing.stderr).toMatch(/--tls-ca: cannot read ".*none\.pem" \(ENOENT\)/);
      } finally {
        await client.close();
      }
    });
  });

  describe('through Sentinel (--sentinels, --name)', () => {
    let group: RedisSentinelGroup;

    beforeAll(async () => {
      group = await RedisSentinelGroup.start({ replicas: 0, sentinels: 1 });
    });
    afterAll(() => group.stop());

    it('finds the master through the Sentinels and shows its objects', async () => {
      const keyPrefix = uniquePrefix();
      const client = createClient({ redis: { sentinels: [...group.sentinels], name: group.masterName }, keyPrefix });
      client.on('error', () => undefined);
      try {
        await client.getLock('report').acquire({ leaseMs: 60_000 });
        const sentinels = group.sentinels.map(({ host, port }) => `${host}:${port}`).join(',');
        const run = await rlock(['show', 'report', '--json', '--sentinels', sentinels, '--name', group.masterName, '--prefix', keyPrefix]);
        expect(run.code).toBe(0);
        expect(JSON.parse(run.stdout)).toMatchObject({ kind: 'lock', holderCount: 1 });
        // Sentinels as URLs, as --redis and --cluster take them.
        const urls = group.sentinels.map(({ host, port }) => `redis://${host}:${port}`).join(',');
        const byUrl = await rlock(['show', 'report', '--json', '--sentinels', urls, '--name', group.masterName, '--prefix', keyPrefix]);
        expect(byUrl.stderr).toBe('');
        expect(JSON.parse(byUrl.stdout)).toMatchObject({ kind: 'lock', holderCount: 1 });
      } finally {
        await client.close();
      }
    });
  });
});
