/**
 * The POSIX `sh` supervisor each local redis-server runs under, so that the
 * server dies with the Node process that started it, however that process
 * ends (a failed test, a jest timeout, SIGKILL of the worker, an OOM kill):
 * process 'exit' handlers do not run on SIGKILL, but the kernel closes every
 * descriptor of a dead process.
 *
 * Invoked as `sh -c SCRIPT rlock-fleet-supervisor <dir> <redis-server> <args…>`
 * with fd 3 a pipe whose other end only the Node process holds (the lifeline).
 *
 * - Starts redis-server in the background with fd 3 closed (so the server
 *   holds no end of the lifeline), stdin from /dev/null and stdout joined to
 *   stderr, and prints its pid as the first line of stdout: the Node side
 *   signals that pid directly for kill/pause/resume.
 * - A watcher subshell blocks reading the lifeline. Read returns only at EOF,
 *   that is when the Node process closed its end or died. It then ignores
 *   SIGTERM (so the main shell cannot interrupt the cleanup), SIGKILLs the
 *   server, waits until the pid is gone (bounded, about 5 s) and removes the
 *   data directory.
 * - The main shell waits for the server and exits with its status; before
 *   that it stops the watcher, so an ordinary kill() (the server dies, the
 *   Node process lives) keeps the data directory for restart(). A
 *   non-interactive shell's `wait` returns only on termination, not when the
 *   server is stopped by SIGSTOP, so pause() does not end the supervisor.
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
