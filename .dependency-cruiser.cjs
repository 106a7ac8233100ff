// The import graph's rules for the app (docs/architecture.md, "The app's layers"): no cycles, and
// no feature importing another. eslint/boundaries.js keeps the processes apart; this file checks
// what a per-file lint rule cannot see, the graph as a whole. server/ joins when it is layered.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'A module reaches itself through its imports: cut the loop by moving what both need below both.',
      severity: 'error',
      from: { path: '^(electron|renderer/src)/' },
      to: { circular: true },
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
