// Process boundaries, enforced by lint rather than discipline (docs/architecture.md, "Layout").
// Kept apart from eslint.config.js so a test can lint fixtures against exactly these rules.
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

const electronOnlyInShell = {
  name: 'electron',
  message: "Only electron/main and electron/preload may import 'electron'; keep logic in electron/core.",
};
const noNode = nodeBuiltins.map((name) => ({
  name,
  message: `'${name}' is a Node built-in; this code must run without Node.`,
}));

// Matched as path segments of the import string, so `../node/x.ts` from shared/api is caught too.
const repoDirs = (dirs, message) => dirs.map((dir) => ({ regex: `^(\\.{1,2}/)+(.*/)?${dir}(/|$)`, message }));

/** @type {import('eslint').Linter.Config[]} */
export const boundaries = [
  {
    // Everything: 'electron' is off limits (main/ and preload/ lift this below).
    files: ['**/*.{ts,tsx,js,mjs,cjs}'],
    rules: { 'no-restricted-imports': ['error', { paths: [electronOnlyInShell] }] },
  },
  {
    files: ['electron/main/**', 'electron/preload/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: repoDirs(['renderer'], 'main and preload do not import the renderer.') },
      ],
    },
  },
  {
    files: ['renderer/src/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [electronOnlyInShell, ...noNode],
          patterns: repoDirs(
            ['electron', 'server', 'shared/node'],
            'The renderer reaches main only through src/lib/ipc.ts.',
          ),
        },
      ],
    },
  },
  {
    // Features are composed by the shell (App.tsx, src/app), never the other way round: what a
    // feature shares with the shell (navigation, shortcuts, drag payloads) lives in src/lib, state
    // several screens read in src/stores (.dependency-cruiser.cjs keeps features apart).
    // Repeats the renderer's rules, since a later block's options replace an earlier one's.
    files: ['renderer/src/features/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [electronOnlyInShell, ...noNode],
          patterns: [
            ...repoDirs(
              ['electron', 'server', 'shared/node'],
              'The renderer reaches main only through src/lib/ipc.ts.',
            ),
            {
              regex: '^(\\.{1,2}/)+(.*/)?(app/|App\\.tsx$)',
              message:
                'Renderer features do not import the shell (src/app, App.tsx); share through src/lib or src/stores.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['shared/**'],
    ignores: ['shared/node/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [electronOnlyInShell, ...noNode],
          patterns: repoDirs(
            ['electron', 'server', 'renderer', 'node', 'test', 'bench', 'scripts'],
            'shared/ is isomorphic and imports nothing else from the repo.',
          ),
        },
      ],
    },
  },
  {
    files: ['shared/node/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [electronOnlyInShell],
          patterns: repoDirs(['electron', 'server', 'renderer'], 'shared/node is used by both app and service.'),
        },
      ],
    },
  },
  {
    files: ['server/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [electronOnlyInShell],
          patterns: repoDirs(['electron', 'renderer'], 'The service stands alone: it imports only shared/.'),
        },
      ],
    },
  },
  {
    // The domain (auth, limits, routing, generation, uploads, storage …) does not know it is served over
    // HTTP: only server/http, the composition root (index.ts, service/) and the CLI import the HTTP layer.
    files: ['server/**'],
    ignores: ['server/http/**', 'server/index.ts', 'server/service/**', 'server/cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [electronOnlyInShell],
          patterns: [
            ...repoDirs(['electron', 'renderer'], 'The service stands alone: it imports only shared/.'),
            { regex: '^(\\.{1,2}/)+(.*/)?http(/|$)', message: 'The service domain does not import server/http.' },
          ],
        },
      ],
    },
  },
];
