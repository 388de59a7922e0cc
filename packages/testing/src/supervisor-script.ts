/**
 * The `sh` supervisor each local redis-server runs under, so the server dies
 * with the Node process however it ends ('exit' handlers do not run on
 * SIGKILL, but the kernel closes a dead process's descriptors).
 *
 * Invoked as `sh -c SCRIPT rlock-fleet-supervisor <dir> <redis-server> <args…>`,
 * fd 3 a pipe only the Node process holds the other end of (the lifeline).
 * - Starts the server with fd 3 closed and prints its pid (signalled directly
 *   for kill/pause/resume).
 * - A watcher blocks reading the lifeline; at EOF (Node gone) it ignores
 *   SIGTERM, SIGKILLs the server, waits ~5 s for it and removes the data dir.
 * - The main shell waits for the server (not ended by SIGSTOP) and stops the
 *   watcher first, so an ordinary kill() keeps the data dir for restart().
 */
export const SUPERVISOR_SCRIPT = [
  'dir=$1; shift',
  '"$@" 3<&- </dev/null >&2 &',
  'pid=$!',
  'echo "$pid"',
  '{ read _lifeline <&3; trap "" TERM; kill -9 "$pid" 2>/dev/null; n=0;',
  '  while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 250 ]; do sleep 0.02; n=$((n + 1)); done;',
  '  rm -rf "$dir"; } &',
  'watcher=$!',
  'wait "$pid"',
  'status=$?',
  'kill "$watcher" 2>/dev/null',
  'exit "$status"',
].join('\n');

/** `$0` of the supervisor shell, as seen in `ps`. */
export const SUPERVISOR_NAME = 'rlock-fleet-supervisor';
