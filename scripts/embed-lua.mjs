// Embeds the Lua scripts into generated TypeScript modules, so the builds (ESM
// and CJS) carry them without reading files at run time, and a new script is
// one file:
//
// - the file name says what the script does and gives the entry:
//   objects/lock/acquire.lua is `lockAcquire`; the name never carries the key
//   count, so adding a key renames nothing;
// - the header gives the key count: its `KEYS[i]` lines (`KEYS[1]` … `KEYS[4]`:
//   a script of 4 keys; per-item keys, `KEYS[i]`: a batch, whose key count the
//   caller sends first);
// - the header gives its arguments: each `KEYS[i]  name: …` and `ARGV[i]  name: …`
//   line (`KEYS[2i-1]`, `ARGV[3i+1]`: one per item of a batch) becomes a field
//   of the entry's `args`, which takes them by name and puts them in that
//   order, so the order is written once, in the header;
// - the SHA1 of each script is computed here: scripts run as EVALSHA of their
//   content's hash (the transport loads them on each connect), so two rlock
//   versions sharing one Redis never run each other's script;
// - `--- @include "<name>"` is replaced by core's objects/includes/<name>.lua:
//   a Lua function shared by several objects, taking what it needs as
//   parameters;
// - a script that calls a publishing function is wrapped so that a refused
//   PUBLISH (an ACL; Redis keeps the writes before it) comes back as
//   {PUBLISH_REFUSED, <error>, <reply>}, which the transport unwraps.
//
// It fails, naming file and line, when a header and its script disagree: a
// KEYS or ARGV index the code reads that the header does not declare or the
// reverse, a gap in the indices, fixed and per-item keys mixed, per-item ARGV
// in a script of fixed keys, a header whose first line does not name the file
// (`<name>: <what it does>`), a file name with a key count in it, a local named
// otherwise than the header names what it holds, or an include that reads KEYS
// or ARGV itself. `--check` also fails when a committed module
// is stale (CI runs it).
import { readdirSync, readFileSync, writeFileSync, existsSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createHash } from 'node:crypto';

/** Version of the scripts' contract and of the public data layout (core README): raise it when either changes. */
const LAYOUT_VERSION = 6;

/** First element of a reply that carries a refused publish (core's connection/scripts.ts has the same). */
const PUBLISH_REFUSED = 'rlock:publish-refused';

const root = new URL('..', import.meta.url).pathname;
const includesDir = join(root, 'packages/core/src/objects/includes');

const TARGETS = [
  {
    dir: join(root, 'packages/core/src/objects'),
    kinds: (dir) => readdirSync(dir).filter((kind) => kind !== 'includes' && statSync(join(dir, kind)).isDirectory()),
    out: 'scripts.generated.ts',
    typesFrom: '../connection/scripts.js',
    layoutVersion: true,
  },
  {
    dir: join(root, 'packages/redlock/src'),
    kinds: () => ['lease-lock'],
    out: 'lease-lock/scripts.generated.ts',
    typesFrom: '@org/rlock-core/internal',
    layoutVersion: false,
  },
];

const errors = [];
const fail = (file, line, message) => errors.push(`${relative(root, file)}:${line}: ${message}`);

const capital = (word) => word[0].toUpperCase() + word.slice(1);
const camel = (kebab) => kebab.replace(/-([a-z])/g, (_, c) => c.toUpperCase());

/** `3` (a fixed index), or `{ stride, offset }` for `3i-2` / `3 * i - 2` (one per item of a batch); undefined if neither. */
function parseIndex(text) {
  const compact = text.replace(/\s+/g, '');
  if (/^\d+$/.test(compact)) return Number(compact);
  const match = /^(?:(\d+)\*?)?i(?:([+-])(\d+))?$/.exec(compact);
  if (!match) return undefined;
  return { stride: Number(match[1] ?? 1), offset: match[2] === '-' ? -Number(match[3]) : Number(match[3] ?? 0) };
}

const indexName = (index) =>
  typeof index === 'number'
    ? String(index)
    : `${index.stride === 1 ? '' : index.stride}i${index.offset > 0 ? `+${index.offset}` : index.offset < 0 ? index.offset : ''}`;
/** Where an index falls for the first item: orders the declarations. */
const firstIndex = (index) => (typeof index === 'number' ? index : index.stride + index.offset);

/** Lines of Lua without their comments (no script has `--` inside a string). */
const codeLines = (lua) => lua.split('\n').map((line) => line.replace(/--.*$/, ''));

/** Splits `a, f(b, c), d` at its top-level commas. */
function splitTopLevel(text) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts;
}

/** The `--[[ … ]]` header's KEYS and ARGV declarations, checked against the script's code. */
function readScript(file, name, source) {
  if (!source.startsWith('--[[')) {
    fail(file, 1, 'expected a `--[[ … ]]` header listing every KEYS[i] and ARGV[i]');
    return undefined;
  }
  const headerEnd = source.indexOf(']]');
  const header = source.slice(0, headerEnd).split('\n');
  if (!header[1]?.startsWith(`${name}: `)) fail(file, 2, `expected the header's first line to name the script: \`${name}: <what it does>\``);
  const bodyStart = header.length; // the body's first line is the header's last (after `]]`)
  const declared = { KEYS: [], ARGV: [] };
  let last;
  header.forEach((line, n) => {
    const decl = /^(KEYS|ARGV)\[([^\]]*)\]\s+(.*)$/.exec(line);
    if (!decl) {
      if (last && /^\s+\S/.test(line)) last.doc.push(line.trim());
      else last = undefined;
      return;
    }
    const [, table, indexText, rest] = decl;
    const index = parseIndex(indexText);
    const named = /^([a-z][A-Za-z0-9]*):\s+(.*)$/.exec(rest);
    if (index === undefined || !named) {
      fail(file, n + 1, `expected \`${table}[<i>]  <name>: <description>\` (i: a number, or <s>i±<c> per item of a batch)`);
      last = undefined;
      return;
    }
    last = { table, index, name: named[1], doc: [named[2]], line: n + 1 };
    declared[table].push(last);
  });
  // The key count is the header's: per-item keys make a batch (null: the caller sends the count).
  const numberOfKeys = declared.KEYS.some((d) => typeof d.index !== 'number') ? null : declared.KEYS.length;

  const all = [...declared.KEYS, ...declared.ARGV];
  const byName = new Map();
  for (const d of all) {
    if (byName.has(d.name)) fail(file, d.line, `"${d.name}" is declared twice (line ${byName.get(d.name).line})`);
    byName.set(d.name, d);
    if (numberOfKeys === null && d.name === 'items') fail(file, d.line, '"items" is the name of a batch\'s list');
  }
  const key = (table, index) => `${table}[${indexName(index)}]`;
  const declaredAt = new Map(all.map((d) => [key(d.table, d.index), d]));
  if (declaredAt.size !== all.length) fail(file, 1, 'an index is declared twice');

  // The code's uses, and its locals bound straight to KEYS[i] / ARGV[i].
  const used = new Map();
  codeLines(source).forEach((line, n) => {
    if (n + 1 < bodyStart) return;
    for (const use of line.matchAll(/\b(KEYS|ARGV)\[([^\]]*)\]/g)) {
      const index = parseIndex(use[2]);
      if (index === undefined) {
        fail(file, n + 1, `${use[0]}: index the header cannot declare (a number, or <s> * i ± <c>)`);
        continue;
      }
      // `KEYS[i]` in a loop of a fixed script reads each of its keys.
      if (numberOfKeys !== null && typeof index !== 'number' && index.stride === 1 && index.offset === 0) {
        for (const d of declared[use[1]]) used.set(key(d.table, d.index), n + 1);
        continue;
      }
      const k = key(use[1], index);
      if (!used.has(k)) used.set(k, n + 1);
      if (!declaredAt.has(k)) fail(file, n + 1, `${k} is read here but not declared in the header`);
    }
    const local = /^\s*local\s+([A-Za-z_][\w\s,]*?)\s*=\s*(.+)$/.exec(line);
    if (!local) return;
    const names = local[1].split(',').map((s) => s.trim());
    splitTopLevel(local[2]).forEach((value, i) => {
      const bound = /^(?:tonumber\()?(KEYS|ARGV)\[([^\]]*)\]\)?$/.exec(value);
      const index = bound && parseIndex(bound[2]);
      const d = index !== undefined && index !== null && declaredAt.get(key(bound[1], index));
      if (d && names[i] !== undefined && names[i] !== d.name) {
        fail(file, n + 1, `local "${names[i]}" holds ${key(bound[1], index)}, which the header names "${d.name}"`);
      }
    });
  });
  for (const d of all) {
    if (!used.has(key(d.table, d.index))) fail(file, d.line, `${key(d.table, d.index)} "${d.name}" is declared but the script never reads it`);
  }

  // The indices: 1..n without gaps; a batch's
  // per-item indices one block per item, after its fixed ARGV.
  for (const table of ['KEYS', 'ARGV']) {
    const list = declared[table];
    for (let i = 1; i < list.length; i++) {
      if (firstIndex(list[i].index) <= firstIndex(list[i - 1].index)) fail(file, list[i].line, `${table} out of order: list them by index`);
    }
    const fixed = list.filter((d) => typeof d.index === 'number');
    const perItem = list.filter((d) => typeof d.index !== 'number');
    fixed.forEach((d, i) => d.index !== i + 1 && fail(file, d.line, `${table}[${d.index}]: expected ${table}[${i + 1}] (no gaps)`));
    perItem.forEach((d, i) => {
      const expected = fixed.length + i + 1;
      if (d.index.stride !== perItem.length || firstIndex(d.index) !== expected) {
        fail(
          file,
          d.line,
          `${table}[${indexName(d.index)}]: expected ${table}[${indexName({ stride: perItem.length, offset: expected - perItem.length })}] (one block of ${perItem.length} per item)`,
        );
      }
    });
    if (numberOfKeys === null) {
      if (perItem.length === 0)
        fail(file, 1, `a batch (per-item KEYS[<s>i±<c>]) declares its ${table === 'KEYS' ? 'keys' : 'per-item arguments'} per item (${table}[<s>i±<c>])`);
      if (table === 'KEYS' && fixed.length > 0) fail(file, fixed[0].line, 'a batch has no fixed keys: every key is per item (KEYS[<s>i±<c>])');
    } else if (perItem.length > 0) {
      fail(file, perItem[0].line, `per-item ${table} in a script of ${numberOfKeys} fixed keys: declare its keys per item (KEYS[<s>i±<c>]) to make it a batch`);
    }
  }
  return { declared, numberOfKeys };
}

// Each include goes in once per script: two includes may both include a third (now-ms).
function resolveIncludes(lua, file, seen = new Set(), done = new Set()) {
  return lua.replace(/^--- @include "([a-z][A-Za-z-]*)"\s*$/gm, (_, name) => {
    if (seen.has(name)) throw new Error(`${file}: include cycle through "${name}"`);
    if (done.has(name)) return '';
    done.add(name);
    const path = join(includesDir, `${name}.lua`);
    if (!existsSync(path)) throw new Error(`${file}: include "${name}" not found in ${relative(root, includesDir)}/`);
    return resolveIncludes(readFileSync(path, 'utf8').trimEnd(), path, new Set([...seen, name]), done);
  });
}

// An include is a function of its parameters: the script passes what it read.
for (const name of readdirSync(includesDir).filter((f) => f.endsWith('.lua'))) {
  const path = join(includesDir, name);
  codeLines(readFileSync(path, 'utf8')).forEach((line, n) => {
    if (/\b(KEYS|ARGV)\[/.test(line)) fail(path, n + 1, 'an include reads no KEYS or ARGV: take it as a parameter');
  });
}

/** The includes' functions that publish (through "announce"): a script whose own code calls one reports a refusal. */
/**
 * The includes' functions that publish: `announce`, and every function whose body calls one that does (found over all
 * includes until nothing is added), so a script calling `releaseLock` reports a refusal as one calling `wakeClient` does.
 */
function publishingFunctions() {
  const bodies = new Map();
  for (const name of readdirSync(includesDir).filter((f) => f.endsWith('.lua'))) {
    const parts = codeLines(readFileSync(join(includesDir, name), 'utf8'))
      .join('\n')
      .split(/^local function /m)
      .slice(1);
    for (const part of parts) bodies.set(/^[A-Za-z_]\w*/.exec(part)?.[0], part.slice(part.indexOf('(')));
  }
  const publishing = new Set(['announce']);
  for (let grew = true; grew;) {
    grew = false;
    for (const [name, body] of bodies) {
      if (publishing.has(name) || ![...publishing].some((callee) => new RegExp(`\\b${callee}\\(`).test(body))) continue;
      publishing.add(name);
      grew = true;
    }
  }
  // Called, or handed to pcall (a batch runs each item so).
  const names = [...publishing].join('|');
  return new RegExp(`\\b(?:${names})\\(|\\bpcall\\(\\s*(?:${names})\\b`);
}
const PUBLISHING = publishingFunctions();
const announces = (source) => codeLines(source).some((line) => PUBLISHING.test(line) && !/^\s*local function /.test(line));

/** A script that includes "announce" but never calls it: `publishRefused` declared, so the include compiles as everywhere. */
const declaringRefusal = (lua) => `local publishRefused\n${lua}`;

/** `lua` run as a function, so whatever it returns carries the refusal `announce` noted in `publishRefused` (a local of this wrapper). */
const reportingRefusedPublish = (lua) =>
  `local publishRefused\nlocal reply = (function()\n${lua}\nend)()\n` +
  `if publishRefused then\n  return {'${PUBLISH_REFUSED}', publishRefused, reply}\nend\nreturn reply`;

const fields = (list, type) => list.map((d) => `${d.name}: ${type}`);

/**
 * The entry's `args`: named arguments in, KEYS then ARGV out, in the header's
 * order (the header says what each one is). One line, as the entry's others.
 */
function argsFunction(declared, numberOfKeys) {
  if (numberOfKeys !== null) {
    const type = [...fields(declared.KEYS, 'string'), ...fields(declared.ARGV, 'ScriptArg')].join('; ');
    return `(a: { ${type} }): ScriptArg[] => [${[...declared.KEYS, ...declared.ARGV].map((d) => `a.${d.name}`).join(', ')}]`;
  }
  const fixedArgs = declared.ARGV.filter((d) => typeof d.index === 'number');
  const itemArgs = declared.ARGV.filter((d) => typeof d.index !== 'number');
  const item = [...fields(declared.KEYS, 'string'), ...fields(itemArgs, 'ScriptArg')].join('; ');
  const type = [...fields(fixedArgs, 'ScriptArg'), `readonly items: readonly { ${item} }[]`].join('; ');
  const count = declared.KEYS.length === 1 ? 'a.items.length' : `a.items.length * ${declared.KEYS.length}`;
  const push = (list, of) => `${list.map((d) => `${of}.${d.name}`).join(', ')}`;
  const steps = [
    `const out: ScriptArg[] = [${count}];`,
    `for (const item of a.items) out.push(${push(declared.KEYS, 'item')});`,
    ...(fixedArgs.length > 0 ? [`out.push(${push(fixedArgs, 'a')});`] : []),
    ...(itemArgs.length > 0 ? [`for (const item of a.items) out.push(${push(itemArgs, 'item')});`] : []),
    'return out;',
  ];
  return `(a: { ${type} }): ScriptArg[] => { ${steps.join(' ')} }`;
}

/** A batch's fixed ARGV by name (`shared`): every item of one call has these values, so a caller batches calls that agree. */
function sharedLine(declared, numberOfKeys) {
  const fixed = declared.ARGV.filter((d) => typeof d.index === 'number');
  if (numberOfKeys !== null || fixed.length === 0) return '';
  return `    shared: [${fixed.map((d) => JSON.stringify(d.name)).join(', ')}],\n`;
}

function generate(target) {
  const entries = target
    .kinds(target.dir)
    .sort()
    .flatMap((kind) =>
      readdirSync(join(target.dir, kind))
        .filter((f) => f.endsWith('.lua'))
        .sort()
        .map((file) => {
          const path = join(target.dir, kind, file);
          const match = /^([a-z][A-Za-z]*)\.lua$/.exec(file);
          if (!match) {
            fail(path, 1, 'expected <camelName>.lua, named by what the script does (its header gives the keys, not the name)');
            return undefined;
          }
          const [, name] = match;
          const source = readFileSync(path, 'utf8');
          const read = readScript(path, name, source);
          const included = new Set();
          const resolved = resolveIncludes(source, path, new Set(), included);
          const lua = !included.has('announce') ? resolved : announces(source) ? reportingRefusedPublish(resolved) : declaringRefusal(resolved);
          return read && { id: `${camel(kind)}${capital(name)}`, source: `${kind}/${file}`, numberOfKeys: read.numberOfKeys, declared: read.declared, lua };
        }),
    )
    .filter(Boolean);

  const body = entries
    .map(
      (e) =>
        `  /** ${e.source} */\n  ${e.id}: {\n    numberOfKeys: ${e.numberOfKeys ?? 'undefined'},\n` +
        `    sha: ${JSON.stringify(createHash('sha1').update(e.lua).digest('hex'))},\n` +
        `    lua: ${JSON.stringify(e.lua)},\n    args: ${argsFunction(e.declared, e.numberOfKeys)},\n` +
        sharedLine(e.declared, e.numberOfKeys) +
        '  },',
    )
    .join('\n');
  const source = `// Generated by scripts/embed-lua.mjs from ${relative(root, target.dir)}/<kind>/*.lua. Do not edit by hand.
import type { EmbeddedScript, ScriptArg } from '${target.typesFrom}';
${
  target.layoutVersion
    ? `
/** Version of the scripts' contract and of the public data layout (core README): raised when either changes. */
export const LAYOUT_VERSION = ${LAYOUT_VERSION};
`
    : ''
}
export const SCRIPTS = {
${body}
} as const satisfies Record<string, EmbeddedScript>;

export type ScriptId = keyof typeof SCRIPTS;
`;
  return { path: join(target.dir, target.out), source, count: entries.length };
}

const outputs = TARGETS.map(generate);
if (errors.length > 0) {
  for (const error of errors) console.error(error);
  console.error(`${errors.length} disagreement(s) between Lua headers and code: nothing written.`);
  process.exit(1);
}
if (process.argv.includes('--check')) {
  const stale = outputs.filter((o) => (existsSync(o.path) ? readFileSync(o.path, 'utf8') : '') !== o.source);
  for (const o of stale) console.error(`${relative(root, o.path)} is stale: run \`npm run gen:lua\` and commit it.`);
  if (stale.length > 0) process.exit(1);
  console.log(`lua scripts up to date (${outputs.map((o) => o.count).join(' + ')})`);
} else {
  for (const o of outputs) {
    writeFileSync(o.path, o.source);
    console.log(`wrote ${o.count} scripts to ${relative(root, o.path)}`);
  }
}
