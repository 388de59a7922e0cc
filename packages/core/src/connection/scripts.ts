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
}
