// Fails when a code comment or a doc cites a file that does not exist, so a
// rename (a Lua script, a module, a guide) cannot leave a reader following a
// name to nothing. Scans the comments of packages/*/src/** and scripts/**/*.mjs
// (the generated script modules are their .lua files again), and the text of
// packages/*/README.md, docs/**/*.md and README.md, for path-like words ending
// in .lua, .ts, .mjs or .md, and resolves each against, in turn:
//
// - the citing file's folder (a sibling, `./<file>`, `../<file>`);
// - the repository root (scripts/embed-lua.mjs, docs/lock.md; `./<path>` too,
//   as a command run from the root names it);
// - each package and its src (connection/transport.ts in core's src);
// - core's objects/ and its kind folders (and Redlock's lease-lock/), so a
//   guide may name lock/acquire.lua, a script beside one it already placed
//   (objects/fair-queue/acquire.lua, then release.lua), or an include
//   (mint-token.lua).
//
// Skipped: URLs, placeholders and globs (`<kind>/<name>.lua`, `*.lua`,
// `${name}.lua`), code outside comments (a property access looks like a file
// name), and fenced code blocks of the docs (examples of user code). Plain
// Node, no dependency; prints each unresolved reference as file:line.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', 'coverage']);

function walk(dir, keep, out = []) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir)) {
    if (SKIP_DIRS.has(entry)) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) walk(path, keep, out);
    else if (keep(path)) out.push(path);
  }
  return out;
}

const packages = readdirSync(join(root, 'packages')).filter((p) => statSync(join(root, 'packages', p)).isDirectory());
const text = (path) => /\.(ts|mts|cts|lua|mjs|cjs|js|md)$/.test(path) && !path.endsWith('.generated.ts');
const isMarkdown = (path) => path.endsWith('.md');
const isLua = (path) => path.endsWith('.lua');
const scanned = [
  ...packages.flatMap((p) => walk(join(root, 'packages', p, 'src'), text)),
  ...packages.map((p) => join(root, 'packages', p, 'README.md')).filter((p) => existsSync(p)),
  ...walk(join(root, 'scripts'), (path) => path.endsWith('.mjs')),
  // docs/api/ is the API site `npm run docs` builds (not committed): its copies of the guides are checked at their source.
  ...walk(join(root, 'docs'), (path) => path.endsWith('.md') && !path.startsWith(join(root, 'docs/api/'))),
  join(root, 'README.md'),
];

const objects = join(root, 'packages/core/src/objects');
const kindDirs = readdirSync(objects)
  .map((k) => join(objects, k))
  .filter((p) => statSync(p).isDirectory());
// Redlock's lease lock keeps its scripts beside core's kinds' (scripts/embed-lua.mjs embeds both).
const leaseLock = join(root, 'packages/redlock/src/lease-lock');
const bases = [root, ...packages.flatMap((p) => [join(root, 'packages', p), join(root, 'packages', p, 'src')]), objects, ...kindDirs, leaseLock];

/** A reference: a path of words, `.` and `..`, ending in one of the extensions, not glued to a longer word or URL. */
const REFERENCE = /(?<![\w./@~:-])((?:\.{1,2}\/)*(?:[\w@-][\w.@-]*\/)*[\w-][\w.-]*\.(?:lua|ts|mjs|md))(?![\w/-]|\.\w)/g;
const URL_OR_PLACEHOLDER = /\b[a-z][a-z+]*:\/\/\S+|\S*[<>*{}$]\S*/g;

const exists = (path) => existsSync(path) && statSync(path).isFile();

function resolves(reference, citing) {
  if (exists(resolve(dirname(citing), reference))) return true;
  if (reference.startsWith('../')) return false;
  if (reference.startsWith('./')) return exists(join(root, reference));
  return bases.some((base) => exists(join(base, reference)));
}

/**
 * The text of each line a reference may be in: all of a doc outside its fenced
 * blocks; a script's comments (`//`, `/* … *\/`; Lua's `--`, `--[[ … ]]`).
 */
function citingText(file, source) {
  const lines = source.split('\n');
  if (isMarkdown(file)) {
    let fenced = false;
    return lines.map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    });
  }
  const [open, close, lineComment] = isLua(file) ? ['--[[', ']]', '--'] : ['/*', '*/', '//'];
  let inBlock = false;
  return lines.map((line) => {
    let out = '';
    let rest = line;
    while (rest.length > 0) {
      if (inBlock) {
        const end = rest.indexOf(close);
        out += ` ${end < 0 ? rest : rest.slice(0, end)}`;
        if (end < 0) break;
        inBlock = false;
        rest = rest.slice(end + close.length);
        continue;
      }
      const start = rest.indexOf(open);
      const single = rest.indexOf(lineComment);
      if (single >= 0 && (start < 0 || single < start)) {
        out += ` ${rest.slice(single + lineComment.length)}`;
        break;
      }
      if (start < 0) break;
      inBlock = true;
      rest = rest.slice(start + open.length);
    }
    return out;
  });
}

const missing = [];
let count = 0;
for (const file of scanned) {
  citingText(file, readFileSync(file, 'utf8')).forEach((line, n) => {
    for (const match of line.replace(URL_OR_PLACEHOLDER, ' ').matchAll(REFERENCE)) {
      count++;
      if (!resolves(match[1], file)) missing.push(`${relative(root, file)}:${n + 1}: ${match[1]} does not exist`);
    }
  });
}

if (missing.length > 0) {
  for (const line of missing) console.error(line);
  console.error(`${missing.length} reference(s) to files that do not exist: rename them with the file, or drop them.`);
  process.exit(1);
}
console.log(`file references resolve (${count} in ${scanned.length} files)`);
