// @ts-check
/**
 * A task per request with plain node:http (no framework): `taskMiddleware()`
 * runs each request in its own task, so the order service below can call
 * Java-style `lock()` and `unlock()`. Twenty requests for one order at once
 * each read, wait and write its count back: only mutual exclusion keeps all
 * twenty. Meanwhile an operator's client asks who holds the order's lock
 * and sees the server's client by name, host and pid.
 *
 *   npm run build && node examples/http-orders/main.mjs
 *
 * Exit code 0 iff the count is 20, the operator saw the holder by name, and
 * no request ended still holding the lock.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createClient, taskMiddleware } from '@org/rlock';
import { RedisFleet } from '@org/rlock-testing';

const REQUESTS = 20;
const fleet = await RedisFleet.start({ size: 1 });
const keyPrefix = `orders-${randomBytes(6).toString('hex')}`;
const app = createClient({ redis: fleet.url(0), keyPrefix, name: 'orders-api' });
const ops = createClient({ redis: fleet.url(0), keyPrefix, name: 'ops' });
const data = fleet.client(0);
const failures = [];
const holdersSeen = new Set();
app.on('holdLeaked', ({ name }) => failures.push(`a request ended still holding ${name}`));

/** The order service: Java-style, it needs the request's task. */
async function addItem(orderId) {
  const lock = app.getLock(`order:${orderId}`);
  await lock.lock({ waitMs: 10_000 });
  try {
    const count = Number(await data.get(`${keyPrefix}:items:${orderId}`));
    await new Promise((resolve) => setTimeout(resolve, 5)); // the read-modify-write a lock must cover
    await data.set(`${keyPrefix}:items:${orderId}`, String(count + 1));
  } finally {
    await lock.unlock();
  }
}

const perRequest = taskMiddleware();
const server = createServer((req, res) => {
  perRequest(req, res, () => {
    const orderId = new URL(req.url ?? '/', 'http://orders').searchParams.get('id') ?? '0';
    addItem(orderId).then(
      () => res.end('added'),
      (error) => res.writeHead(503).end(String(error)),
    );
  });
});
try {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  let done = false;
  const watching = (async () => {
    while (!done) {
      const holder = (await ops.inspect('order:7'))?.holders[0];
      if (holder?.client) holdersSeen.add(`${holder.client.name} (${holder.client.host} pid ${holder.client.pid})`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const replies = await Promise.all(Array.from({ length: REQUESTS }, () => fetch(`http://127.0.0.1:${port}/orders?id=7`).then((reply) => reply.text())));
  done = true;
  await watching;
  const count = Number(await data.get(`${keyPrefix}:items:7`));
  console.log(`${REQUESTS} requests: ${replies.filter((reply) => reply === 'added').length} added, count ${count}`);
  console.log(`the operator saw the lock held by: ${[...holdersSeen].join(', ') || 'nobody'}`);
  if (count !== REQUESTS) failures.push(`count ${count}, expected ${REQUESTS}: a request overwrote another's`);
  if (![...holdersSeen].some((seen) => seen.startsWith(`orders-api (`))) failures.push('the operator never saw the holder by name');
} catch (error) {
  failures.push(String(error));
} finally {
  server.close();
  await Promise.all([app.close(), ops.close()]);
  await fleet.stop();
}
if (failures.length > 0) {
  console.error(`FAILED: ${failures.slice(0, 5).join('; ')}`);
  process.exit(1);
}
console.log('OK: one request at a time held the order, each in its own task, and the holder had a name');
