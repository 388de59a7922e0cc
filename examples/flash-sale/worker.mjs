// @ts-check
/**
 * One worker process of the flash-sale demo: `TASKS` concurrent buyers, each
 * purchase in its own task (the Node counterpart of a request thread), until the
 * worker has seen every item sold out. Talks to main.mjs over the fork IPC channel:
 * → { type: 'ready' }, ← { type: 'start' }, → { type: 'done', result }.
 */
import { createClient } from '@org/rlock';
import { InventoryService, OrderService, ShopKeys } from './services.mjs';
import { targetFromEnv } from './target.mjs';

/** @typedef {import('./main.mjs').WorkerConfig} WorkerConfig */
/** @typedef {import('./main.mjs').WorkerResult} WorkerResult */

let finished = false;
// Parent gone (crash, timeout kill): nothing left to report to.
process.on('disconnect', () => {
  if (!finished) process.exit(2);
});

/** @type {WorkerConfig} */
const config = JSON.parse(process.env.FLASH_SALE_WORKER ?? 'null');
if (!config) throw new Error('worker.mjs is started by main.mjs');

const target = /** @type {import('./target.mjs').Target} */ (targetFromEnv(config.url));
const client = createClient({ redis: /** @type {any} */ (target.rlock), keyPrefix: config.lockPrefix });
client.on('lockLost', (event) => {
  console.error(`[worker ${config.index}] lock lost: ${event.name} (${event.reason})`);
});
client.on('error', (error) => {
  console.error(`[worker ${config.index}] background error:`, error);
});
const store = target.connect();
const keys = new ShopKeys(config.dataPrefix);
const inventory = new InventoryService(client, store, keys, { unsafe: config.unsafe });
const orders = new OrderService(client, store, keys, inventory, { unsafe: config.unsafe });

/** Items this worker has not yet seen sold out. */
const available = new Set(Array.from({ length: config.items }, (_, i) => i));
/** @type {Record<string, number>} */
const soldPerItem = {};
let sold = 0;
let purchases = 0;

async function buyer() {
  while (available.size > 0) {
    const choices = [...available];
    const itemId = /** @type {number} */ (choices[Math.floor(Math.random() * choices.length)]);
    purchases++;
    const ok = await client.task(() => orders.purchase(itemId));
    if (ok) {
      sold++;
      soldPerItem[itemId] = (soldPerItem[itemId] ?? 0) + 1;
    } else {
      available.delete(itemId);
    }
  }
}

await store.ping();
process.send?.({ type: 'ready' });
await new Promise((resolve) => {
  process.on('message', (/** @type {any} */ message) => {
    if (message?.type === 'start') resolve(undefined);
  });
});

const startedAt = performance.now();
/** @type {string | undefined} */
let error;
try {
  await Promise.all(Array.from({ length: config.tasks }, buyer));
} catch (e) {
  error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}
/** @type {WorkerResult} */
const result = {
  index: config.index,
  sold,
  purchases,
  soldPerItem,
  negativeStockSeen: inventory.negativeStockSeen,
  sellingMs: performance.now() - startedAt,
  error,
};
await client.close();
await store.quit();
finished = true;
process.send?.({ type: 'done', result }, () => process.disconnect());
