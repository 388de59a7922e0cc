import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { CLIENT_DEFAULTS, LOCK_DEFAULTS, REDLOCK_DEFAULTS, SPIN_LOCK_DEFAULTS, WATCHDOG_DEFAULTS } from '@org/rlock';

/**
 * The guides' option tables and event lists say what the code has: every option of the options interface (read
 * with the TypeScript compiler from the sources, with its `@default`), no other, and the same default as the
 * `@default` tag and the frozen defaults object; every event of the events interface. No Redis.
 */
const ROOT = new URL('../../../../', import.meta.url).pathname;

interface Row {
  readonly name: string;
  /** The default cell as written. */
  readonly text: string;
}

/** The rows of the `nth` table headed `| option | default | meaning |` in a guide. */
function optionTable(path: string, nth = 0): Row[] {
  const lines = readFileSync(`${ROOT}${path}`, 'utf8').split('\n');
  const heads = lines.flatMap((line, index) => (line.startsWith('| option | default |') ? [index] : []));
  const head = heads[nth];
  if (head === undefined) throw new Error(`${path}: no option table number ${nth + 1}`);
  const rows: Row[] = [];
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith('|')) break;
    // A cell may hold an escaped pipe (`string \| undefined`).
    const cells = line.split(/(?<!\\)\|/).map((cell) => cell.trim());
    const name = /`([\w.]+)`/.exec(cells[1] ?? '')?.[1];
    if (name === undefined) throw new Error(`${path}: a row without an option name: ${line}`);
    rows.push({ name, text: cells[2] ?? '' });
  }
  return rows;
}

/**
 * What a default says, comparable across a guide and a `@default` tag: numbers (without `_`), quoted strings,
 * `<placeholders>`, constants, `…Ms` names, `undefined` (a guide's "none") and booleans. Asides in parentheses
 * after a space are prose and left out; `min(…)` is kept.
 */
function meaning(text: string): string[] {
  let plain = text.replace(/`/g, '');
  for (let before = ''; before !== plain;) [before, plain] = [plain, plain.replace(/ \([^()]*\)/g, '')];
  const tokens = plain.match(/'[^']*'|<[^>]+>|\d[\d_]*(?:\.\d+)?|[A-Za-z_][\w]*/g) ?? [];
  return tokens
    .map((token) => (/^\d/.test(token) ? token.replace(/_/g, '') : token === 'none' ? 'undefined' : token))
    .filter((token) => /^['<\d]/.test(token) || /^[A-Z][A-Z_]+$/.test(token) || /Ms$/.test(token) || ['undefined', 'true', 'false'].includes(token))
    .sort();
}

/** The code's side of an option: its name, whether it may be left out, and its `@default`. */
interface CodeOption {
  readonly name: string;
  readonly optional: boolean;
  readonly defaultText: string | undefined;
}

const program = (() => {
  const configPath = `${ROOT}tsconfig.test.json`;
  const { config } = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path)) as { config: unknown };
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT, undefined, configPath);
  return ts.createProgram([`${ROOT}packages/rlock/src/index.ts`], { ...options, noEmit: true });
})();
const checker = program.getTypeChecker();
const exported = new Map(
  checker
    .getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(`${ROOT}packages/rlock/src/index.ts`) as ts.SourceFile) as ts.Symbol)
    .map((symbol) => [symbol.name, symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol]),
);

/** The properties of an exported type of `@org/rlock` (inherited ones too), with their `@default`. */
function codeOptions(typeName: string, prefix = ''): CodeOption[] {
  const symbol = exported.get(typeName);
  if (symbol === undefined) throw new Error(`@org/rlock exports no ${typeName}`);
  return checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol)).map((property) => {
    const tag = property.getJsDocTags(checker).find((candidate) => candidate.name === 'default');
    return {
      name: `${prefix}${property.name}`,
      optional: (property.flags & ts.SymbolFlags.Optional) !== 0,
      defaultText: tag?.text?.map((part) => part.text).join(''),
    };
  });
}

/** Mismatches between a guide's option table and the code's options (merged from several types where the guide documents them together). */
function drift(path: string, rows: Row[], options: CodeOption[], frozen: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const documented = new Map(rows.map((row) => [row.name, row]));
  const byName = new Map(options.map((option) => [option.name, option]));
  for (const name of byName.keys()) if (!documented.has(name)) problems.push(`${path}: option ${name} is missing from the table`);
  for (const row of rows) {
    const option = byName.get(row.name);
    if (option === undefined) {
      problems.push(`${path}: ${row.name} is no option of the code`);
      continue;
    }
    if (row.text === 'required' || !option.optional) {
      if (row.text !== 'required' || option.optional)
        problems.push(`${path}: ${row.name} is ${option.optional ? 'optional' : 'required'} in the code, "${row.text}" here`);
      continue;
    }
    const said = meaning(row.text);
    const code = meaning(option.defaultText ?? '');
    if (option.defaultText === undefined) problems.push(`${path}: ${row.name} has no @default in the code`);
    else if (said.join(' ') !== code.join(' '))
      problems.push(`${path}: ${row.name} defaults to "${row.text}" here, @default ${option.defaultText} in the code`);
    // The frozen defaults object: a default that is one literal is its value there.
    const keys = row.name.split('.');
    const parent = keys.slice(0, -1).reduce<unknown>((object, part) => (object as Record<string, unknown> | undefined)?.[part], frozen);
    const key = keys[keys.length - 1] as string;
    if (typeof parent === 'object' && parent !== null && Object.hasOwn(parent, key) && said.length === 1) {
      const token = said[0] as string;
      const literal = token.startsWith("'")
        ? token.slice(1, -1)
        : /^\d/.test(token)
          ? Number(token)
          : ({ undefined, true: true, false: false } as Record<string, unknown>)[token];
      const value = (parent as Record<string, unknown>)[key];
      if (literal !== value) problems.push(`${path}: ${row.name} defaults to ${String(literal)} in the guide, ${String(value)} in the frozen defaults`);
    }
  }
  return problems;
}

/** The backticked names of a guide's list that follows `marker` up to `end`. */
function listedNames(path: string, marker: string, end: string): string[] {
  const text = readFileSync(`${ROOT}${path}`, 'utf8');
  const start = text.indexOf(marker);
  if (start < 0) throw new Error(`${path}: no "${marker}"`);
  const list = text.slice(start + marker.length, text.indexOf(end, start + marker.length));
  // Events are camelCase; a process warning's code (RLOCK_…) is not one.
  return [...list.matchAll(/`([a-z]\w*)`/g)].map((match) => match[1] as string);
}

const eventNames = codeOptions('RLockClientEvents').map((event) => event.name);

describe('the guides beside the code', () => {
  it('list every createClient option, with the code’s defaults (docs/client.md)', () => {
    const options = [...codeOptions('ClientOptions'), ...codeOptions('RLockClientOptions').filter((option) => option.name === 'renewer')];
    expect(drift('docs/client.md', optionTable('docs/client.md'), options, CLIENT_DEFAULTS)).toEqual([]);
  });

  it('list every watchdog option, with its defaults (docs/client.md)', () => {
    expect(drift('docs/client.md', optionTable('docs/client.md', 1), codeOptions('WatchdogOptions'), WATCHDOG_DEFAULTS)).toEqual([]);
  });

  it('list every createRedlock option, with the code’s defaults (docs/redlock.md)', () => {
    const options = [
      ...codeOptions('RedlockOptions').filter((option) => option.name !== 'retry'),
      ...codeOptions('RedlockRetryOptions', 'retry.'),
      ...codeOptions('RedlockClientOptions').filter((option) => option.name === 'renewer'),
    ];
    expect(drift('docs/redlock.md', optionTable('docs/redlock.md'), options, REDLOCK_DEFAULTS)).toEqual([]);
  });

  it('list every option of the waiting calls, with their defaults (lock, non-reentrant fair lock, semaphore and permit semaphore guides)', () => {
    expect([
      ...drift('docs/lock.md', optionTable('docs/lock.md'), codeOptions('LockOptions'), LOCK_DEFAULTS),
      ...drift('docs/non-reentrant-fair-lock.md', optionTable('docs/non-reentrant-fair-lock.md'), codeOptions('LockOptions'), LOCK_DEFAULTS),
      ...drift('docs/semaphore.md', optionTable('docs/semaphore.md'), codeOptions('WaitOptions'), {}),
      ...drift('docs/permit-expirable-semaphore.md', optionTable('docs/permit-expirable-semaphore.md'), codeOptions('PermitOptions'), LOCK_DEFAULTS),
    ]).toEqual([]);
  });

  it('list every spin lock option, with its defaults (docs/spin-lock.md)', () => {
    expect(drift('docs/spin-lock.md', optionTable('docs/spin-lock.md'), codeOptions('SpinLockOptions'), SPIN_LOCK_DEFAULTS)).toEqual([]);
  });

  it('name every client event, and no other (docs/client.md, docs/redlock.md)', () => {
    const lines = readFileSync(`${ROOT}docs/client.md`, 'utf8').split('\n');
    const start = lines.indexOf('## Events');
    const table = lines.slice(start).filter((line) => /^\| `\w+` \|/.test(line));
    const inClientGuide = table.map((line) => /^\| `(\w+)`/.exec(line)?.[1]);
    expect(inClientGuide.sort()).toEqual([...eventNames].sort());
    expect(listedNames('docs/redlock.md', '- typed events (eventemitter3):', ' —').sort()).toEqual([...eventNames].sort());
  });

  it('tell their tables from prose as the check expects (the parser itself)', () => {
    expect(meaning('`min(5_000, ⌊watchdogTimeoutMs / 3⌋)`')).toEqual(meaning('min(5_000, ⌊watchdogTimeoutMs / 3⌋)'));
    expect(meaning('none (a watchdog lease of `watchdogTimeoutMs`)')).toEqual(['undefined']);
    expect(meaning('`lock()`: none (without limit); `tryLock()`: `0`')).toEqual(['0', 'undefined']);
    expect(meaning("`'rlock'`")).toEqual(["'rlock'"]);
    expect(meaning('`30_000`')).not.toEqual(meaning('30_001'));
  });
});
