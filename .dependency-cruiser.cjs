// The import graph's rules (docs/architecture.md, "The app's layers" and "The service's layers"):
// no cycles, no feature importing another, and the service's layers importing only downwards.
// eslint/boundaries.js keeps the processes apart; this file checks what a per-file lint rule
// cannot see, the graph as a whole.

/**
 * The service's layers, lowest first: each may import itself and the layers before it, never one
 * after it. shared/ sits below them all (shared-below-all here, and eslint/boundaries.js).
 */
const SERVER_LAYERS = [
  { name: 'base', holds: 'the error and logger types', path: '^server/(errors|logger)\\.ts$' },
  { name: 'storage', holds: 'the database, blob stores and the generation queue', path: '^server/storage/' },
  { name: 'net', holds: 'address safety, and fetches from addresses a request names', path: '^server/net/' },
  { name: 'providers', holds: 'the providers, their adapters, jobs and webhooks', path: '^server/providers/' },
  {
    name: 'generation',
    holds: 'generations and what they need: routing, limits, keys, uploads, the catalog, the pipeline',
    path: '^server/(generation|routing|limits|auth|uploads|catalog|pipeline|webhooks|retention)/|^server/context\\.ts$',
  },
  { name: 'http', holds: 'the HTTP API', path: '^server/http/' },
  {
    name: 'root',
    holds: 'the composition root: startService, the parts of its start (service/) and the CLI',
    path: '^server/(index\\.ts$|service/|cli/)',
  },
];
const anyLayer = SERVER_LAYERS.map((layer) => `(${layer.path})`).join('|');

/**
 * What the HTTP layer may import of the storage layer itself (docs/architecture.md, "The service's
 * layers", where a change goes): the records a route reads (media, generations, uploads, and the
 * row and database types they are read as), object keys, blob reads for file serving, and the
 * database's unavailable error. Everything else, every write included, goes through the
 * generation layer.
 */
const STORAGE_FOR_HTTP = [
  '^server/storage/(media-repo|media-rows|generations|uploads|layout|db)\\.ts$',
  '^server/storage/blobs/index\\.ts$',
  '^server/storage/sql/unavailable\\.ts$',
].join('|');

/**
 * The app's layers, lowest first (docs/architecture.md, "The app's layers"): the core, the IPC
 * app on it, what serves it (browser mode's host, the MCP server), then the entry points.
 */
const APP_LAYERS = [
  { name: 'core', holds: 'the core services and the v1 client', path: '^electron/core/' },
  { name: 'app', holds: 'the composition root, the IPC router and its handlers', path: '^electron/app/' },
  { name: 'host', holds: "browser mode's host and the MCP server", path: '^electron/(host|mcp)/' },
  { name: 'entry', holds: 'the Electron main process, preload and the CLI', path: '^electron/(main|preload|cli)/' },
];

/** The renderer's layers, lowest first: the bridge and helpers, the shared stores, the screens, the shell. */
const RENDERER_LAYERS = [
  { name: 'lib', holds: 'the bridge and what screens share', path: '^renderer/src/(lib|styles)/' },
  // Its rule is stores-below-screens, below, under the name the tests and messages already use.
  { name: 'stores', holds: 'the shared stores', path: '^renderer/src/stores/', checkedBy: 'stores-below-screens' },
  { name: 'features', holds: 'the screens', path: '^renderer/src/features/' },
  { name: 'shell', holds: 'the shell and the entry', path: '^renderer/src/(app/|App\\.tsx$|main\\.tsx$)' },
];

/** One rule per layer but the top one: it may import itself and the layers before it, never one after it. */
function layerRules(prefix, layers, docsSection) {
  return layers
    .slice(0, -1)
    .flatMap((layer, index) => (layer.checkedBy ? [] : [layerRule(prefix, layers, index, docsSection)]));
}

function layerRule(prefix, layers, index, docsSection) {
  const layer = layers[index];
  return {
    name: `${prefix}-layer-${layer.name}`,
    comment:
      `The ${layer.name} layer (${layer.holds}) imports only itself and the layers below it ` +
      `(docs/architecture.md, "${docsSection}"): take what you need as a narrow type, or move it down.`,
    severity: 'error',
    from: { path: layer.path },
    to: {
      path: layers
        .slice(index + 1)
        .map((above) => `(${above.path})`)
        .join('|'),
    },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'A module reaches itself through its imports: cut the loop by moving what both need below both.',
      severity: 'error',
      from: { path: '^(electron|renderer/src|server)/' },
      to: { circular: true },
    },
    ...layerRules('server', SERVER_LAYERS, "The service's layers"),
    ...layerRules('app', APP_LAYERS, "The app's layers"),
    ...layerRules('renderer', RENDERER_LAYERS, "The app's layers"),
    {
      name: 'app-to-service-through-index',
      comment:
        'The app reaches the service as any client does (docs/architecture.md, "The Local engine\'s process"): ' +
        'only through server/index.ts, which names what it offers; what both need otherwise lives in shared/.',
      severity: 'error',
      from: { path: '^electron/' },
      to: { path: '^server/', pathNot: '^server/index\\.ts$' },
    },
    {
      name: 'http-reads-storage-records-only',
      comment:
        'server/http reads a few storage modules itself (docs/architecture.md, "The service\'s layers": ' +
        'records, object keys, blob reads, the unavailable error); anything else of storage, and every write, ' +
        'goes through the generation layer.',
      severity: 'error',
      from: { path: '^server/http/' },
      to: { path: '^server/storage/', pathNot: STORAGE_FOR_HTTP },
    },
    {
      name: 'shared-below-all',
      comment: 'shared/ is below every layer of the app and the service: it imports none of them.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^(server|electron|renderer)/' },
    },
    {
      name: 'server-module-in-a-layer',
      comment:
        'Every module of server/ belongs to one layer (SERVER_LAYERS above): a new folder is added to the layer it sits in.',
      severity: 'error',
      from: { path: '^server/' },
      to: { path: '^server/.*\\.(ts|json)$', pathNot: anyLayer },
    },
    {
      name: 'no-feature-to-feature',
      comment:
        'Renderer features are composed by the shell and share only src/stores, src/lib and src/app modules, never each other.',
      severity: 'error',
      from: { path: '^renderer/src/features/([^/]+)/' },
      to: { path: '^renderer/src/features/', pathNot: '^renderer/src/features/$1/' },
    },
    {
      name: 'stores-below-screens',
      comment:
        'Shared stores (renderer/src/stores) hold state any screen may read: they import no screen, feature or shell.',
      severity: 'error',
      from: { path: '^renderer/src/stores/' },
      to: { path: '^renderer/src/(features|app)/|^renderer/src/App\\.tsx$' },
    },
    {
      name: 'no-handler-to-handler',
      comment:
        'IPC handlers are thin (parse, call the core, map the result): what two of them need lives in electron/app or the core.',
      severity: 'error',
      from: { path: '^electron/app/handlers/([^/]+)$' },
      to: { path: '^electron/app/handlers/', pathNot: '^electron/app/handlers/$1$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|\\.tsbuild)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    cache: false,
  },
};
