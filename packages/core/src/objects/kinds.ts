import { FAIR_LOCK } from './fair-lock/kind.js';
import { COUNT_DOWN_LATCH } from './latch/kind.js';
import { LEADER_ELECTION } from './leader/kind.js';
import { LOCK } from './lock/kind.js';
import { MULTI_LOCK } from './multi-lock/kind.js';
import { NON_REENTRANT_FAIR_LOCK } from './non-reentrant-fair-lock/kind.js';
import { NON_REENTRANT_LOCK } from './non-reentrant-lock/kind.js';
import { PERMIT_EXPIRABLE_SEMAPHORE } from './permit-semaphore/kind.js';
import { READ_WRITE_LOCK } from './rw-lock/kind.js';
import { SEMAPHORE } from './semaphore/kind.js';
import { SPIN_LOCK } from './spin-lock/kind.js';

/** Every kind a client makes and `inspect` tells apart (a new kind: its folder plus an entry); the first listed wins. */
export const KINDS = Object.freeze([
  LOCK,
  READ_WRITE_LOCK,
  FAIR_LOCK,
  SEMAPHORE,
  PERMIT_EXPIRABLE_SEMAPHORE,
  COUNT_DOWN_LATCH,
  NON_REENTRANT_LOCK,
  SPIN_LOCK,
  NON_REENTRANT_FAIR_LOCK,
] as const);

export type AnyKind = (typeof KINDS)[number];

export type KindName = AnyKind['name'];

/** `inspect`'s report of an object of a registered kind. */
export type KindInfo = ReturnType<AnyKind['describe']>;

/** Every composite kind: built from registered kinds' objects, with no keys of its own (a new one: its folder plus an entry). */
export const COMPOSITE_KINDS = Object.freeze([LEADER_ELECTION, MULTI_LOCK] as const);

export type AnyComposite = (typeof COMPOSITE_KINDS)[number];

export type CompositeName = AnyComposite['name'];

/** The getter kind `Name`, registered or composite, adds to a client. */
export type KindGetter<Name extends KindName | CompositeName> = ReturnType<Extract<AnyKind | AnyComposite, { name: Name }>['getter']>;
