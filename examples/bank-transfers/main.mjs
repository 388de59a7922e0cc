// @ts-check
/**
 * Multi-lock: transfers between bank accounts, each transfer locking both of
 * its accounts at once. Tasks pick random pairs in random order (A→B and B→A
 * at the same time): without one global order two transfers would deadlock;
 * the multi-lock takes its members by key, so they never do.
 *
 *   npm run build && node examples/bank-transfers/main.mjs
 *
 * Exit code 0 iff every transfer completed (no deadlock) and the total balance
 * is what it was (no transfer interleaved with another on the same account).
 */
import { randomBytes } from 'node:crypto';
import { createClient } from '@org/rlock';
import { RedisFleet } from '@org/rlock-testing';

const ACCOUNTS = 4;
const TASKS = 8;
const TRANSFERS = 25;
const fleet = await RedisFleet.start({ size: 1 });
const keyPrefix = `bank-${randomBytes(6).toString('hex')}`;
const client = createClient({ redis: fleet.url(0), keyPrefix });
const data = fleet.client(0);
const balance = (account) => `${keyPrefix}:balance:${account}`;
const failures = [];
try {
  for (let account = 0; account < ACCOUNTS; account++) await data.set(balance(account), '1000');
  const started = performance.now();
  await Promise.all(
    Array.from({ length: TASKS }, () =>
      client.task(async () => {
        for (let i = 0; i < TRANSFERS; i++) {
          const from = Math.floor(Math.random() * ACCOUNTS);
          const to = (from + 1 + Math.floor(Math.random() * (ACCOUNTS - 1))) % ACCOUNTS;
          const both = client.getMultiLock([client.getLock(`account:${from}`), client.getLock(`account:${to}`)]);
          await both.withLock(
            async () => {
              // A non-atomic read-modify-write on both accounts: only the locks keep it right.
              const [a, b] = (await data.mget(balance(from), balance(to))).map(Number);
              await new Promise((resolve) => setImmediate(resolve));
              await data.mset(balance(from), String(a - 10), balance(to), String(b + 10));
            },
            { leaseMs: 10_000, waitMs: 20_000 },
          );
        }
      }),
    ),
  );
  const total = (await data.mget(...Array.from({ length: ACCOUNTS }, (_, account) => balance(account)))).reduce((sum, value) => sum + Number(value), 0);
  console.log(`${TASKS * TRANSFERS} transfers in ${(performance.now() - started).toFixed(0)} ms; total balance ${total}`);
  if (total !== ACCOUNTS * 1000) failures.push(`the total balance changed: ${total}`);
} catch (error) {
  failures.push(String(error));
} finally {
  await client.close();
  await fleet.stop();
}
if (failures.length > 0) {
  console.error(`FAILED: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('OK: every transfer went through without deadlock, and no money appeared or vanished');
