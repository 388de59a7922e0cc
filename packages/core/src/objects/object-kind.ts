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

/** Checks the name and that the client is open, synchronously, before making the object. */
export function byName<T>(site: KindSite, what: string, make: (name: string) => T): (name: string) => T {
  return (name) => {
    checkName(name, what);
    site.assertOpen();
    return make(name);
  };
}
