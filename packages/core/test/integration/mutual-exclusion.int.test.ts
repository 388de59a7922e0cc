import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RedisFleet, overlapOfTasks } from '@org/rlock-testing';
import { ClientPool, OverlapProbe, tick, uniquePrefix } from './support.js';

const WORKER = fileURLToPath(new URL('./fixtures/counter-worker.mjs', import.meta.url));

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

describe('RLock mutual exclusion', () => {
  let fleet: RedisFleet;
  const pool = new ClientPool();

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
  });
  afterEach(() => pool.closeAll());
  afterAll(() => fleet.stop());

  it('never lets 16 concurrent tasks of one process overlap', async () => {
    const client = pool.make(fleet.url(0));
    const lock = client.getLock('tasks');
    const probe = await overlapOfTasks(client, lock, 16, 40);
    expect(probe.entries).toBe(16 * 40);
    expect(probe.maxInside).toBe(1);
  });

  it('never lets concurrent acquire() handles outside any task overlap', async () => {
    const client = pool.make(fleet.url(0));
    const lock = client.getLock('handles');
    const probe = new OverlapProbe();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = 0; i < 25; i++) {
          const handle = await lock.acquire({ leaseMs: 10_000 });
          try {
            await probe.section(tick);
          } finally {
            await handle.unlock();
          }
        }
      }),
    );
    expect(probe.entries).toBe(16 * 25);
    expect(probe.maxInside).toBe(1);
  });

  it('never lets tasks of several processes overlap, and the shared counter equals the increments', async () => {
    const prefix = uniquePrefix();
    const workers = 4;
    const tasks = 4;
    const rounds = 25;
    await Promise.all(
      Array.from({ length: workers }, (_, i) =>
        runWorker({ REDIS_URL: fleet.url(0), PREFIX: prefix, TASKS: String(tasks), ROUNDS: String(rounds), WORKER: String(i) }),
      ),
    );
    const redis = fleet.client(0);
    expect(Number(await redis.get(`${prefix}:data:counter`))).toBe(workers * tasks * rounds);
    expect(Number((await redis.get(`${prefix}:data:overlaps`)) ?? 0)).toBe(0);
  });
});
