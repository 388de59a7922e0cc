import { Redis } from 'ioredis';
import { FaultProxy, RedisFleet, eventually } from '../../src/index.js';

describe('FaultProxy', () => {
  let fleet: RedisFleet;
  let proxy: FaultProxy;
  let direct: Redis;
  let proxied: Redis;

  beforeAll(async () => {
    fleet = await RedisFleet.start({ size: 1 });
    direct = fleet.client(0);
  });
  beforeEach(async () => {
    proxy = await FaultProxy.start({ port: fleet.port(0) });
    proxied = new Redis(proxy.url, { retryStrategy: () => 50 });
    proxied.on('error', () => undefined);
    await proxied.ping();
  });
  afterEach(async () => {
    proxied.disconnect();
    await proxy.stop();
  });
  afterAll(async () => {
    direct.disconnect();
    await fleet.stop();
  });

  it('passes commands both ways by default', async () => {
    await proxied.set('fp:pass', 'v');
    expect(await direct.get('fp:pass')).toBe('v');
  });

  it("holds back a cut-off client's commands while a direct client is served, and delivers them in order on heal", async () => {
    proxy.blackhole();
    const writes = Promise.all([proxied.set('fp:cut', '1'), proxied.set('fp:cut', '2')]);
    for (let i = 0; i < 5; i++) {
      expect(await direct.get('fp:cut')).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    proxy.heal();
    await expect(writes).resolves.toEqual(['OK', 'OK']);
    expect(await direct.get('fp:cut')).toBe('2');
  });

  it('mutes the server: commands run, their replies are held until heal, then arrive in order', async () => {
    proxy.mute();
    let answered = false;
    const writes = Promise.all([proxied.incr('fp:mute'), proxied.incr('fp:mute')]).then((replies) => {
      answered = true;
      return replies;
    });
    // Both ran: the server counted them while the client heard nothing.
    expect(await eventually(async () => (await direct.get('fp:mute')) === '2', 5_000)).toBe(true);
    expect(answered).toBe(false);
    proxy.heal();
    await expect(writes).resolves.toEqual([1, 2]);
  });

  it('delays every chunk both ways, in order', async () => {
    proxy.delay(60);
    const started = performance.now();
    const replies = await Promise.all([proxied.incr('fp:slow'), proxied.incr('fp:slow'), proxied.incr('fp:slow')]);
    // A request and its reply each waited 60 ms.
    expect(performance.now() - started).toBeGreaterThanOrEqual(119);
    expect(replies).toEqual([1, 2, 3]);
    proxy.heal();
    expect(await proxied.incr('fp:slow')).toBe(4);
  });

  it('resets open connections; the client reconnects through it, and a direct client never notices', async () => {
    const errors: string[] = [];
    proxied.on('error', (error: Error & { code?: string }) => errors.push(error.code ?? error.message));
    const reconnected = new Promise((resolve) => proxied.once('reconnecting', resolve));
    proxy.reset();
    await reconnected;
    expect(errors).toContain('ECONNRESET');
    expect(await proxied.ping()).toBe('PONG');
    expect(await direct.ping()).toBe('PONG');
  });
});
