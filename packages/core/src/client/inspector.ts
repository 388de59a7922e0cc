import type { Cluster, Redis } from 'ioredis';
import { boundedCall, withinMs } from '../connection/bounded-call.js';
import type { Transport } from '../connection/transport.js';
import { InvalidArgumentError, RedisUnavailableError } from '../errors.js';
import { checkKnownKeys, checkOptionsObject, checkSignal, describeValue, isWellFormed } from '../checks/argument-checks.js';
import { checkName, objectKey } from '../objects/names.js';
import { KINDS } from '../objects/kinds.js';
import type { ObjectKindSpec, Recognition } from '../objects/object-kind.js';
import type { ObjectInfoBase } from '../objects/inspect/info.js';
import { integerValue, readKeys, type KeptKey, type KeyRead, type LayoutSnapshot } from '../objects/inspect/snapshot.js';
import { INSPECT_DEFAULTS, MAX_INSPECT_LIMIT, OBJECT_KINDS, type InspectOptions, type ListOptions, type ObjectInfo, type ObjectKind } from './inspect-types.js';

/** Reads objects read-only: one script call per object (each kind describes its own), SCAN on every master to find them. */
export class Inspector {
  constructor(
    private readonly transport: Transport,
    private readonly keyPrefix: string,
    /** Runs once the arguments are checked, before any command (a closed client throws here). */
    private readonly beforeCall: () => void = () => undefined,
  ) {}

  /**
   * The state of object `name`, or undefined when it has no key (a free lock, a latch at zero, a semaphore never set).
   * @throws InvalidArgumentError for a bad name or option (before any command), RedisUnavailableError, RedisCommandError
   */
  async inspect(name: string, options?: InspectOptions): Promise<ObjectInfo | undefined> {
    checkName(name, 'object name');
    const raw = checkOptionsObject(options, 'inspect() options');
    checkKnownKeys(raw, ['kind', 'limit'], 'inspect() options');
    if (raw.kind !== undefined && !OBJECT_KINDS.includes(raw.kind as ObjectKind)) {
      throw new InvalidArgumentError(`inspect(): kind must be one of ${OBJECT_KINDS.join(', ')}, got ${describeValue(raw.kind)}`);
    }
    const limit = checkLimit(raw.limit, 'inspect(): limit', INSPECT_DEFAULTS.limit);
    this.beforeCall();
    return this.read(name, raw.kind as ObjectKind | undefined, limit);
  }

  /**
   * Pages of objects whose names match `match`, each read as by {@link Inspector.inspect}; an object gone before its read is left out.
   * @throws InvalidArgumentError for a bad option (when iteration starts).
   */
  async *list(options?: ListOptions): AsyncGenerator<ObjectInfo[], void, undefined> {
    const raw = checkOptionsObject(options, 'list() options');
    checkKnownKeys(raw, ['match', 'limit', 'entryLimit', 'signal'], 'list() options');
    const match = raw.match === undefined ? INSPECT_DEFAULTS.match : raw.match;
    const isGlob = typeof match === 'string' && match.length > 0 && !/[{}]/.test(match) && Buffer.byteLength(match) <= 1024 && isWellFormed(match);
    if (!isGlob) {
      throw new InvalidArgumentError(`list(): match must be a non-empty, well-formed glob of at most 1,024 bytes without braces, got ${describeValue(match)}`);
    }
    const pageSize = checkLimit(raw.limit, 'list(): limit', INSPECT_DEFAULTS.pageSize);
    const entryLimit = checkLimit(raw.entryLimit, 'list(): entryLimit', INSPECT_DEFAULTS.entryLimit);
    const signal = checkSignal(raw.signal, 'list(): signal');
    this.beforeCall();
    // Main keys only: `<prefix>:{<name>}` ends with `}`, which no suffix key (`:queue`…) does.
    const pattern = `${escapeGlob(this.keyPrefix)}:{${match}}`;
    const pending: string[] = [];
    // The servers to SCAN: the one Redis, or every master of a Cluster.
    const { redis, timeoutMs } = this.transport;
    const nodes = redis.isCluster ? await clusterMasters(redis as Cluster, timeoutMs) : [redis as Redis];
    for (const [index, node] of nodes.entries()) {
      let cursor = '0';
      do {
        signal?.throwIfAborted();
        this.beforeCall();
        const [next, keys] = await boundedCall(() => node.scan(cursor, 'MATCH', pattern, 'COUNT', pageSize), timeoutMs, 'SCAN', pattern);
        cursor = next;
        for (const key of keys) {
          const name = this.nameOf(key);
          if (name !== undefined && !pending.includes(name)) pending.push(name);
        }
        // Full pages as they fill; after the last SCAN, what is left.
        const last = cursor === '0' && index === nodes.length - 1;
        while (pending.length >= pageSize || (last && pending.length > 0)) {
          // One script call each; the transport sends them in one batch.
          const infos = await Promise.all(pending.splice(0, pageSize).map((name) => this.read(name, undefined, entryLimit)));
          signal?.throwIfAborted();
          const page = infos.filter((info): info is ObjectInfo => info !== undefined);
          if (page.length > 0) yield page;
        }
      } while (cursor !== '0');
    }
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
    const kinds: readonly InspectedKind[] = KINDS;
    const layouts = kinds.map((kind) => kind.keeps(this.keyPrefix, name));
    // Keys several kinds keep (the main key above all) are read once.
    const kept = [...new Map(layouts.flatMap((layout) => Object.values(layout)).map((k) => [`${k.key} ${k.by ?? ''}`, k])).values()];
    const { now, reads } = await readKeys(this.transport, key, kept, limit);
    const readOf = (wanted: KeptKey): KeyRead => reads[kept.findIndex((k) => k.key === wanted.key && k.by === wanted.by)] as KeyRead;
    const seen = kinds.map((kind, i) => {
      const snapshot = { now, keys: Object.fromEntries(Object.entries(layouts[i] ?? {}).map(([part, k]) => [part, readOf(k)])) };
      return { kind, snapshot, recognition: kind.recognise(snapshot) };
    });
    const base = { name, key, serverTimeMs: now };
    const found = kindOf(seen, hint);
    if (found) return found.kind.describe(found.snapshot, base) as ObjectInfo;
    const main = readOf({ key, type: 'string' });
    const noHolders = { ...base, holders: [], holderCount: 0 };
    const value = integerValue(main);
    // Several kinds keep a bare integer and none was named: say what it is.
    if (value !== undefined) return { ...noHolders, kind: 'semaphoreOrLatch', value };
    if (main.type === 'none') return undefined;
    return { ...noHolders, kind: 'unknown', redisType: main.type };
  }
}

/** A registered kind as the inspector drives it, whatever its parts and report. */
type InspectedKind = ObjectKindSpec<string, (...args: never[]) => unknown, ObjectInfoBase & { readonly kind: string }, string>;

/** What one kind made of a snapshot. */
export interface KindReading {
  readonly kind: InspectedKind;
  readonly snapshot: LayoutSnapshot;
  readonly recognition: Recognition;
}

/** The kind the snapshot shows (the first registered, if several do), else the hinted one if it fits, else the likely one. */
export function kindOf(seen: readonly KindReading[], hint: ObjectKind | undefined): KindReading | undefined {
  return (
    seen.find((entry) => entry.recognition === 'shown') ??
    seen.find((entry) => entry.kind.name === hint && entry.recognition !== undefined) ??
    seen.find((entry) => entry.recognition === 'likely')
  );
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
