import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisFleet } from '@org/rlock-testing';

// Every server here is started by the test itself: never the machine's 6379.

/** Polls `check` until it returns true; fails after `timeoutMs`. */
async function pollUntil(check: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (performance.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await delay(20);
  }
}

/** 'refused' when nothing listens on the port, 'open' when a TCP connection is accepted. */
function tcpState(port: number): Promise<'open' | 'refused'> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('open');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.destroy();
      if (error.code === 'ECONNREFUSED') resolve('refused');
      else reject(error);
    });
  });
}

/** Whether this process can listen on `port` itself (the port is free). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1' }, () => server.close(() => resolve(true)));
  });
}

/** One PING on a fresh connection that neither retries nor reconnects. */
async function pingOnce(port: number, timeoutMs = 1_000): Promise<string> {
  const redis = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await redis.ping();
  } finally {
    redis.disconnect();
  }
}

/** A fleet client that fails fast instead of waiting: for paused or sleeping servers. */
function impatientClient(fleet: RedisFleet, i: number, commandTimeout: number): Redis {
  const redis = fleet.client(i, { commandTimeout, maxRetriesPerRequest: 0 });
  redis.on('error', () => undefined);
  return redis;
}

describe('RedisFleet', () => {
  describe('start', () => {
    it('starts three servers that each answer PING on their own port', async () => {
      await using fleet = await RedisFleet.start({ size: 3 });
      expect(fleet.size).toBe(3);
      expect(fleet.backend).toBe('process');
      const ports = [0, 1, 2].map((i) => fleet.port(i));
      expect(new Set(ports).size).toBe(3);
      expect(ports).not.toContain(6379);
      expect(fleet.urls()).toEqual(ports.map((port) => `redis://127.0.0.1:${port}`));
      expect(fleet.url()).toBe(fleet.url(0));
      for (const [i, port] of ports.entries()) {
        const redis = fleet.client(i);
        expect(await redis.ping()).toBe('PONG');
        expect(await redis.config('GET', 'port')).toEqual(['port', String(port)]);
        expect(fleet.isRunning(i)).toBe(true);
      }
    });

    it('starts servers as independent masters with empty data', async () => {
      await using fleet = await RedisFleet.start({ size: 2 });
      await fleet.client(0).set('only-on-0', '1');
      expect(await fleet.client(1).get('only-on-0')).toBeNull();
      expect(await fleet.client(0).info('replication')).toContain('role:master');
      expect(await fleet.client(1).dbsize()).toBe(0);
    });

    it('runs servers without RDB snapshots and with the given appendonly settings', async () => {
      await using fleet = await RedisFleet.start({ appendonly: true, appendfsync: 'always' });
      const redis = fleet.client();
      expect(await redis.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
      expect(await redis.config('GET', 'appendfsync')).toEqual(['appendfsync', 'always']);
      await using plain = await RedisFleet.start();
      expect(await plain.client().config('GET', 'save')).toEqual(['save', '']);
      expect(await plain.client().config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
    });

    it('passes extraArgs to redis-server', async () => {
      await using fleet = await RedisFleet.start({ extraArgs: ['--maxmemory', '10mb'] });
      expect(await fleet.client().config('GET', 'maxmemory')).toEqual(['maxmemory', String(10 * 1024 * 1024)]);
    });

    it('rejects bad options before starting anything', async () => {
      await expect(RedisFleet.start({ size: 0 })).rejects.toThrow(RangeError);
      await expect(RedisFleet.start({ size: 1.5 })).rejects.toThrow(/size/);
      await expect(RedisFleet.start({ appendfsync: 'sometimes' as never })).rejects.toThrow(/appendfsync/);
      await expect(RedisFleet.start({ backend: 'vm' as never })).rejects.toThrow(/backend/);
      await expect(RedisFleet.start({ extraArgs: [42 as never] })).rejects.toThrow(/extraArgs/);
    });

    it('names REDIS_SERVER when the redis-server binary cannot be run', async () => {
      await expect(RedisFleet.start({ backend: 'process', redisServerPath: '/nonexistent/redis-server' })).rejects.toThrow(/REDIS_SERVER/);
    });

    it('fails with the log tail when redis-server refuses its arguments', async () => {
      await expect(RedisFleet.start({ extraArgs: ['--no-such-directive', 'x'] })).rejects.toThrow(/no-such-directive/);
    });

    it('rejects a server index outside the fleet', async () => {
      await using fleet = await RedisFleet.start({ size: 2 });
      expect(() => fleet.url(2)).toThrow(RangeError);
      expect(() => fleet.port(-1)).toThrow(RangeError);
      expect(() => fleet.isRunning(0.5)).toThrow(RangeError);
      await expect(fleet.kill(5)).rejects.toThrow(RangeError);
    });
  });

  describe('kill', () => {
    it('makes connections to the killed server fail and leaves the others up', async () => {
      await using fleet = await RedisFleet.start({ size: 2 });
      await fleet.kill(0);
      expect(fleet.isRunning(0)).toBe(false);
      expect(await tcpState(fleet.port(0))).toBe('refused');
      await expect(pingOnce(fleet.port(0))).rejects.toThrow();
      expect(fleet.isRunning(1)).toBe(true);
      expect(await pingOnce(fleet.port(1))).toBe('PONG');
    });

    it('shuts the server down with SIGTERM when asked', async () => {
      await using fleet = await RedisFleet.start();
      await fleet.kill(0, 'SIGTERM');
      expect(fleet.isRunning(0)).toBe(false);
      expect(await tcpState(fleet.port(0))).toBe('refused');
    });

    it('kills a paused server', async () => {
      await using fleet = await RedisFleet.start();
      await fleet.pause(0);
      await fleet.kill(0);
      expect(fleet.isRunning(0)).toBe(false);
      expect(await tcpState(fleet.port(0))).toBe('refused');
    });

    it('resolves at once for a server that is not running', async () => {
      await using fleet = await RedisFleet.start();
      await fleet.kill(0);
      await expect(fleet.kill(0)).resolves.toBeUndefined();
    });
  });

  describe('restart', () => {
    it('answers again on the same port', async () => {
      await using fleet = await RedisFleet.start({ size: 2 });
      const port = fleet.port(1);
      await fleet.kill(1);
      await fleet.restart(1);
      expect(fleet.port(1)).toBe(port);
      expect(fleet.isRunning(1)).toBe(true);
      expect(await pingOnce(port)).toBe('PONG');
    });

    it('keeps data written before a kill when appendonly is on', async () => {
      await using fleet = await RedisFleet.start({ appendonly: true, appendfsync: 'always' });
      const before = fleet.client(0);
      before.on('error', () => undefined);
      await before.set('survivor', 'still here');
      await fleet.kill(0, 'SIGKILL');
      await fleet.restart(0);
      expect(await fleet.client(0).get('survivor')).toBe('still here');
    });

    it('starts empty after a kill when appendonly is off', async () => {
      await using fleet = await RedisFleet.start();
      const before = fleet.client(0);
      before.on('error', () => undefined);
      await before.set('gone', 'soon');
      await fleet.kill(0);
      await fleet.restart(0);
      expect(await fleet.client(0).get('gone')).toBeNull();
    });

    it('crash-restarts a server that is still running', async () => {
      await using fleet = await RedisFleet.start();
      const before = impatientClient(fleet, 0, 1_000);
      const firstPid = processId(await before.info('server'));
      await fleet.restart(0);
      expect(fleet.isRunning(0)).toBe(true);
      expect(processId(await fleet.client(0).info('server'))).not.toBe(firstPid);
    });
  });

  describe('pause', () => {
    it('leaves commands unanswered until resume', async () => {
      await using fleet = await RedisFleet.start();
      const redis = impatientClient(fleet, 0, 200);
      expect(await redis.ping()).toBe('PONG');
      await fleet.pause(0);
      expect(fleet.isRunning(0)).toBe(true);
      await expect(redis.ping()).rejects.toThrow(/timed out/i);
      await fleet.resume(0);
      await pollUntil(async () => (await redis.ping()) === 'PONG', 'the resumed server answers');
    });
  });

  describe('clientPause', () => {
    it('holds commands of every client until the pause ends', async () => {
      await using fleet = await RedisFleet.start();
      const redis = impatientClient(fleet, 0, 200);
      expect(await redis.ping()).toBe('PONG');
      await fleet.clientPause(0, 1_000);
      await expect(redis.ping()).rejects.toThrow(/timed out/i);
      await pollUntil(async () => (await redis.ping()) === 'PONG', 'the client pause ends');
    });
  });

  describe('debugSleep', () => {
    it('blocks the server: a command sent after it resolves waits for the sleep', async () => {
      await using fleet = await RedisFleet.start();
      const redis = impatientClient(fleet, 0, 300);
      expect(await redis.ping()).toBe('PONG');
      await fleet.debugSleep(0, 1);
      await expect(redis.ping()).rejects.toThrow(/timed out/i);
      await pollUntil(async () => (await redis.ping()) === 'PONG', 'the sleep ends');
    });
  });

  describe('stop', () => {
    it('is idempotent and frees the ports', async () => {
      const fleet = await RedisFleet.start({ size: 2 });
      const ports = [fleet.port(0), fleet.port(1)];
      await fleet.stop();
      await fleet.stop();
      expect(fleet.stop()).toBe(fleet.stop());
      for (const [i, port] of ports.entries()) {
        expect(fleet.isRunning(i)).toBe(false);
        expect(await tcpState(port)).toBe('refused');
        expect(await canListen(port)).toBe(true);
      }
    });

    it('disconnects the clients it made and refuses new work', async () => {
      const fleet = await RedisFleet.start();
      const redis = fleet.client();
      await redis.ping();
      await fleet.stop();
      expect(redis.status).toBe('end');
      expect(() => fleet.client()).toThrow(/stopped/);
      await expect(fleet.restart(0)).rejects.toThrow(/stopped/);
    });

    it('removes the data directories', async () => {
      const fleet = await RedisFleet.start({ size: 2, appendonly: true });
      const dirs = await Promise.all([0, 1].map(async (i) => ((await fleet.client(i).config('GET', 'dir')) as [string, string])[1]));
      expect(dirs.every((dir) => existsSync(dir))).toBe(true);
      await fleet.stop();
      expect(dirs.some((dir) => existsSync(dir))).toBe(false);
    });

    it('runs at the end of an await using block', async () => {
      let port = 0;
      {
        await using fleet = await RedisFleet.start();
        port = fleet.port();
        expect(await tcpState(port)).toBe('open');
      }
      expect(await tcpState(port)).toBe('refused');
    });

    it('stops a paused server and one in a DEBUG SLEEP', async () => {
      const fleet = await RedisFleet.start({ size: 2 });
      const ports = [fleet.port(0), fleet.port(1)];
      await fleet.pause(0);
      await fleet.debugSleep(1, 30);
      await fleet.stop();
      for (const port of ports) expect(await tcpState(port)).toBe('refused');
    });
  });

  describe('teardown when the owning process dies', () => {
    // The child runs the built package (npm test builds first), like users do.
    const distEntry = {
      esm: fileURLToPath(new URL('../../dist/esm/index.js', import.meta.url)),
      cjs: fileURLToPath(new URL('../../dist/cjs/index.js', import.meta.url)),
    };
    const childSource = {
      esm: `const { RedisFleet } = await import(process.argv[1]);`,
      cjs: `const { RedisFleet } = require(process.argv[1]);`,
    };

    /** Starts a child that starts a 2-server fleet and then does `ending`; returns ports and dirs. */
    async function startChild(format: 'esm' | 'cjs', ending: 'hang' | 'exit') {
      if (!existsSync(distEntry[format])) {
        throw new Error(`${distEntry[format]} is missing: run \`npm run build\` first`);
      }
      const body = `
        const fleet = await RedisFleet.start({ size: 2 });
        const dirs = [];
        for (let i = 0; i < fleet.size; i += 1) dirs.push((await fleet.client(i).config('GET', 'dir'))[1]);
        process.stdout.write(JSON.stringify({ ports: [fleet.port(0), fleet.port(1)], dirs }) + '\\n');
        ${ending === 'exit' ? 'process.exit(0);' : 'setInterval(() => {}, 1_000);'}`;
      const source = format === 'esm' ? `${childSource.esm}\n${body}` : `${childSource.cjs}\n(async () => {${body}\n})();`;
      const child = spawn(process.execPath, [...(format === 'esm' ? ['--input-type=module'] : []), '-e', source, distEntry[format]], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await pollUntil(async () => stdout.includes('\n') || child.exitCode !== null, 'the child printed its fleet', 20_000);
      if (!stdout.includes('\n')) throw new Error(`the child failed: ${stderr}`);
      const { ports, dirs } = JSON.parse(stdout.slice(0, stdout.indexOf('\n'))) as { ports: number[]; dirs: string[] };
      return { child, exited, ports, dirs };
    }

    async function expectTornDown(ports: number[], dirs: string[]): Promise<void> {
      for (const port of ports) {
        await pollUntil(async () => (await tcpState(port)) === 'refused', `port ${port} stops answering`, 10_000);
      }
      await pollUntil(async () => dirs.every((dir) => !existsSync(dir)), 'the data directories are removed', 10_000);
    }

    it.each(['esm', 'cjs'] as const)('kills the servers when the process is SIGKILLed (%s build)', async (format) => {
      const { child, exited, ports, dirs } = await startChild(format, 'hang');
      try {
        for (const port of ports) expect(await pingOnce(port)).toBe('PONG');
        child.kill('SIGKILL');
        await exited;
        await expectTornDown(ports, dirs);
      } finally {
        child.kill('SIGKILL');
      }
    });

    it('kills the servers when the process exits without stop()', async () => {
      const { child, exited, ports, dirs } = await startChild('esm', 'exit');
      try {
        await exited;
        await expectTornDown(ports, dirs);
      } finally {
        child.kill('SIGKILL');
      }
    });
  });
});

function processId(info: string): string | undefined {
  return /^process_id:(\d+)/m.exec(info)?.[1];
}
