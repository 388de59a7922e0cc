import type { Deployment } from '../connection/deployment.js';
import type { EngineContext } from '../engine/engine-context.js';
import type { ObjectInfoBase } from './inspect/info.js';
import { checkName } from './names.js';
import type { KeptKey, LayoutSnapshot, ReportBase } from './inspect/snapshot.js';

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
 * One kind of object as a plug-in: its `inspect` name, its getter (made once
 * per client, holding its per-client state), its keys, and how `inspect` recognises and describes it.
 */
export interface ObjectKindSpec<
  Name extends string,
  Getter extends (...args: never[]) => unknown,
  Info extends ObjectInfoBase & { readonly kind: Name },
  Part extends string,
  Method extends `get${string}` = `get${string}`,
> {
  readonly name: Name;
  /** What it is, in a few words (the CLI's help lists it). */
  readonly description: string;
  /** The client's public getter of such objects (a method of its own, for its API docs). */
  readonly method: Method;
  /** Makes the client's getter; registers the kind's holds for renewal. Runs once, in the client's constructor. */
  getter(site: KindSite): Getter;
  /** The keys object `name` of this kind may keep, by part; `inspect` reads every kind's in one script call. */
  keeps(prefix: string, name: string): Readonly<Record<Part, KeptKey>>;
  /** How much `snapshot` says the object is of this kind. */
  recognise(snapshot: LayoutSnapshot<Part>): Recognition;
  /** The report of an object recognised as this kind. */
  describe(snapshot: LayoutSnapshot<Part>, base: ReportBase): Info;
  /** Its report in a few words: the detail column of `rlock ls`. */
  detail(info: Info): string;
  /** For a lock: releases object `object` (made by the getter), whoever holds it (`rlock unlock`); true if it was held. */
  forceUnlock?(object: ReturnType<Getter>): Promise<boolean>;
}

/** Declares a kind, frozen, so its name, getter, report and key types are inferred and checked in one place. */
export function defineKind<
  Name extends string,
  Getter extends (...args: never[]) => unknown,
  Info extends ObjectInfoBase & { readonly kind: Name },
  Part extends string,
  Method extends `get${string}`,
>(spec: ObjectKindSpec<Name, Getter, Info, Part, Method>): ObjectKindSpec<Name, Getter, Info, Part, Method> {
  return Object.freeze(spec);
}

/** A getter by name: checks the name and that the client is open, synchronously, before making the object. */
export function byName<T>(site: KindSite, what: string, make: (name: string) => T): (name: string) => T {
  return (name) => {
    checkName(name, what);
    site.assertOpen();
    return make(name);
  };
}
