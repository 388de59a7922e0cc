import { InvalidArgumentError } from '../errors.js';
import { checkOptionsObject, describeValue } from './argument-checks.js';

/** Collects every problem of an options object into one InvalidArgumentError; a failed read takes its fallback so dependent checks still run. */
export class OptionReader {
  /** The options' own properties (see checkOptionsObject): an inherited one is never read. */
  readonly raw: Record<string, unknown>;
  private readonly problems: string[] = [];

  /** @throws InvalidArgumentError when `options` is not an object (nothing else can be read then). */
  constructor(
    options: unknown,
    known: readonly string[],
    private readonly what: string,
  ) {
    if (options === undefined || options === null) {
      throw new InvalidArgumentError(`${what}: options are required, got ${describeValue(options)}`);
    }
    this.raw = checkOptionsObject(options, `${what}: options`);
    for (const key of Object.keys(this.raw)) {
      if (!known.includes(key)) this.problems.push(`unknown option "${key}" (known: ${known.join(', ')})`);
    }
  }

  /** The option `key` checked by `check`, `fallback` when it is absent or bad. */
  read<T>(key: string, check: (value: unknown) => T, fallback: T): T {
    const value = this.raw[key];
    if (value === undefined) return fallback;
    return this.check(() => check(value), fallback);
  }

  check<T>(check: () => T, fallback: T): T {
    try {
      return check();
    } catch (error) {
      this.problems.push(error instanceof Error ? error.message : String(error));
      return fallback;
    }
  }

  problem(message: string): void {
    this.problems.push(message);
  }

  /** @throws InvalidArgumentError listing every problem found, if any. */
  done(): void {
    if (this.problems.length === 0) return;
    const count = this.problems.length === 1 ? 'bad option' : `${this.problems.length} bad options`;
    throw new InvalidArgumentError(`${this.what}: ${count}: ${this.problems.join('; ')}`);
  }
}
