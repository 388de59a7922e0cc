import { RespErrorReply, sendCommands, type RespReply } from './resp-connection.js';

/** Bound on one admin command of a topology (CLUSTER NODES, ROLE, SENTINEL …). */
export const QUERY_TIMEOUT_MS = 2_000;

/**
 * Sends one command to `host:port` on a connection of its own and returns
 * the reply. Used while waiting for a topology to settle, where a node may
 * be down or paused: each call is bounded and opens a fresh connection, so a
 * slow node never delays the next poll.
 * @throws Error naming the command and the port on an error reply, a refused
 * connection or a timeout.
 */
export async function queryNode(host: string, port: number, args: readonly (string | number)[], timeoutMs = QUERY_TIMEOUT_MS): Promise<RespReply> {
  const [reply] = await sendCommands(host, port, [args], timeoutMs);
  if (reply instanceof RespErrorReply) throw new Error(`${args.join(' ')} on port ${port} failed: ${reply.message}`);
  return reply ?? null;
}

/** `queryNode` for commands that reply with text (INFO, CLUSTER NODES, CLUSTER INFO). */
export async function queryText(host: string, port: number, args: readonly (string | number)[]): Promise<string> {
  const reply = await queryNode(host, port, args);
  if (typeof reply !== 'string') throw new Error(`${args.join(' ')} on port ${port} replied ${JSON.stringify(reply)}, not text`);
  return reply;
}

/** The value of `field` in an `INFO` or `CLUSTER INFO` reply (`field:value` lines). */
export function infoField(info: string, field: string): string | undefined {
  for (const line of info.split(/\r?\n/)) {
    if (line.startsWith(`${field}:`)) return line.slice(field.length + 1).trim();
  }
  return undefined;
}
