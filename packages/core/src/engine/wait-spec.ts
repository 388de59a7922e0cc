import type { TryOutcome } from './attempt.js';
import type { WaitQueue } from './wait-queue.js';
import type { WaitStrategy } from './wait-strategy.js';
import type { AcquireWatch } from '../observability/telemetry.js';

/** How an acquisition waits for a grant of type `G`: on which channel, as whom, and what a try is. */
export interface WaitSpec<G> {
  /** The object's name, for a LockAcquireTimeoutError. */
  readonly name: string;
  readonly channel: string;
  /** How it learns it may try again; absent: on `channel` (see {@link WaitStrategy}). */
  readonly strategy?: WaitStrategy;
  /** Who waits: the owner, or an id the object's messages name. */
  readonly id: string;
  /** Only the head of the local queue tries (Redlock); the others wait their turn. */
  readonly headOnly: boolean;
  /** Its tries keep a place in Redis (a fair lock's queue, a writer's waiter lease): it keeps a timed try of its own. */
  readonly keepsPlace?: boolean;
  /** A grant excludes the other waiters here (an exclusive lock): the shared timed try is next due when the grant's lease could end. */
  readonly exclusive?: boolean;
  /** The object's wake policy: what a message on the channel wakes; false when it is none of the object's (dropped, counted). */
  readonly onMessage: (payload: string, queue: WaitQueue) => boolean;
  /**
   * 'queue': behind this process's waiters (no barging); 'join': into the local queue before the first try, where Redis keeps
   * the order; 'try': at once (a reentry would wait for itself; a latch's readers do not compete).
   */
  readonly arrival: 'queue' | 'join' | 'try';
  /** With 'queue': later arrivals in this process queue behind this call's first try (theirs could only win if it failed): a burst sends one try. */
  readonly queuesOthers?: boolean;
  /** Called when the call ends without a grant (timed out, aborted, failed): leave a queue kept in Redis. */
  leave?(): Promise<unknown>;
  /** undefined: without limit; 0: try once. */
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  /** One try (usually an {@link attempt}) under `signal`: the caller's, aborted also when `waitMs` runs out. */
  tryOnce(signal: AbortSignal | undefined): Promise<TryOutcome<G>>;
  /** A grant a script's reply handed the waiter (a fair lock's release to a head of its client), recorded; undefined: its next try claims it. */
  takeHandOff?(handOff: unknown): G | undefined;
  /** Gives back a grant its caller aborted before seeing; absent where a grant binds nobody (a latch's "open"). */
  giveBack?(grant: G): Promise<unknown>;
  /** Set by the observed engine on the caller's literal, which starts with it undefined so setting it keeps the object's shape. */
  watch: AcquireWatch | undefined;
  /** Called once as the call ends, granted or not, before its caller hears (in a reaction the call makes anyway). */
  readonly ended?: () => void;
}
