/**
 * A hold as its key stores it (includes/hold-record.lua): a hash, field `<owner>` → hold count, `t` the
 * fencing token, `o` the last op, `n` `'1'` on the hold of a variant that is not reentrant.
 */
export interface HoldRecord {
  readonly owner: string;
  /** 0: a hold handed over to a queued owner, not yet counted by its owner's script. */
  readonly count: number;
  /** Decimal. */
  readonly token: string;
  /** Absent on a hold handed over and not yet claimed. */
  readonly op?: string;
  /** The hold of a variant that is not reentrant: its owner's second acquisition is refused. */
  readonly once: boolean;
}

const DIGITS = /^\d+$/;

/** Undefined when the fields are no hold (absent, another kind's hash), by the rules readHold applies in Lua. */
export function parseHold(fields: Readonly<Record<string, string | undefined>> | null | undefined): HoldRecord | undefined {
  if (!fields) return undefined;
  let owner: string | undefined;
  let count = 0;
  let token: string | undefined;
  let op: string | undefined;
  let once = false;
  for (const [field, value] of Object.entries(fields)) {
    if (value === undefined) return undefined;
    if (field === 't' && DIGITS.test(value)) token = value;
    else if (field === 'o') op = value;
    else if (field === 'n' && value === '1') once = true;
    else if (owner === undefined && field.includes(':') && DIGITS.test(value)) [owner, count] = [field, Number(value)];
    else return undefined;
  }
  if (owner === undefined || token === undefined) return undefined;
  return op === undefined ? { owner, count, token, once } : { owner, count, token, op, once };
}

/** What hold-record.lua writes, as HSET's field-value pairs: for tests and tools that write a hold by hand. */
export function holdFields(hold: HoldRecord): Record<string, string> {
  return { [hold.owner]: String(hold.count), t: hold.token, ...(hold.op === undefined ? {} : { o: hold.op }), ...(hold.once ? { n: '1' } : {}) };
}
