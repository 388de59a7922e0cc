import { sendCommands, RespErrorReply } from './resp-connection.js';

/** What a probe of a server's port found. */
export type ProbeResult = 'ready' | 'not-ready' | 'foreign';

const PROBE_TIMEOUT_MS = 1_000;

/**
 * Sends `PING` and `INFO server` to `host:port`. `'ready'` when PING answers
 * PONG (not `-LOADING`, as while an AOF is replayed after a restart) and, if
 * `expectedPid` is given, the server's `process_id` is that pid; `'foreign'`
 * when another server answers on the port (the port was taken between the
 * free-port probe and redis-server's bind: our server will fail to bind and
 * exit, and must never be mistaken for that one); `'not-ready'` otherwise,
 * including a refused connection.
 */
export async function probeServer(host: string, port: number, expectedPid?: number): Promise<ProbeResult> {
  let replies;
  try {
    replies = await sendCommands(host, port, [['PING'], ['INFO', 'server']], PROBE_TIMEOUT_MS);
  } catch {
    return 'not-ready';
  }
  const [pong, info] = replies;
  if (pong instanceof RespErrorReply || pong !== 'PONG') return 'not-ready';
  if (expectedPid === undefined) return 'ready';
  const match = typeof info === 'string' ? /^process_id:(\d+)\r?$/m.exec(info) : null;
  return match !== null && Number(match[1]) === expectedPid ? 'ready' : 'foreign';
}
