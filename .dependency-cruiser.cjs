// What may import what, in every package. `npm test` runs this (npm run check:layers).
//
// Between packages: each package's source imports only the packages (workspace or npm) its package.json
// lists, a workspace package only through its entry points (what `exports` publishes); testing (real Redis
// fleets) is for tests, never for the src of a published package. Inside @org/rlock-core, the layers bottom
// to top: base (errors, argument checks, tasks, observability) ← connection (transport, bounded calls,
// deployments) ← engine (attempts, waiting, holds, renewal) ← objects (one folder per kind) ← client
// (clients, their options, inspect, shutdown). An import may only point down. Inside objects, the lock
// (objects/lock/) is the base the other kinds build on, and a part (objects/fair-queue/) builds on it for
// several kinds: a kind's folder imports the lock, parts, shared objects/* files and its own folder, never
// another kind's.
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

/** The workspace packages: folder name → the names of the other workspace packages its package.json lists. */
const packagesDir = join(__dirname, 'packages');
const packages = readdirSync(packagesDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => {
    const manifest = JSON.parse(readFileSync(join(packagesDir, entry.name, 'package.json'), 'utf8'));
    return { folder: entry.name, name: manifest.name, private: manifest.private === true, manifest };
  });
const folderOf = new Map(packages.map((pkg) => [pkg.name, pkg.folder]));
/** Workspace packages `pkg` may import from its src: those in its dependencies or peerDependencies. */
const declaredFolders = (pkg) =>
  Object.keys({ ...pkg.manifest.dependencies, ...pkg.manifest.peerDependencies })
    .filter((name) => folderOf.has(name))
    .map((name) => folderOf.get(name));
/** A regex alternation of folder names (`(?!)` — matches nothing — for none). */
const anyOf = (folders) => (folders.length === 0 ? '(?!)' : `(${folders.join('|')})`);

/** The files each package publishes as entry points (its package.json `exports`, as src paths). */
const entryPoints = (pkg) =>
  Object.keys(pkg.manifest.exports ?? { '.': null })
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => (subpath === '.' ? 'index' : subpath.slice(2)));

const core = '^packages/core/src/';
/** The paths of the named folders (or files) of core's src. */
const under = (...names) => `${core}(${names.join('|')})`;
const objects = `${core}objects/`;
/** Folders of objects/ that are no kind: shared by every kind (inspect's reads, the Lua includes). */
const SHARED_OBJECT_FOLDERS = ['inspect', 'includes'];
/** Folders of objects/ that are no kind but what several kinds are made of (the fair locks' queue), built on the lock. */
const PARTS = ['fair-queue'];
/** What a kind may build on besides its own folder. */
const BASES = ['lock', ...PARTS, ...SHARED_OBJECT_FOLDERS];

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes two modules one: neither can be read, tested or moved alone.',
      from: { path: '^packages/[^/]+/src/' },
      to: { circular: true },
    },
    ...packages.map((pkg) => ({
      name: `${pkg.folder}-imports-declared-packages`,
      severity: 'error',
      comment: `${pkg.name} imports only the workspace packages its package.json lists: an unlisted one works here and breaks when published.`,
      from: { path: `^packages/${pkg.folder}/src/` },
      to: { path: `^packages/(?!${anyOf([pkg.folder, ...declaredFolders(pkg)])}/)[^/]+/` },
    })),
    ...packages.map((pkg) => ({
      name: `${pkg.folder}-imported-through-entry-points`,
      severity: 'error',
      comment: `Another package (src or test) uses ${pkg.name} only through what it publishes (${entryPoints(pkg).join(', ')}): its other files may change in any release.`,
      from: { path: '^packages/[^/]+/', pathNot: `^packages/${pkg.folder}/` },
      to: { path: `^packages/${pkg.folder}/`, pathNot: `^packages/${pkg.folder}/src/${anyOf(entryPoints(pkg))}\\.ts$` },
    })),
    {
      name: 'src-imports-declared-npm-packages',
      severity: 'error',
      comment:
        "A package's source imports only npm packages its own package.json lists (dependencies or peerDependencies): one hoisted from another package's works here and breaks when published.",
      from: { path: '^packages/[^/]+/src/' },
      // A listed dependency may carry npm-no-pkg too (seen for an optional peer loaded by import()): listed wins.
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown', 'npm-dev'], dependencyTypesNot: ['npm', 'npm-peer', 'npm-optional'] },
    },
    {
      name: 'published-src-uses-no-test-fleet',
      severity: 'error',
      comment: 'The testing package (real redis-server fleets) is private and for tests: published code never needs it.',
      from: { path: `^packages/${anyOf(packages.filter((pkg) => !pkg.private).map((pkg) => pkg.folder))}/src/` },
      to: { path: `^packages/${folderOf.get('@org/rlock-testing')}/` },
    },
    {
      name: 'base-imports-no-layer',
      severity: 'error',
      comment: 'errors, argument checks, tasks and observability are what every layer builds on.',
      from: { path: under('errors\\.ts', 'checks/', 'tasks/', 'observability/') },
      to: { path: under('connection/', 'engine/', 'objects/', 'client/') },
    },
    {
      name: 'connection-knows-no-engine',
      severity: 'error',
      comment: 'The connection layer is given the scripts it loads; it knows no hold, waiter or object.',
      from: { path: under('connection/') },
      to: { path: under('engine/', 'objects/', 'client/') },
    },
    {
      name: 'engine-knows-no-object',
      severity: 'error',
      comment: 'The engine is generic over grants: an object plugs into it, never the reverse.',
      from: { path: under('engine/') },
      to: { path: under('objects/', 'client/') },
    },
    {
      name: 'objects-know-no-client',
      severity: 'error',
      comment: 'An object kind is built from the engine and handed to the client, which it does not see.',
      from: { path: under('objects/') },
      to: { path: under('client/') },
    },
    {
      name: 'kind-imports-no-other-kind',
      severity: 'error',
      // What several kinds share (a lock variant such as fair or non-reentrant, its scripts, a report shape) lives
      // in objects/lock/ or a shared objects/* file, not in the folder of the kind that had it first.
      comment:
        "A kind's folder builds on the lock (objects/lock/) and shared objects/* files, never on another kind's folder: each kind can be read, changed or removed alone.",
      from: { path: `${objects}([^/]+)/`, pathNot: `${objects}${anyOf(BASES)}/` },
      to: { path: `${objects}[^/]+/`, pathNot: `${objects}($1|${BASES.join('|')})/` },
    },
    {
      name: 'part-imports-no-kind',
      severity: 'error',
      comment: 'A part (objects/fair-queue/) serves several kinds: it builds on the lock and shared files, never on a kind.',
      from: { path: `${objects}${anyOf(PARTS)}/` },
      to: { path: `${objects}[^/]+/`, pathNot: `${objects}${anyOf(BASES)}/` },
    },
    {
      name: 'lock-imports-no-kind',
      severity: 'error',
      comment: 'The lock is the base every lock kind builds on: it imports no kind, so nothing runs back up.',
      from: { path: `${objects}lock/` },
      to: { path: `${objects}[^/]+/`, pathNot: `${objects}${anyOf(['lock', ...SHARED_OBJECT_FOLDERS])}/` },
    },
    {
      name: 'shared-objects-import-no-kind',
      severity: 'error',
      comment: 'Shared objects/* files and folders serve every kind; only the registry (objects/kinds.ts) lists the kinds.',
      from: { path: `${objects}([^/]+\\.ts$|${anyOf(SHARED_OBJECT_FOLDERS)}/)`, pathNot: `${objects}kinds\\.ts$` },
      to: { path: `${objects}[^/]+/`, pathNot: `${objects}${anyOf(SHARED_OBJECT_FOLDERS)}/` },
    },
    {
      name: 'entry-points-are-not-imported',
      severity: 'error',
      comment: 'index.ts and internal.ts only re-export; modules import what they use from where it lives.',
      from: { path: core },
      to: { path: `${core}(index|internal)\\.ts$` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/' },
    tsConfig: { fileName: 'tsconfig.test.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'] },
  },
};
