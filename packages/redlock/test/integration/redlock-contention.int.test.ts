import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RedisFleet, overlapOfTasks } from '@org/rlock-testing';
import { RedlockPool, OverlapProbe, lockOnMasters, tick, uniquePrefix } from './support.js';

const WORKER = fileURLToPath(new URL('./fixtures/redlock-worker.mjs', import.meta.url));

function runWorker(env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`worker exited with ${code}: ${stderr}`));
    });
  });
}

describe('Redlock', () => {
  describe('mutual exclusion under contention', () => {
    let fleet: RedisFleet;
    const pool = new RedlockPool();

    beforeAll(async () => {
      fleet = await RedisFleet.start({ size: 6 }); // 5 masters + 1 server for the workers' shared data
    });
    afterEach(() => pool.closeAll());
    afterAll(() => fleet.stop());

    const masters = (): string[] => fleet.urls().slice(0, 5);

    it('never lets 32 tasks of one client overlap on one key over 5 masters', async () => {
      const redlock = pool.make(fleet, { masters: masters() });
      const lock = redlock.getLock('hot');
      const probe = await overlapOfTasks(redlock, lock, 32, 8);
      expect(probe.entries).toBe(32 * 8);
      expect(probe.maxInside).toBe(1);
    });

    it('makes progress without livelock: 4 clients × 8 tasks split votes over 5 masters, and no partial grant is left', async () => {
      const prefix = uniquePrefix();
      const clients = Array.from({ length: 4 }, () => pool.make(fleet, { masters: masters(), keyPrefix: prefix }));
      const probe = new OverlapProbe();
      const started = performance.now();
      await Promise.all(
        clients.flatMap((redlock) =>
          Array.from({ length: 8 }, () =>
            redlock.task(async () => {
              const lock = redlock.getLock('contended');
              for (let i = 0; i < 10; i++) {
                await lock.lock({ leaseMs: 10_000 });
                try {
                  await probe.section(tick);
                } finally {
                  await lock.unlock();
                }
              }
            }),
          ),
        ),
      );
      // 320 acquisitions; node-redlock's split votes stall such a run until the TTLs expire.
      expect(performance.now() - started).toBeLessThan(30_000);
      expect(probe.entries).toBe(320);
      expect(probe.maxInside).toBe(1);
      expect(await lockOnMasters(fleet, `${prefix}:{contended}`, [0, 1, 2, 3, 4])).toEqual([{}, {}, {}, {}, {}]);
    });

    it('never lets tasks of several processes overlap, and the shared counter equals the increments', async () => {
      const prefix = uniquePrefix();
      const workers = 4;
      const tasks = 4;
      const rounds = 15;
      await Promise.all(
        Array.from({ length: workers }, (_, index) =>
          runWorker({
            MASTERS: masters().join(','),
            DATA_URL: fleet.url(5),
            PREFIX: prefix,
            TASKS: String(tasks),
            ROUNDS: String(rounds),
            WORKER: String(index),
          }),
        ),
      );
      const data = fleet.client(5);
      expect(Number(await data.get(`${prefix}:data:counter`))).toBe(workers * tasks * rounds);
      expect(Number((await data.get(`${prefix}:data:overlaps`)) ?? 0)).toBe(0);
      data.disconnect();
    });
  });
});
