import type { Deployment } from '../connection/deployment.js';
import type { EngineContext } from '../engine/engine-context.js';
import type { ObjectInfoBase } from './inspect/info.js';
import { checkName } from './names.js';
import { fitsBareInteger, integerValue, type LayoutSnapshot, type ReportBase } from './inspect/snapshot.js';

/** What a kind is built from on one client: its deployment and the engine context its objects share. */
export interface KindSite {
  readonly deployment: Deployment;
  readonly context: EngineContext;
  /** @throws ClientClosedError once the client is closed. */
  assertOpen(): void;
}

/**
 * How much a snapshot says an object is of a kind: `shown` (only this kind
 * keeps such keys), `likely` (the reading when nothing else is said: a lock's
 * hash, which a fair lock with nobody queued shares), `fits` (one of several
 * kinds that keep such keys: a bare integer; `{ kind }` settles it).
 */
export type Recognition = 'shown' | 'likely' | 'fits' | undefined;

/**
 * One kind of coordination object, as a plug-in: its name in `inspect`
 * reports, the getter it adds to a client (made once per client, so its
 * per-client state, stores and renewal kinds, lives in the getter), and how
 * `inspect` recognises and describes it from read-7.lua's snapshot.
 */
export interface ObjectKindSpec<Name extends string, Getter extends (...args: never[]) => unknown, Info extends ObjectInfoBase & { readonly kind: Name }> {
  readonly name: Name;
  /** Makes the client's getter; registers the kind's holds for renewal. Runs once, in the client's constructor. */
  getter(site: KindSite): Getter;
  /** How much `snapshot` says the object is of this kind. */
  recognise(snapshot: LayoutSnapshot): Recognition;
  /** The report of an object recognised as this kind. */
  describe(snapshot: LayoutSnapshot, base: ReportBase): Info;
}

/**
 * Declares a kind: the identity function, there so that a kind's literal
 * name, getter and report types are inferred and checked in one place.
 */
export function defineKind<Name extends string, Getter extends (...args: never[]) => unknown, Info extends ObjectInfoBase & { readonly kind: Name }>(
  spec: ObjectKindSpec<Name, Getter, Info>,
): ObjectKindSpec<Name, Getter, Info> {
  return spec;
}

/**
 * A getter of objects by name, as every kind's: checks the name
 * (InvalidArgumentError, naming it `what`) and that the client is open
 * (ClientClosedError), synchronously, before making the object.
 */
export function byName<T>(site: KindSite, what: string, make: (name: string) => T): (name: string) => T {
  return (name) => {
    checkName(name, what);
    site.assertOpen();
    return make(name);
  };
}

/**
 * A kind kept as nothing but a bare integer at its main key (a semaphore, a
 * latch): it fits a snapshot as the others that keep one do, its report is
 * the integer as `field` with no holders (nobody owns permits or counts), and
 * its getter makes `make(name, site)` by name (`what` names it in errors).
 */
export function bareIntegerKind<Name extends string, Field extends string, T>(
  name: Name,
  field: Field,
  what: string,
  make: (name: string, site: KindSite) => T,
) {
  return defineKind({
    name,
    getter: (site) => byName(site, what, (object) => make(object, site)),
    recognise: fitsBareInteger,
    describe: (snapshot, base) => ({
      ...base,
      kind: name,
      holders: [],
      holderCount: 0,
      ...({ [field]: integerValue(snapshot) ?? 0 } as Record<Field, number>),
    }),
  });
}
