/** One Lua script, as the embed generator writes it into objects/scripts.generated.ts. */
export interface EmbeddedScript {
  /** Number of KEYS, or undefined when the caller passes it first (a `-n` script). */
  readonly numberOfKeys: number | undefined;
  /** SHA1 of `lua`: the script runs as EVALSHA of it (EVAL once after a NOSCRIPT). */
  readonly sha: string;
  readonly lua: string;
}
