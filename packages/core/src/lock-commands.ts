import type { Redis } from 'ioredis';
import { luaScripts } from './lua-scripts.generated.js';
import { boundedCall } from './redis-errors.js';
import type { LockKeys } from './lock-keys.js';

/**
 * Version of the scripts' contract and of the data layout. It is part of every
 * command name, so two rlock versions sharing one Redis never run each other's
 * script under the same name.
 */
export const LAYOUT_VERSION = 1;

const COMMANDS = {
  acquire: `rlockAcquireV${LAYOUT_VERSION}`,
  release: `rlockReleaseV${LAYOUT_VERSION}`,
  renew: `rlockRenewV${LAYOUT_VERSION}`,
  forceUnlock: `rlockForceUnlockV${LAYOUT_VERSION}`,
} as const;

type ScriptFn = (...args: (string | number)[]) => Promise<unknown>;

const registered = new WeakSet<Redis>();

// defineCommand sends EVALSHA and falls back to EVAL on NOSCRIPT, so a SCRIPT
// FLUSH or a restarted server costs one extra round trip, not an error.
function registerScripts(redis: Redis): void {
  if (registered.has(redis)) return;
  for (const [name, script] of Object.entries(luaScripts)) {
    const command = COMMANDS[name as keyof typeof COMMANDS];
    if (!(command in redis)) {
      redis.defineCommand(command, script.numberOfKeys === undefined ? { lua: script.lua } : { numberOfKeys: script.numberOfKeys, lua: script.lua });
    }
  }
  registered.add(redis);
}

export type AcquireReply =
  | { readonly granted: true; readonly token: string; readonly count: number }
  | { readonly granted: false; readonly ttlMs: number; /** The owner holding it. */ readonly holder: string };

export type ReleaseReply =
  | {
      readonly released: true;
      readonly remaining: number;
      /** On a full release: subscriber connections the release message reached (waiting clients). */
      readonly receivers?: number;
    }
  | { readonly released: false; readonly why: 'not-held'; readonly keyExists: boolean }
  | { readonly released: false; readonly why: 'op-not-applied' };

export interface ReleaseRequest {
  readonly owner: string;
  readonly op: string;
  /** Release only if this acquire op is the hold's last one (cancelling an unanswered acquire). */
  readonly ifOp?: string;
  /** Release every count of the owner. */
  readonly all?: boolean;
  /** Release only the hold with this fencing token. */
  readonly token?: string;
}

export interface RenewItem {
  readonly key: string;
  readonly owner: string;
  readonly token: string;
  readonly leaseMs: number;
}

/** Typed, time-bounded calls of the lock scripts and reads on one connection. */
export class LockCommands {
  constructor(
    readonly redis: Redis,
    private readonly timeoutMs: number,
    private readonly replayWindowMs: number,
  ) {
    registerScripts(redis);
  }

  private script(name: keyof typeof COMMANDS): ScriptFn {
    const fn = (this.redis as unknown as Record<string, ScriptFn>)[COMMANDS[name]];
    if (!fn) throw new Error(`script ${COMMANDS[name]} is not registered`);
    return fn.bind(this.redis);
  }

  async acquire(keys: LockKeys, owner: string, leaseMs: number, op: string): Promise<AcquireReply> {
    const reply = (await boundedCall(
      () => this.script('acquire')(keys.lock, keys.fence, owner, leaseMs, op),
      this.timeoutMs,
      'acquire',
      keys.lock,
    )) as [number, string | number, number | string | undefined];
    if (reply[0] === 1) return { granted: true, token: String(reply[1]), count: Number(reply[2]) };
    return { granted: false, ttlMs: Number(reply[1]), holder: String(reply[2] ?? '') };
  }

  async release(keys: LockKeys, request: ReleaseRequest): Promise<ReleaseReply> {
    const reply = (await boundedCall(
      () =>
        this.script('release')(
          keys.lock,
          keys.released,
          request.owner,
          request.op,
          request.ifOp ?? '',
          request.all ? '1' : '0',
          keys.channel,
          'PUBLISH',
          this.replayWindowMs,
          request.token ?? '',
        ),
      this.timeoutMs,
      'release',
      keys.lock,
    )) as [number, number?, number?];
    if (reply[0] === 1) {
      return reply[2] === undefined
        ? { released: true, remaining: Number(reply[1]) }
        : { released: true, remaining: Number(reply[1]), receivers: Number(reply[2]) };
    }
    if (reply[0] === -2) return { released: false, why: 'op-not-applied' };
    return { released: false, why: 'not-held', keyExists: reply[1] === 1 };
  }

  /** Renews a batch of holds of one slot in one script call; one outcome code per item. */
  async renew(items: readonly RenewItem[]): Promise<number[]> {
    const args: (string | number)[] = [items.length];
    for (const item of items) args.push(item.key);
    for (const item of items) args.push(item.owner, item.token, item.leaseMs);
    const first = items[0]?.key ?? '';
    return (await boundedCall(
      () => this.script('renew')(...args),
      this.timeoutMs,
      `renew of ${items.length} holds`,
      first,
    )) as number[];
  }

  async forceUnlock(keys: LockKeys): Promise<boolean> {
    const reply = await boundedCall(
      () => this.script('forceUnlock')(keys.lock, keys.channel, 'PUBLISH'),
      this.timeoutMs,
      'forceUnlock',
      keys.lock,
    );
    return reply === 1;
  }

  /** owner and count of the hold, or undefined when free. */
  async readHolder(keys: LockKeys): Promise<{ owner: string; count: number } | undefined> {
    const [owner, count] = await boundedCall(
      () => this.redis.hmget(keys.lock, 'owner', 'count'),
      this.timeoutMs,
      'a read',
      keys.lock,
    );
    return owner ? { owner, count: Number(count) } : undefined;
  }

  async pttl(keys: LockKeys): Promise<number> {
    return boundedCall(() => this.redis.pttl(keys.lock), this.timeoutMs, 'PTTL', keys.lock);
  }

  async exists(keys: LockKeys): Promise<boolean> {
    return (await boundedCall(() => this.redis.exists(keys.lock), this.timeoutMs, 'EXISTS', keys.lock)) === 1;
  }
}
