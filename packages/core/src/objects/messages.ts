// Strict readers of what rlock's scripts publish. Anyone who may PUBLISH can send anything on these channels, so a
// message is only ever a hint to try or to check with Redis; one that is not exactly what a script sends is dropped.

/** The largest fencing token a script mints: tokens are Lua numbers, exact up to 2^53 − 1. */
const MAX_TOKEN = Number.MAX_SAFE_INTEGER;

/** A client id as client/client-id.ts makes it: 21 characters of [0-9A-Za-z_]. */
export const CLIENT_ID = /^[0-9A-Za-z_]{21}$/;

/** `text` is a fencing token as the scripts print it: decimal digits, no sign or leading zero, from 1 to 2^53 − 1. */
export function isToken(text: string): boolean {
  return /^[1-9][0-9]{0,15}$/.test(text) && Number(text) <= MAX_TOKEN;
}

/** Two counts as the scripts print them: decimal digits, no sign or leading zero (0 itself allowed), each at most 2^53 − 1. */
const PERMIT_COUNTS = /^(0|[1-9][0-9]{0,15}):(0|[1-9][0-9]{0,15})$/;

/** A semaphore's "<came back>:<available>" (both counts), or undefined when `payload` is not one. */
export function readPermitCounts(payload: string): { readonly cameBack: number; readonly available: number } | undefined {
  const match = PERMIT_COUNTS.exec(payload);
  const cameBack = Number(match?.[1]);
  const available = Number(match?.[2]);
  return match === null || cameBack > MAX_TOKEN || available > MAX_TOKEN ? undefined : { cameBack, available };
}

/** A force-unlock's notice, "forced <owner> <token> <key>" (force-notice.lua), for a hold of `clientId` on a key under `keyPrefix`. */
export function readForcedNotice(payload: string, clientId: string, keyPrefix: string): { owner: string; token: string; key: string } | undefined {
  const match = FORCED.exec(payload);
  if (match === null) return undefined;
  const [, owner = '', token = '', key = ''] = match;
  if (!owner.startsWith(`${clientId}:`) || !isToken(token) || !key.startsWith(`${keyPrefix}:{`) || !key.endsWith('}')) return undefined;
  return { owner, token, key };
}

/** The owner has no space (client and task ids have none); the key is the rest, braces included. */
const FORCED = /^forced (\S+) (\S+) (\S.*)$/s;
