/** One KEYS or ARGV value as a script receives it. */
export type ScriptArg = string | number;

/** One Lua script as the embed generator writes it from its `.lua` file; `A` is its arguments by name, as its header lists them. */
export interface EmbeddedScript<A = never> {
  /** Number of KEYS, or undefined when the caller passes it first (a `-n` script). */
  readonly numberOfKeys: number | undefined;
  /** SHA1 of `lua`: the script runs as EVALSHA of it (EVAL once after a NOSCRIPT). */
  readonly sha: string;
  readonly lua: string;
  /** KEYS then ARGV, in the header's order (a `-n` script: the key count first). */
  readonly args: (named: A) => ScriptArg[];
  /** A batch's arguments given once for all its items (its fixed ARGV), by name. */
  readonly shared?: readonly string[];
}

/** The named arguments `script` takes. */
export type ScriptArgsOf<S> = S extends { readonly args: (named: infer A) => ScriptArg[] } ? A : never;

/**
 * First element of the reply of a script whose PUBLISH/SPUBLISH Redis refused (an ACL without channel rights): `[PUBLISH_REFUSED, error, reply]`,
 * written by scripts/embed-lua.mjs around every script that includes objects/includes/announce.lua. The script's writes stand.
 */
export const PUBLISH_REFUSED = 'rlock:publish-refused';

/** Told of a script whose announcement Redis refused (`refusal`: Redis's error text); its writes were kept. */
export type PublishRefusedListener = (refusal: string, what: string, key: string) => void;
