import type { Redis } from 'ioredis';

/** What counts a client's work in progress: a hold, a waiting channel, a call in flight. */
export interface WorkCounter {
  /** One more piece of work: the connections keep the process alive from now on. */
  enter(): void;
  /** One piece of work done: with none left, the connections stop keeping the process alive. */
  leave(): void;
}

/** Keeps a client's sockets referenced only while it has work; going idle waits a turn, so a reply that becomes a hold flips nothing. */
export class ProcessRefs implements WorkCounter {
  private busy = 0;
  /** Whether the connections keep the process alive now: not until there is work. */
  private referenced = false;
  private idleCheck = false;
  private readonly connections = new Set<Redis>();

  enter(): void {
    if (++this.busy === 1 && !this.referenced) this.apply(true);
  }

  leave(): void {
    if (--this.busy > 0 || !this.referenced || this.idleCheck) return;
    this.idleCheck = true;
    setImmediate(this.checkIdle);
  }

  private readonly checkIdle = (): void => {
    this.idleCheck = false;
    if (this.busy === 0 && this.referenced) this.apply(false);
  };

  /** Applies the client's state to `redis` (a connection rlock created) now and after each (re)connect. */
  track(redis: Redis): void {
    this.connections.add(redis);
    const apply = (): void => applyTo(redis, this.referenced);
    redis.on('connect', apply);
    redis.on('reconnecting', apply);
    redis.once('end', () => this.connections.delete(redis));
    apply();
  }

  private apply(referenced: boolean): void {
    this.referenced = referenced;
    for (const redis of this.connections) applyTo(redis, referenced);
  }
}

function applyTo(redis: Redis, referenced: boolean): void {
  const stream = redis.stream as { ref?(): void; unref?(): void; destroyed?: boolean } | undefined;
  if (stream && !stream.destroyed) {
    if (referenced) stream.ref?.();
    else stream.unref?.();
  }
  // ioredis keeps the timer of its next connection attempt here (not typed).
  const retry = (redis as unknown as { reconnectTimeout?: NodeJS.Timeout | null }).reconnectTimeout;
  if (retry) {
    if (referenced) retry.ref();
    else retry.unref();
  }
}
