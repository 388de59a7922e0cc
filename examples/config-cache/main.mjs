// @ts-check
/**
 * Read-write lock: a configuration read by many request handlers and updated
 * now and then by an admin task. Readers share the lock (they overlap), the
 * writer is exclusive (no reader ever sees a half-written update: two keys
 * that must match), and a steady stream of readers does not starve the writer.
 *
 *   npm run build && node examples/config-cache/main.mjs
 *
 * Exit code 0 iff readers overlapped, no reader saw a torn update, and every
 * update got through within its wait.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from '@org/rlock';
import { RedisFleet } from '@org/rlock-testing';

const READERS = 6;
const UPDATES = 5;
const fleet = await RedisFleet.start({ size: 1 });
const keyPrefix = `config-${randomBytes(6).toString('hex')}`;
const app = createClient({ redis: fleet.url(0), keyPrefix });
const admin = createClient({ redis: fleet.url(0), keyPrefix });
const data = fleet.client(0);
const failures = [];
let reading = 0;
let mostReading = 0;
let reads = 0;
let stop = false;
try {
  await data.mset(`${keyPrefix}:config:a`, '0', `${keyPrefix}:config:b`, '0');
  const config = app.getReadWriteLock('config');
  const handlers = Array.from({ length: READERS }, () =>
    app.task(async () => {
      while (!stop) {
        await config.readLock().withLock(
          async () => {
            mostReading = Math.max(mostReading, ++reading);
            const [a, b] = await data.mget(`${keyPrefix}:config:a`, `${keyPrefix}:config:b`);
            if (a !== b) failures.push(`a reader saw a torn update: ${a} / ${b}`);
            reads++;
            await new Promise((resolve) => setTimeout(resolve, 3));
            reading--;
          },
          { leaseMs: 5_000 },
        );
      }
    }),
  );
  for (let version = 1; version <= UPDATES; version++) {
    const started = performance.now();
    await admin
      .getReadWriteLock('config')
      .writeLock()
      .withLock(
        async () => {
          if (reading > 0) failures.push('the writer entered while readers were reading');
          await data.set(`${keyPrefix}:config:a`, String(version));
          await new Promise((resolve) => setTimeout(resolve, 5));
          await data.set(`${keyPrefix}:config:b`, String(version));
        },
        { leaseMs: 5_000, waitMs: 5_000 },
      );
    console.log(`update ${version} in after ${(performance.now() - started).toFixed(1)} ms of readers`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  stop = true;
  await Promise.all(handlers);
  console.log(`${reads} reads, up to ${mostReading} at once`);
  if (mostReading < 2) failures.push('readers never overlapped');
} catch (error) {
  failures.push(String(error));
} finally {
  stop = true;
  await Promise.all([app.close(), admin.close()]);
  await fleet.stop();
}
if (failures.length > 0) {
  console.error(`FAILED: ${failures.slice(0, 5).join('; ')}`);
  process.exit(1);
}
console.log('OK: readers shared the lock, the writer was exclusive and never starved');
