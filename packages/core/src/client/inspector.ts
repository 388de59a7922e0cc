import type { Cluster, Redis } from 'ioredis';
import { boundedCall, withinMs } from '../connection/bounded-call.js';
import type { Transport } from '../connection/transport.js';
import { InvalidArgumentError, RedisUnavailableError } from '../errors.js';
import { checkKnownKeys, checkOptionsObject, checkSignal, describeValue } from '../checks/argument-checks.js';
import { checkName, objectKey } from '../objects/names.js';
import { SCRIPTS } from '../objects/scripts.generated.js';
import {
  INSPECT_DEFAULTS,
  MAX_INSPECT_LIMIT,
  type HolderInfo,
  type InspectOptions,
  type ListOptions,
  type ObjectInfo,
  type ObjectInfoBase,
  type ObjectKind,
  type WaiterInfo,
} from './inspect-types.js';

const KINDS: readonly ObjectKind[] = ['lock', 'fairLock', 'readWriteLock', 'semaphore', 'permitExpirableSemaphore', 'countDownLatch'];

/** The reply of objects/inspect/read-7.lua, as ioredis hands it over (strings, integers, nulls). */
type ReadReply = [
  now: number,
  types: string[],
  mainPttl: number,
  main: (string | null)[],
  queue: (string | number)[],
  readers: (string | number | null)[],
  writers: (string | number)[],
  permits: (string | number | null)[],
];

/**
 * Reads the public data layout of objects, read-only and bounded: one script
 * call per object (objects/inspect/read-7.lua, a consistent snapshot of its
 * keys), and SCAN (never KEYS) to find objects by name. Works on one Redis and
 * on a Cluster (SCAN on every master; each object's keys share one slot).
 * What a client's `inspect()` and `list()` use, and the `rlock` CLI directly.
 */
export class Inspector {
  constructor(
    /** rlock's bounded way to the command connection (a Redis or a Cluster). */
    private readonly transport: Transport,
    /** The key prefix of the objects, as the client's `keyPrefix`. */
    private readonly keyPrefix: string,
    /** Runs once the arguments are checked, before any command (a closed client throws here). */
    private readonly beforeCall: () => void = () => undefined,
  ) {}

  /**
   * The state of object `name`, or undefined when it has no key (a free lock,
   * a latch at zero, a semaphore never set).
   * @throws InvalidArgumentError for a bad name or option, before any command.
   * @throws RedisUnavailableError, RedisCommandError
   */
  async inspect(name: string, options?: InspectOptions): Promise<ObjectInfo | undefined> {
    checkName(name, 'object name');
    const raw = checkOptionsObject(options, 'inspect() options');
    checkKnownKeys(raw, ['kind', 'limit'], 'inspect() options');
    if (raw.kind !== undefined && !KINDS.includes(raw.kind as ObjectKind)) {
      throw new InvalidArgumentError(`inspect(): kind must be one of ${KINDS.join(', ')}, got ${describeValue(raw.kind)}`);
    }
    const limit = checkLimit(raw.limit, 'inspect(): limit', INSPECT_DEFAULTS.limit);
    this.beforeCall();
    return this.read(name, raw.kind as ObjectKind | undefined, limit);
  }

  /**
   * Pages of objects whose names match `match`, each object read as by
   * {@link Inspector.inspect} (without a kind: a bare integer reads as
   * `semaphoreOrLatch`). SCAN may report a name twice (Redis's guarantee is
   * "at least once" for keys present throughout); an object gone between the
   * SCAN and its read is left out.
   * @throws InvalidArgumentError for a bad option (when iteration starts).
   */
  async *list(options?: ListOptions): AsyncGenerator<ObjectInfo[], void, undefined> {
    const raw = checkOptionsObject(options, 'list() options');
    checkKnownKeys(raw, ['match', 'limit', 'entryLimit', 'signal'], 'list() options');
    const match = raw.match === undefined ? INSPECT_DEFAULTS.match : raw.match;
    if (typeof match !== 'string' || match.length === 0 || match.includes('{') || match.includes('}') || Buffer.byteLength(match) > 1024) {
      throw new InvalidArgumentError(`list(): match must be a non-empty glob of at most 1,024 bytes without braces, got ${describeValue(match)}`);
    }
    const pageSize = checkLimit(raw.limit, 'list(): limit', INSPECT_DEFAULTS.pageSize);
    const entryLimit = checkLimit(raw.entryLimit, 'list(): entryLimit', INSPECT_DEFAULTS.entryLimit);
    const signal = checkSignal(raw.signal, 'list(): signal');
    this.beforeCall();
    // Main keys only: `<prefix>:{<name>}` ends with the closing brace, which no
    // suffix key (`:queue`, `:fence`…) does, and names hold no braces.
    const pattern = `${escapeGlob(this.keyPrefix)}:{${match}}`;
    const pending: string[] = [];
    for (const node of await this.scanNodes()) {
      let cursor = '0';
      do {
        signal?.throwIfAborted();
        this.beforeCall();
        const [next, keys] = await boundedCall(
          () => node.scan(cursor, 'MATCH', pattern, 'COUNT', pageSize),
          this.transport.timeoutMs,
          'SCAN',
          pattern,
        );
        cursor = next;
        for (const key of keys) {
          const name = this.nameOf(key);
          if (name !== undefined && !pending.includes(name)) pending.push(name);
        }
        while (pending.length >= pageSize) {
          const page = await this.readMany(pending.splice(0, pageSize), entryLimit);
          signal?.throwIfAborted();
          if (page.length > 0) yield page;
        }
      } while (cursor !== '0');
    }
    if (pending.length > 0) {
      const page = await this.readMany(pending, entryLimit);
      signal?.throwIfAborted();
      if (page.length > 0) yield page;
    }
  }

  /** The servers to SCAN: the one Redis, or every master of a Cluster. */
  private async scanNodes(): Promise<Redis[]> {
    const redis = this.transport.redis;
    if ((redis as { isCluster?: unknown }).isCluster === true) return clusterMasters(redis as Cluster, this.transport.timeoutMs);
    return [redis as Redis];
  }

  private async readMany(names: readonly string[], limit: number): Promise<ObjectInfo[]> {
    // One script call each; the transport sends them in one batch.
    const infos = await Promise.all(names.map((name) => this.read(name, undefined, limit)));
    return infos.filter((info): info is ObjectInfo => info !== undefined);
  }

  /** The name in main key `key`, or undefined for a key that is not one. */
  private nameOf(key: string): string | undefined {
    const head = `${this.keyPrefix}:{`;
    if (!key.startsWith(head) || !key.endsWith('}')) return undefined;
    const name = key.slice(head.length, -1);
    return name.length === 0 || name.includes('{') || name.includes('}') ? undefined : name;
  }

  private async read(name: string, hint: ObjectKind | undefined, limit: number): Promise<ObjectInfo | undefined> {
    const key = objectKey(this.keyPrefix, name);
    const keys = [key, `${key}:queue`, `${key}:waiters`, `${key}:readers`, `${key}:writers`, `${key}:leases`, `${key}:holders`];
    const reply = await this.transport.script(SCRIPTS.inspectRead, [...keys, limit], 'inspect', key, (value) => value as ReadReply);
    return describe(name, key, hint, reply);
  }
}

/** Turns the script's reply into the object's report (see read-7.lua for the reply's shape). */
function describe(name: string, key: string, hint: ObjectKind | undefined, reply: ReadReply): ObjectInfo | undefined {
  const [now, types, mainPttl, main, queue, readers, writers, permits] = reply;
  const [mainType, queueType, waitersType, readersType, writersType, leasesType, holdersType] = types;
  const base = { name, key, serverTimeMs: now };
  const noHolders = { ...base, holders: [] as HolderInfo[], holderCount: 0 };
  const fairQueue = queueType === 'list' || waitersType === 'zset';
  const rwKeys = readersType === 'zset' || writersType === 'zset';
  const permitKeys = leasesType === 'zset' || holdersType === 'hash';
  const ttlMs = mainPttl;

  if (mainType === 'hash') {
    const [owner, count, token, mode, writer, writerCount, writerToken] = main;
    if (mode !== null || rwKeys) {
      const holders: HolderInfo[] = [];
      if (writer) holders.push(holder(writer, writerCount, writerToken, mainPttl, now, { mode: 'write' }));
      holders.push(...readerHolders(readers, now));
      const waiters = waiterList(writers, now);
      return {
        ...base,
        kind: 'readWriteLock',
        mode: mode === 'write' || mode === 'read' ? mode : undefined,
        ttlMs,
        holders,
        holderCount: (writer ? 1 : 0) + Number(readers[0] ?? 0),
        waiters,
        waiterCount: Number(writers[0] ?? 0),
      };
    }
    if (owner) {
      const holders = [holder(owner, count, token, mainPttl, now)];
      if (fairQueue || hint === 'fairLock') {
        return { ...base, kind: 'fairLock', ttlMs, holders, holderCount: 1, waiters: waiterList(queue, now), waiterCount: Number(queue[0] ?? 0) };
      }
      return { ...base, kind: 'lock', ttlMs, holders, holderCount: 1 };
    }
    return { ...noHolders, kind: 'unknown', redisType: 'hash' };
  }

  if (mainType === 'string') {
    // A Redlock master's lease lock, `<clientId>:<taskId>|<op>`: a lock held once, with no fencing token.
    const leaseOwner = /^([^|:]+:[^|:]+)\|./.exec(main[0] ?? '')?.[1];
    if (leaseOwner) return { ...base, kind: 'lock', ttlMs, holders: [holder(leaseOwner, 1, undefined, mainPttl, now)], holderCount: 1 };
    const value = Number(main[0]);
    if (!Number.isSafeInteger(value)) return { ...noHolders, kind: 'unknown', redisType: 'string' };
    if (permitKeys || hint === 'permitExpirableSemaphore') return permitInfo(base, value, permits, now);
    if (hint === 'semaphore') return { ...noHolders, kind: 'semaphore', permits: value };
    if (hint === 'countDownLatch') return { ...noHolders, kind: 'countDownLatch', count: value };
    return { ...noHolders, kind: 'semaphoreOrLatch', value };
  }

  if (mainType === 'none') {
    // The main key is gone but others are not: a free fair lock with waiters
    // queued, a free read-write lock with writers waiting, permits leased
    // from a semaphore whose count was never set.
    if (fairQueue) {
      return { ...noHolders, kind: 'fairLock', ttlMs, waiters: waiterList(queue, now), waiterCount: Number(queue[0] ?? 0) };
    }
    if (rwKeys) {
      const holders = readerHolders(readers, now);
      return {
        ...base,
        kind: 'readWriteLock',
        mode: undefined,
        ttlMs,
        holders,
        holderCount: Number(readers[0] ?? 0),
        waiters: waiterList(writers, now),
        waiterCount: Number(writers[0] ?? 0),
      };
    }
    if (permitKeys) return permitInfo(base, 0, permits, now);
    return undefined;
  }

  return { ...noHolders, kind: 'unknown', redisType: mainType ?? 'none' };
}

function holder(
  owner: string,
  count: string | number | null | undefined,
  token: string | number | null | undefined,
  ttlMs: number,
  now: number,
  extra: { mode?: 'read' | 'write'; id?: string } = {},
): HolderInfo {
  const tokenText = token === null || token === undefined ? undefined : String(token);
  // A fair lock's hold handed over and not yet counted by its owner's script reads count 0: it is one.
  return { owner, count: Math.max(1, Number(count ?? 0)), token: tokenText, ttlMs, acquiredAtMs: acquiredAt(tokenText, now), ...extra };
}

/** The token read as server time (µs), when it is one: not after now. */
function acquiredAt(token: string | undefined, now: number): number | undefined {
  if (token === undefined || !/^\d{1,16}$/.test(token)) return undefined;
  const ms = Math.floor(Number(token) / 1000);
  return ms <= now ? ms : undefined;
}

/** {live, owner, leaseEnd, count, token, …} of the script: the live readers. */
function readerHolders(readers: readonly (string | number | null)[], now: number): HolderInfo[] {
  const holders: HolderInfo[] = [];
  for (let i = 1; i + 3 < readers.length; i += 4) {
    holders.push(holder(String(readers[i]), readers[i + 2], readers[i + 3], Number(readers[i + 1]) - now, now, { mode: 'read' }));
  }
  return holders;
}

/** {live, owner, leaseEnd, …} of the script: queued waiters or waiting writers. */
function waiterList(entries: readonly (string | number | null)[], now: number): WaiterInfo[] {
  const waiters: WaiterInfo[] = [];
  for (let i = 1; i + 1 < entries.length; i += 2) waiters.push({ owner: String(entries[i]), ttlMs: Number(entries[i + 1]) - now });
  return waiters;
}

function permitInfo(base: Omit<ObjectInfoBase, 'holders' | 'holderCount'>, available: number, permits: ReadReply[7], now: number): ObjectInfo {
  const holders: HolderInfo[] = [];
  for (let i = 2; i + 2 < permits.length; i += 3) {
    const id = String(permits[i]);
    const owner = id.includes(':') ? id.slice(0, id.lastIndexOf(':')) : id;
    holders.push(holder(owner, 1, permits[i + 2], Number(permits[i + 1]) - now, now, { id }));
  }
  return {
    ...base,
    kind: 'permitExpirableSemaphore',
    // Lapsed permits go back to the pool with the next call: count them as available.
    permits: available + Number(permits[1] ?? 0),
    holders,
    holderCount: Number(permits[0] ?? 0),
  };
}

/** @throws InvalidArgumentError unless undefined (then `fallback`) or an integer from 1 to MAX_INSPECT_LIMIT. */
function checkLimit(value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_INSPECT_LIMIT) {
    throw new InvalidArgumentError(`${what} must be an integer from 1 to ${MAX_INSPECT_LIMIT}, got ${describeValue(value)}`);
  }
  return value;
}

/** `text` as a literal in a Redis glob (SCAN MATCH): `*`, `?`, `[`, `]` and `\` escaped. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}

/** A Cluster's masters once it knows them (its slots loaded), bounded by `timeoutMs`. */
async function clusterMasters(cluster: Cluster, timeoutMs: number): Promise<Redis[]> {
  if (cluster.status !== 'ready') {
    const ready = new Promise<void>((resolve, reject) => {
      cluster.once('ready', resolve);
      cluster.once('end', () => reject(new RedisUnavailableError('the Cluster connection ended before it was ready')));
    });
    await withinMs(ready, timeoutMs, () => new RedisUnavailableError(`the Cluster was not ready within ${timeoutMs} ms (SCAN)`));
  }
  const masters = cluster.nodes('master');
  if (masters.length === 0) throw new RedisUnavailableError('the Cluster has no master to SCAN');
  return masters;
}
