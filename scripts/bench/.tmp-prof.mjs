import net from 'node:net';
import { Redis } from 'ioredis';
import { createClient } from '@org/rlock';
let writes = 0, bytes = 0; const orig = net.Socket.prototype.write;
net.Socket.prototype.write = function (d, ...a) { writes++; bytes += d.length; return orig.call(this, d, ...a); };
const url = 'redis://127.0.0.1:6461';
async function go(name, setup) {
  const { pair, wrap, close } = await setup();
  const end = performance.now() + 2000; let n = 0;
  await Promise.all(Array.from({ length: 64 }, (_, i) => wrap(async () => { while (performance.now() < end) { await pair(i); n++; } })));
  const w0 = writes, b0 = bytes, c0 = process.cpuUsage();
  const end2 = performance.now() + 2000; let m = 0;
  await Promise.all(Array.from({ length: 64 }, (_, i) => wrap(async () => { while (performance.now() < end2) { await pair(i); m++; } })));
  const c = process.cpuUsage(c0);
  console.log(name, 'pairs/s', m / 2, 'writes/pair', ((writes - w0) / m).toFixed(3), 'bytes/pair', ((bytes - b0) / m).toFixed(0), 'cpu us/pair', ((c.user + c.system) / m).toFixed(1));
  await close();
}
await go('raw', async () => {
  const r = new Redis(url, { enableAutoPipelining: true });
  const sha = await r.script('LOAD', "if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) end return 0");
  let s = 0;
  return { wrap: (f) => f(), pair: async (i) => { const t = 'tok' + s++; await r.set('raw:' + i, t, 'PX', 30000, 'NX'); await r.evalsha(sha, 1, 'raw:' + i, t); }, close: () => r.quit() };
});
await go('rlock', async () => {
  const client = createClient({ redis: url, keyPrefix: 'p' });
  const locks = Array.from({ length: 64 }, (_, i) => client.getLock(`s1:${i}`));
  return { wrap: (f) => client.task(f), pair: async (i) => { await locks[i].lock({ leaseMs: 30000 }); await locks[i].unlock(); }, close: () => client.close() };
});
