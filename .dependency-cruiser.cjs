// The layers of @org/rlock-core, bottom to top: base (errors, argument
// checks, tasks, observability) ← connection (transport, bounded calls, deployments) ←
// engine (attempts, waiting, holds, renewal) ← objects (one folder per kind)
// ← client (clients, their options, inspect, shutdown). An import may only
// point down. `npm test` runs this (npm run check:layers).
const core = '^packages/core/src/';
/** The paths of the named folders (or files) of core's src. */
const under = (...names) => `${core}(${names.join('|')})`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes two modules one: neither can be read, tested or moved alone.',
      from: { path: core },
      to: { circular: true },
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
      name: 'entry-points-are-not-imported',
      severity: 'error',
      comment: 'index.ts and internal.ts only re-export; modules import what they use from where it lives.',
      from: { path: core },
      to: { path: `${core}(index|internal)\\.ts$` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsConfig: { fileName: 'tsconfig.test.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'] },
  },
};
