import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { taskMiddleware, type LockHandle, type LockScope, type RedlockClient, type RLock, type RLockClient, type TaskMiddleware } from '@org/rlock';

/**
 * What an application writes with the public types compiles, and what it
 * must not write does not: the checks are this file type-checking under
 * `npm run typecheck:tests` (each `@ts-expect-error` fails the compile when
 * the line below it stops being an error). Nothing here runs against Redis.
 */

// A lock annotated `RLock` keeps the single-server client's token type:
// before, the default `string | undefined` made each line below an error.
async function singleServerTokens(client: RLockClient): Promise<string[]> {
  const lock: RLock = client.getFairLock('x');
  const handle: LockHandle = await lock.acquire();
  const fromScope = await lock.withLock((scope: LockScope) => scope.token);
  const fromHandle: string = handle.token;
  return [fromHandle, fromScope];
}

// Redlock's locks have no token: they are RLock<undefined>, and a bare RLock as
// docs/redlock.md annotates them (before, RLock meant RLock<string>: an error).
async function redlockTokens(redlock: RedlockClient): Promise<undefined[]> {
  const lock: RLock<undefined> = redlock.getLock('x');
  const documented: RLock = redlock.getLock('y');
  const handle: LockHandle<undefined> = await lock.acquire();
  const bare: LockHandle = await documented.acquire();
  const noToken: undefined = await documented.withLock(({ token }) => token);
  // @ts-expect-error a Redlock lock has no string token
  const asSingleServer: RLock<string> = redlock.getLock('z');
  void asSingleServer;
  return [handle.token, bare.token, noToken];
}

// A parameter typed with the bare RLock takes either kind, and its token may be undefined.
async function eitherKind(lock: RLock): Promise<string | undefined> {
  const handle: LockHandle = await lock.acquire();
  const fromScope = await lock.withLock(({ token }) => token);
  // @ts-expect-error the lock may be a Redlock lock, without a token
  const fence: string = handle.token;
  void fence;
  return fromScope;
}
function passEither(client: RLockClient, redlock: RedlockClient): unknown {
  return [eitherKind(client.getLock('a')), eitherKind(redlock.getLock('b'))];
}

// A multi-lock still takes locks of both clients.
function mixedMultiLock(client: RLockClient, redlock: RedlockClient): unknown {
  const either: RLock<string | undefined>[] = [client.getLock('a'), redlock.getLock('b')];
  return client.getMultiLock(either);
}

// taskMiddleware() fits node:http's listener and an Express/Connect-style
// `(req, res, next)` slot; it needs a response that emits `close`.
function middlewareShapes(): unknown {
  const perRequest = taskMiddleware();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => perRequest(req, res, () => res.end('ok')));
  type ConnectStyle = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;
  const mounted: ConnectStyle = perRequest;
  const typed: TaskMiddleware = perRequest;
  // @ts-expect-error a response that emits no `close` cannot tell that the request ended
  perRequest({}, {}, () => undefined);
  return [server, mounted, typed];
}

describe('@org/rlock types', () => {
  it('type the single-server lock token as a string, Redlock’s as undefined, a bare RLock as either, and taskMiddleware for node:http and Connect', () => {
    // The check is that this file compiles; these only keep the functions used.
    for (const check of [singleServerTokens, redlockTokens, passEither, mixedMultiLock, middlewareShapes]) expect(check).toBeInstanceOf(Function);
  });
});
