import type { Deployment } from '../connection/deployment.js';
import type { EngineContext } from '../engine/engine-context.js';
import type { ObjectInfoBase } from './inspect/info.js';
import { checkName } from './names.js';
import type { KeptKey, LayoutSnapshot, ReportBase } from './inspect/snapshot.js';

/** What a kind is built from on one client. */
export interface KindSite {
  readonly deployment: Deployment;
  readonly context: EngineContext;
  /** @throws ClientClosedError once the client is closed. */
  assertOpen(): void;
}

/**
 * How much a snapshot says an object is of a kind: `shown` (only this kind keeps such keys), `likely` (the
 * reading when nothing else is said), `fits` (one of several kinds that keep such keys; `{ kind }` settles it).
 */
export type Recognition = 'shown' | 'likely' | 'fits' | undefined;

/** One kind of object as a plug-in: its getter, its keys, and how `inspect` recognises and describes it. */
export interface ObjectKindSpec<
  Name extends string,
  Getter extends (...args: never[]) => unknown,
  Info extends ObjectInfoBase & { readonly kind: Name },
  Part extends string,
  Method extends `get${string}` = `get${string}`,
> {
  readonly name: Name;
  /** A few words for the CLI's help. */
  readonly description: string;
  /** The client's getter: a method of its own, for its API docs. */
  readonly method: Method;
  /** Runs once, in the client's constructor; registers the kind's holds for renewal. */
  getter(site: KindSite): Getter;
  /** By part; `inspect` reads every kind's in one script call. */
  keeps(prefix: string, name: string): Readonly<Record<Part, KeptKey>>;
  recognise(snapshot: LayoutSnapshot<Part>): Recognition;
  describe(snapshot: LayoutSnapshot<Part>, base: ReportBase): Info;
  /** The detail column of `rlock ls`. */
  detail(info: Info): string;
  /** For a lock (`rlock unlock`): releases it whoever holds it; true if it was held. */
  forceUnlock?(object: ReturnType<Getter>): Promise<boolean>;
}

/** Frozen, with its name, getter, report and key types inferred and checked in one place. */
export function defineKind<
  Name extends string,
  Getter extends (...args: never[]) => unknown,
  Info extends ObjectInfoBase & { readonly kind: Name },
  Part extends string,
  Method extends `get${string}`,
>(spec: ObjectKindSpec<Name, Getter, Info, Part, Method>): ObjectKindSpec<Name, Getter, Info, Part, Method> {
  return Object.freeze(spec);
}

/** Checks the name and that the client is open, synchronously, before making the object (from the name and any further arguments). */
export function byName<T, Rest extends unknown[] = []>(
  site: KindSite,
  what: string,
  make: (name: string, ...rest: Rest) => T,
): (name: string, ...rest: Rest) => T {
  return (name, ...rest) => {
    checkName(name, what);
    site.assertOpen();
    return make(name, ...rest);
  };
}

/** What a composite kind is built from on one client: the site of every kind, the registered kinds' getters, and `inspect`. */
export interface CompositeSite extends KindSite {
  /**
   * The getter a registered kind made on this client (the same the client's own method uses).
   * @throws Error when that kind is not registered (a composite is made after every registered kind).
   */
  getterOf<Getter>(kind: { readonly name: string; getter(site: KindSite): Getter }): Getter;
  /** `client.inspect(name, options)`; `kind` names a registered kind. */
  inspect(name: string, options: { readonly kind: string; readonly limit: number }): Promise<(ObjectInfoBase & { readonly kind: string }) | undefined>;
}

/**
 * A kind built from registered kinds' objects (a leader election on a lock, a multi-lock over locks): it keeps no keys of
 * its own, so `inspect` and the CLI see its parts, never it; the client makes its getter after every registered kind's.
 */
export interface CompositeKindSpec<Name extends string, Getter extends (...args: never[]) => unknown, Method extends `get${string}` = `get${string}`> {
  readonly name: Name;
  /** A few words, as a registered kind's. */
  readonly description: string;
  /** The client's getter: a method of its own, for its API docs. */
  readonly method: Method;
  /** Runs once, in the client's constructor, after every registered kind's getter. */
  getter(site: CompositeSite): Getter;
}

/** Frozen, with its name, getter and method types inferred. */
export function defineComposite<Name extends string, Getter extends (...args: never[]) => unknown, Method extends `get${string}`>(
  spec: CompositeKindSpec<Name, Getter, Method>,
): CompositeKindSpec<Name, Getter, Method> {
  return Object.freeze(spec);
}
