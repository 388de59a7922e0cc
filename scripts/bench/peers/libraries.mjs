// @ts-check
/**
 * The libraries measured beside rlock, each behind one small "driver" so every
 * scenario runs them the same way. A driver is what one process of a user's
 * application holds: one client (one connection, unless the library makes its
 * own), from which each task takes a `holder` for a key and calls
 * `lock()` / `unlock()` on it, as the library's README shows.
 *
 * Peers are dev dependencies of the bench only (scripts/bench/package.json),
 * imported lazily: a peer that is not installed, or does not load, is reported
 * as such by the scenario instead of failing the run.
 *
 * Settings changed from each library's defaults, and why (the README's table):
 * - redis-semaphore: `acquireTimeout` 1 h (default 10 s), so a waiter never
 *   gives up inside a run; `lockTimeout` = the lease.
 * - redlock (node-redlock) 5.0.0-beta.2 and @sesamecare-oss/redlock:
 *   `retryCount: -1` (default 10 retries), i.e. retry forever.
 * - redlock-universal: `retryAttempts` Number.MAX_SAFE_INTEGER (default 3; it
 *   takes no Infinity or -1), i.e. unbounded.
 * - node-redisson: none (`lock(lease, MILLISECONDS)` waits forever).
 * - rlock: none (`lock({ leaseMs })` waits forever).
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';

export const COMPARE_AND_DELETE = "if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) end return 0";
const HOUR_MS = 3_600_000;

/**
 * @typedef {object} Holder one task's handle on one lock name
 * @property {() => Promise<void>} lock waits until held (throws only on a failure)
 * @property {() => Promise<void>} unlock throws if the release did not succeed
 */

/**
 * @typedef {object} Driver one client of one library in one process
 * @property {(key: string) => Holder} holder
 * @property {<T>(body: () => Promise<T>) => Promise<T>} task runs one task's loop (rlock: inside `client.task`)
 * @property {() => Promise<void>} close
 */

/**
 * @typedef {object} SingleOptions
 * @property {string} url the one Redis server
 * @property {number} leaseMs
 * @property {string} keyPrefix under which the library keeps keys of its own (rlock's prefix)
 */

/**
 * @typedef {object} RedlockOptions
 * @property {string[]} urls independent masters
 * @property {number} leaseMs
 * @property {string} keyPrefix
 */

/**
 * @typedef {object} Library
 * @property {string} id short, stable: used in IPC and logs
 * @property {string} name as printed in the tables
 * @property {'raw' | 'rlock' | 'peer'} kind raw rows are baselines; "best peer" is the best row of kind peer
 * @property {string | undefined} pkg npm package it comes from (undefined: hand-written)
 * @property {string} driven how the bench calls it, and the settings changed from the library's defaults
 * @property {string} [note] printed under the table (e.g. a raw variant that is not the baseline)
 * @property {(options: SingleOptions) => Promise<Driver>} [single] one Redis server; undefined: not offered
 * @property {(options: RedlockOptions) => Promise<Driver>} [redlock] N masters; undefined: not offered
 */

/** @param {string} url */
function hostPort(url) {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || 6379) };
}

/** @template T @param {() => Promise<T>} body */
const plainTask = (body) => body();

const tokenBase = () => `${process.pid}-${Math.random().toString(36).slice(2)}-`;

/**
 * The hand-written lock: `SET k token NX PX ttl`, retried at once while taken,
 * `EVALSHA` compare-and-delete, on one ioredis connection.
 * @param {boolean} autoPipelining
 * @returns {(options: SingleOptions) => Promise<Driver>}
 */
const rawSingle =
  (autoPipelining) =>
  async ({ url, leaseMs }) => {
    const redis = new Redis(url, { enableAutoPipelining: autoPipelining });
    const sha = /** @type {string} */ (await redis.script('LOAD', COMPARE_AND_DELETE));
    const base = tokenBase();
    let sequence = 0;
    return {
      holder(key) {
        let token = '';
        return {
          async lock() {
            token = base + sequence++;
            while ((await redis.set(key, token, 'PX', leaseMs, 'NX')) !== 'OK');
          },
          async unlock() {
            if ((await redis.evalsha(sha, 1, key, token)) !== 1) throw new Error('raw: compare-and-delete found another token');
          },
        };
      },
      task: plainTask,
      close: async () => void (await redis.quit()),
    };
  };

/**
 * Hand-written Redlock: `SET NX PX` on every master at once; held when a
 * majority said OK within the lease (less drift); otherwise delete what was
 * granted and try again at once. Release: compare-and-delete on every master.
 * @param {RedlockOptions} options
 * @returns {Promise<Driver>}
 */
async function rawRedlock({ urls, leaseMs }) {
  const masters = urls.map((url) => new Redis(url));
  const shas = await Promise.all(masters.map((m) => /** @type {Promise<string>} */ (m.script('LOAD', COMPARE_AND_DELETE))));
  const quorum = Math.floor(masters.length / 2) + 1;
  const base = tokenBase();
  let sequence = 0;
  /** @param {string} key @param {string} token */
  const releaseAll = (key, token) => Promise.all(masters.map((m, i) => m.evalsha(/** @type {string} */ (shas[i]), 1, key, token).catch(() => 0)));
  return {
    holder(key) {
      let token = '';
      return {
        async lock() {
          for (;;) {
            token = base + sequence++;
            const started = Date.now();
            const votes = await Promise.all(masters.map((m) => m.set(key, token, 'PX', leaseMs, 'NX').catch(() => null)));
            const granted = votes.filter((v) => v === 'OK').length;
            if (granted >= quorum && Date.now() - started < leaseMs - (leaseMs * 0.01 + 2)) return;
            await releaseAll(key, token);
          }
        },
        async unlock() {
          const deleted = (await releaseAll(key, token)).filter((d) => d === 1).length;
          if (deleted < quorum) throw new Error(`raw redlock: released on ${deleted} of ${masters.length} masters`);
        },
      };
    },
    task: plainTask,
    close: async () => void (await Promise.all(masters.map((m) => m.quit()))),
  };
}

/** @type {Library[]} */
const ALL_LIBRARIES = [
  {
    id: 'raw',
    driven:
      '`SET k token NX PX ttl` retried at once while taken / `EVALSHA` compare-and-delete; one ioredis connection without auto-pipelining; Redlock (S3): the same on every master at once, held on a majority',
    name: 'raw SET NX PX + EVALSHA (no auto-pipelining)',
    kind: 'raw',
    pkg: undefined,
    single: rawSingle(false),
    redlock: rawRedlock,
  },
  {
    id: 'raw-ap',
    driven: 'as raw, on an ioredis connection with `enableAutoPipelining: true` (S1 only)',
    name: 'raw, auto-pipelined connection',
    kind: 'raw',
    pkg: undefined,
    note:
      'the same hand-written lock on a connection with `enableAutoPipelining` (what the bench used as its raw baseline before): ' +
      'not what users write by default, so it is shown but is not the "× raw" baseline',
    single: rawSingle(true),
  },
  rlockLibrary('rlock', 'rlock', () => import('@org/rlock')),
  rlockLibrary('rlock-fair', 'rlock fair lock', () => import('@org/rlock'), 'getFairLock'),
  {
    id: 'redis-semaphore',
    driven:
      '`new Mutex(redis, key, { lockTimeout: lease, acquireTimeout: 3600000 }).acquire()` / `.release()` (one Mutex per acquisition; `RedlockMutex(masters, …)` in S3); changed: `acquireTimeout` 1 h (default 10 s) so a waiter never gives up inside a run',
    name: 'redis-semaphore Mutex',
    kind: 'peer',
    pkg: 'redis-semaphore',
    async single({ url, leaseMs }) {
      const { Mutex } = await import('redis-semaphore');
      const redis = new Redis(url);
      return {
        holder(key) {
          /** @type {InstanceType<typeof Mutex> | undefined} */
          let mutex;
          return {
            async lock() {
              // One Mutex per acquisition, as its README shows.
              mutex = new Mutex(redis, key, { lockTimeout: leaseMs, acquireTimeout: HOUR_MS });
              await mutex.acquire();
            },
            unlock: async () => void (await mutex?.release()),
          };
        },
        task: plainTask,
        close: async () => void (await redis.quit()),
      };
    },
    async redlock({ urls, leaseMs }) {
      const { RedlockMutex } = await import('redis-semaphore');
      const masters = urls.map((url) => new Redis(url));
      return {
        holder(key) {
          /** @type {InstanceType<typeof RedlockMutex> | undefined} */
          let mutex;
          return {
            async lock() {
              mutex = new RedlockMutex(masters, key, { lockTimeout: leaseMs, acquireTimeout: HOUR_MS });
              await mutex.acquire();
            },
            unlock: async () => void (await mutex?.release()),
          };
        },
        task: plainTask,
        close: async () => void (await Promise.all(masters.map((m) => m.quit()))),
      };
    },
  },
  {
    id: 'node-redlock',
    driven:
      '`new Redlock([redis], { retryCount: -1 })`, `acquire([key], lease)` / `lock.release()`; changed: `retryCount: -1` (default 10) to wait forever; `retryDelay` 200 ms and `retryJitter` 100 ms left at their defaults',
    name: 'redlock (node-redlock)',
    kind: 'peer',
    pkg: 'redlock',
    single: ({ url, leaseMs }) => nodeRedlockDriver('redlock', [url], leaseMs),
    redlock: ({ urls, leaseMs }) => nodeRedlockDriver('redlock', urls, leaseMs),
  },
  {
    id: 'sesame-redlock',
    driven: 'as node-redlock (`new Redlock(clients, { retryCount: -1 })`); `retryDelay` 200 ms and `retryJitter` 100 ms left at their defaults',
    name: '@sesamecare-oss/redlock',
    kind: 'peer',
    pkg: '@sesamecare-oss/redlock',
    single: ({ url, leaseMs }) => nodeRedlockDriver('@sesamecare-oss/redlock', [url], leaseMs),
    redlock: ({ urls, leaseMs }) => nodeRedlockDriver('@sesamecare-oss/redlock', urls, leaseMs),
  },
  {
    id: 'node-redisson',
    driven:
      '`new Redisson({ redis: { options } })`, `getLock(key).lock(lease, TimeUnit.MILLISECONDS)` / `.unlock()`, one RLock object per task (its holder id); no setting changed (waits on pub/sub); it makes its own two connections; no Redlock',
    name: 'node-redisson',
    kind: 'peer',
    pkg: 'node-redisson',
    async single({ url, leaseMs }) {
      const { Redisson, TimeUnit } = await import('node-redisson');
      const redisson = new Redisson({ redis: { options: hostPort(url) } });
      return {
        holder(key) {
          // One RLock object per task: its clientId is the holder's identity.
          const lock = redisson.getLock(key);
          return { lock: () => lock.lock(leaseMs, TimeUnit.MILLISECONDS), unlock: () => lock.unlock() };
        },
        task: plainTask,
        close: () => redisson.quit(),
      };
    },
  },
  {
    id: 'redlock-universal',
    driven:
      '`createLock({ adapter: new IoredisAdapter(redis), key, ttl: lease })`, `acquire()` / `release(handle)`; `createRedlock({ adapters })` over the 5 masters in S3; changed: `retryAttempts` Number.MAX_SAFE_INTEGER (default 3; it accepts no -1 or Infinity); `retryDelay` 100 ms left (S3: 200 ms); declares Node ≥ 22 but runs on 20',
    name: 'redlock-universal',
    kind: 'peer',
    pkg: 'redlock-universal',
    async single({ url, leaseMs }) {
      const { createLock, IoredisAdapter } = await import('redlock-universal');
      const redis = new Redis(url);
      const adapter = new IoredisAdapter(redis);
      return {
        holder(key) {
          const lock = createLock({ adapter, key, ttl: leaseMs, retryAttempts: Number.MAX_SAFE_INTEGER });
          /** @type {Awaited<ReturnType<typeof lock.acquire>> | undefined} */
          let handle;
          return {
            lock: async () => void (handle = await lock.acquire()),
            async unlock() {
              if (!handle || !(await lock.release(handle))) throw new Error('redlock-universal: release found the lock gone');
            },
          };
        },
        task: plainTask,
        close: async () => void (await redis.quit()),
      };
    },
    async redlock({ urls, leaseMs }) {
      const { createRedlock, IoredisAdapter } = await import('redlock-universal');
      const masters = urls.map((url) => new Redis(url));
      const adapters = masters.map((m) => new IoredisAdapter(m));
      return {
        holder(key) {
          const lock = createRedlock({ adapters, key, ttl: leaseMs, retryAttempts: Number.MAX_SAFE_INTEGER });
          /** @type {Awaited<ReturnType<typeof lock.acquire>> | undefined} */
          let handle;
          return {
            lock: async () => void (handle = await lock.acquire()),
            async unlock() {
              if (!handle || !(await lock.release(handle))) throw new Error('redlock-universal: release found the lock gone');
            },
          };
        },
        task: plainTask,
        close: async () => void (await Promise.all(masters.map((m) => m.quit()))),
      };
    },
  },
];

/**
 * node-redlock and its fork share one API: `new Redlock(clients, settings)`,
 * `acquire([key], ttl)`, `lock.release()`.
 * @param {'redlock' | '@sesamecare-oss/redlock'} pkg
 * @param {string[]} urls
 * @param {number} leaseMs
 * @returns {Promise<Driver>}
 */
async function nodeRedlockDriver(pkg, urls, leaseMs) {
  const module = /** @type {any} */ (await import(pkg));
  const Redlock = pkg === 'redlock' ? module.default : module.Redlock;
  const masters = urls.map((url) => new Redis(url));
  const redlock = new Redlock(masters, { retryCount: -1 });
  redlock.on('error', () => undefined); // its README: otherwise an 'error' event (e.g. a lost vote) would crash the process
  return {
    holder(key) {
      /** @type {any} */
      let lock;
      return {
        lock: async () => void (lock = await redlock.acquire([key], leaseMs)),
        unlock: async () => void (await lock.release()),
      };
    },
    task: plainTask,
    close: async () => void (await Promise.all(masters.map((m) => m.quit()))),
  };
}

/**
 * rlock, from this checkout or (for a before/after in one sitting) from
 * another one's build: `BENCH_RLOCK_BASELINE=/path/to/checkout` adds the rows
 * "rlock baseline" and "rlock fair lock baseline" loaded from that checkout's
 * packages/rlock/dist.
 * @param {string} id @param {string} name @param {() => Promise<any>} load
 * @returns {Library}
 */
function rlockLibrary(id, name, load, getter = 'getLock') {
  return {
    id,
    driven: `\`createClient({ redis: url })\`, \`${getter}(name)\`, \`lock({ leaseMs })\` / \`unlock()\`, each task in \`client.task\`; \`createRedlock({ masters })\` for S3; no setting changed`,
    name,
    kind: 'rlock',
    pkg: '@org/rlock',
    async single({ url, leaseMs, keyPrefix }) {
      const { createClient } = await load();
      const client = createClient({ redis: url, keyPrefix });
      return {
        holder(/** @type {string} */ key) {
          const lock = client[getter](key);
          return { lock: () => lock.lock({ leaseMs }).then(() => undefined), unlock: () => lock.unlock().then(() => undefined) };
        },
        task: (/** @type {() => Promise<any>} */ body) => client.task(body),
        close: async () => void (await client.close()),
      };
    },
    redlock:
      getter !== 'getLock'
        ? undefined
        : async ({ urls, leaseMs, keyPrefix }) => {
            const { createRedlock } = await load();
            const client = createRedlock({ masters: urls, keyPrefix });
            client.on('error', () => undefined);
            return {
              holder(/** @type {string} */ key) {
                const lock = client.getLock(key);
                return { lock: () => lock.lock({ leaseMs }).then(() => undefined), unlock: () => lock.unlock().then(() => undefined) };
              },
              task: (/** @type {() => Promise<any>} */ body) => client.task(body),
              close: async () => void (await client.close()),
            };
          },
  };
}

const baseline = process.env.BENCH_RLOCK_BASELINE;
if (baseline) {
  const entry = new URL(`file://${baseline.replace(/\/$/, '')}/packages/rlock/dist/esm/index.js`).href;
  ALL_LIBRARIES.splice(
    3,
    0,
    rlockLibrary('rlock-baseline', `rlock baseline (${baseline})`, () => import(entry)),
    rlockLibrary('rlock-fair-baseline', `rlock fair lock baseline (${baseline})`, () => import(entry), 'getFairLock'),
  );
}

/**
 * The libraries of this run: all of them, or those named in
 * `BENCH_LIBRARIES=raw,rlock,…` (for a quick look at a few; a report keeps all).
 */
export const LIBRARIES = process.env.BENCH_LIBRARIES
  ? ALL_LIBRARIES.filter((library) => (process.env.BENCH_LIBRARIES ?? '').split(',').includes(library.id))
  : ALL_LIBRARIES;

/** @param {string} id */
export function libraryById(id) {
  const library = ALL_LIBRARIES.find((l) => l.id === id);
  if (!library) throw new Error(`unknown library ${id}`);
  return library;
}

/** @type {Map<string, string>} */
const versions = new Map();

/**
 * Installed version of a library's package, read from its package.json on
 * disk (some packages do not export ./package.json): the bench's own
 * node_modules first, then the monorepo's.
 * @param {Library} library
 */
export function versionOf(library) {
  if (!library.pkg) return 'hand-written';
  const cached = versions.get(library.pkg);
  if (cached) return cached;
  let version = 'not installed';
  for (const base of ['../node_modules/', '../../../node_modules/']) {
    try {
      const json = JSON.parse(readFileSync(new URL(`${base}${library.pkg}/package.json`, import.meta.url), 'utf8'));
      version = String(json.version).replace(/^v/, '');
      break;
    } catch {
      // next place
    }
  }
  versions.set(library.pkg, version);
  return version;
}

/** Name with version, as in the tables. @param {Library} library */
export function labelOf(library) {
  const version = versionOf(library);
  return library.pkg && version !== 'not installed' ? `${library.name} ${version}` : library.name;
}
