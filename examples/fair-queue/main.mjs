// @ts-check
/**
 * Fair lock: a print queue shared by three services (three clients, each its
 * own connections, as three processes would be). Jobs are submitted one after
 * another across the services while the printer is busy; the fair lock must
 * print them in submission order, whichever service submitted them.
 *
 *   npm run build && node examples/fair-queue/main.mjs
 *
 * Exit code 0 iff the print order equals the submission order and no two jobs
 * printed at once.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from '@org/rlock';
import { RedisFleet } from '@org/rlock-testing';

const JOBS = 12;
const fleet = await RedisFleet.start({ size: 1 });
const keyPrefix = `fair-${randomBytes(6).toString('hex')}`;
const services = ['billing', 'reports', 'labels'].map((name) => ({ name, client: createClient({ redis: fleet.url(0), keyPrefix }) }));
const admin = fleet.client(0);
const failures = [];
try {
  // The printer is busy while the jobs arrive.
  const [first] = services;
  const busy = await first.client.getFairLock('printer').acquire({ leaseMs: 30_000 });
  const printed = [];
  let printing = 0;
  const jobs = [];
  for (let job = 0; job < JOBS; job++) {
    const service = services[job % services.length];
    jobs.push(
      service.client.getFairLock('printer').withLock(
        async () => {
          if (++printing > 1) failures.push(`job ${job} printed while another one was printing`);
          printed.push(job);
          await new Promise((resolve) => setTimeout(resolve, 5));
          printing--;
        },
        { leaseMs: 10_000, waitMs: 30_000 },
      ),
    );
    // Submitted: the job's first try put it in the queue.
    while ((await admin.llen(`${keyPrefix}:{printer}:queue`)) !== job + 1) await new Promise((resolve) => setTimeout(resolve, 5));
    console.log(`submitted job ${job} from ${service.name}`);
  }
  await busy.unlock();
  await Promise.all(jobs);
  console.log(`printed in order: ${printed.join(' ')}`);
  if (printed.join(',') !== Array.from({ length: JOBS }, (_, i) => i).join(',')) failures.push('jobs printed out of submission order');
} finally {
  await Promise.all(services.map(({ client }) => client.close()));
  await fleet.stop();
}
if (failures.length > 0) {
  console.error(`FAILED: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('OK: every job printed alone, in submission order, across three services');
