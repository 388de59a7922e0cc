/**
 * A hold as its key stores it (includes/hold-record.lua): `<head> <token> <owner>`, token in base 36,
 * head the last op, `<count>*<op>` when the count is not 1, a non-reentrant lock's op after `!`.
 */
export interface HoldRecord {
  readonly owner: string;
  /** 0: a fair lock's hold handed over, not yet counted by its owner's script. */
  readonly count: number;
  /** Decimal. */
  readonly token: string;
  readonly op: string;
  /** A non-reentrant lock's hold. */
  readonly once: boolean;
}

const RECORD = /^(?:(\d+)\*)?(!?)(\S*) ([0-9a-z]+) (.+)$/s;

/** Undefined when the value is no hold record (a lease lock, a count, absent). */
export function parseHoldRecord(value: string | null | undefined): HoldRecord | undefined {
  const match = value ? RECORD.exec(value) : null;
  if (!match) return undefined;
  const [, count, once, op, token, owner] = match as unknown as [string, string | undefined, string, string, string, string];
  return { owner, count: count === undefined ? 1 : Number(count), token: Number.parseInt(token, 36).toString(), op, once: once === '!' };
}

/** What hold-record.lua writes, for tests and tools that write a hold by hand. */
export function formatHoldRecord(hold: HoldRecord): string {
  const head = `${hold.count === 1 ? '' : `${hold.count}*`}${hold.once ? '!' : ''}${hold.op}`;
  return `${head} ${Number(hold.token).toString(36)} ${hold.owner}`;
}
