/**
 * The `rlock` CLI's exit codes, for scripts (documented in the package README).
 * They never change meaning within a major version.
 */
export const EXIT = Object.freeze({
  /** Done: found, listed, released. */
  ok: 0,
  /** Nothing found (`show`, `ls`), or nothing released (`unlock`: free, not a lock, declined). */
  notFound: 1,
  /** Bad usage: an unknown command or option, a missing argument, a bad value. */
  usage: 2,
  /** Redis could not be reached (refused, timed out, no master). */
  unreachable: 3,
  /** Any other failure (Redis refused a command, an unexpected error). */
  failure: 4,
});

/** A usage error found by the CLI itself (commander finds the others): exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
