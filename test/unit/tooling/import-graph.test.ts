import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cruise, type IConfiguration, type ICruiseResult } from 'dependency-cruiser';

// The graph rules `npm run lint` checks (.dependency-cruiser.cjs), run on a small tree of fixtures:
// each rule fires on what it forbids and stays quiet on what the app does.
const { forbidden } = createRequire(import.meta.url)('../../../.dependency-cruiser.cjs') as IConfiguration;
const dir = mkdtempSync(join(tmpdir(), 'import-graph-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tree(files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), `${text}\nexport const here = 1;\n`);
  }
}

tree({
  'electron/app/handlers/jobs.ts': "import { route } from '../submit-route.ts';\nexport { route };",
  'electron/app/handlers/compose.ts': "import { x } from './jobs.ts';\nexport { x };",
  'electron/app/submit-route.ts': 'export const route = 1;',
  'electron/core/a.ts': "import { b } from './b.ts';\nexport { b };",
  'electron/core/b.ts': "import { here as a } from './a.ts';\nexport const b = a;",
  'renderer/src/stores/models/index.ts': 'export const models = 1;',
  'renderer/src/stores/toasts/index.ts':
    "import { Screen } from '../../features/queue/Screen.tsx';\nexport { Screen };",
  'renderer/src/features/queue/Screen.tsx':
    "import { models } from '../../stores/models/index.ts';\nexport const Screen = models;",
  'renderer/src/features/library/Tile.tsx': "import { Screen } from '../queue/Screen.tsx';\nexport { Screen };",
  'electron/app/mappers.ts': 'export const map = 1;',
  'electron/core/library/uses-app.ts': "import { map } from '../../app/mappers.ts';\nexport { map };",
  'electron/app/uses-host.ts': "import { serve } from '../host/server.ts';\nexport { serve };",
  'electron/host/server.ts': "import { map } from '../app/mappers.ts';\nexport const serve = map;",
  'electron/main/index.ts': "import { serve } from '../host/server.ts';\nexport { serve };",
  'renderer/src/stores/settings/index.ts': 'export const settings = 1;',
  'renderer/src/lib/format.ts': "import { settings } from '../stores/settings/index.ts';\nexport { settings };",
  'renderer/src/app/Layout.tsx':
    "import { Screen } from '../features/queue/Screen.tsx';\nexport const Layout = Screen;",
  'renderer/src/features/library/Grid.tsx': "import { Layout } from '../../app/Layout.tsx';\nexport { Layout };",
  'server/errors.ts': 'export const ApiError = 1;',
  'server/storage/jobs.ts': "import { adapter } from '../providers/remote/adapter.ts';\nexport { adapter };",
  'server/providers/remote/adapter.ts': "import { ApiError } from '../../errors.ts';\nexport const adapter = ApiError;",
  'server/generation/generate.ts':
    "import { adapter } from '../providers/remote/adapter.ts';\nimport { cycle } from '../http/router.ts';\nexport const generate = [adapter, cycle];",
  'server/http/router.ts': "import { generate } from '../generation/generate.ts';\nexport const cycle = generate;",
  'server/storage/media-repo.ts': 'export const getMedia = 1;',
  'server/storage/leases.ts': 'export const takeLease = 1;',
  'server/http/routes/media.ts':
    "import { getMedia } from '../../storage/media-repo.ts';\nimport { takeLease } from '../../storage/leases.ts';\nexport const media = [getMedia, takeLease];",
  'server/odd/thing.ts': "import { ApiError } from '../errors.ts';\nexport { ApiError };",
  'server/index.ts': "import { here } from './odd/thing.ts';\nexport { here };",
  'electron/core/engine/start.ts': "import { here } from '../../../server/index.ts';\nexport { here };",
  'electron/core/providers/inside.ts':
    "import { adapter } from '../../../server/providers/remote/adapter.ts';\nexport { adapter };",
});

async function violations(roots = ['electron', 'renderer/src']): Promise<string[]> {
  const result = await cruise(roots, {
    baseDir: dir,
    validate: true,
    ruleSet: { forbidden: forbidden ?? [] },
  });
  const output = result.output as ICruiseResult;
  return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
}

describe('the import graph rules', () => {
  it('forbid cycles, feature → feature, handler → handler and stores → screens; allow the rest', async () => {
    const found = await violations();
    expect(found).toEqual(
      expect.arrayContaining([
        'no-cycle: electron/core/a.ts → electron/core/b.ts',
        'no-feature-to-feature: renderer/src/features/library/Tile.tsx → renderer/src/features/queue/Screen.tsx',
        'no-handler-to-handler: electron/app/handlers/compose.ts → electron/app/handlers/jobs.ts',
        'stores-below-screens: renderer/src/stores/toasts/index.ts → renderer/src/features/queue/Screen.tsx',
      ]),
    );
    expect(found.filter((v) => v.includes('submit-route.ts') || v.includes('stores/models'))).toEqual([]);
  });

  it('forbid an app or renderer layer importing one above it; allow importing down', async () => {
    const found = (await violations()).filter((v) => /^(app|renderer)-layer-/.test(v)).sort();
    expect(found).toEqual([
      'app-layer-app: electron/app/uses-host.ts → electron/host/server.ts',
      'app-layer-core: electron/core/library/uses-app.ts → electron/app/mappers.ts',
      'renderer-layer-features: renderer/src/features/library/Grid.tsx → renderer/src/app/Layout.tsx',
      'renderer-layer-lib: renderer/src/lib/format.ts → renderer/src/stores/settings/index.ts',
    ]);
  });

  it('let the app reach the service only through server/index.ts', async () => {
    const found = (await violations()).filter((v) => v.startsWith('app-to-service'));
    expect(found).toEqual([
      'app-to-service-through-index: electron/core/providers/inside.ts → server/providers/remote/adapter.ts',
    ]);
  });

  it('forbid a server layer importing one above it, cycles in server/ and modules in no layer; allow importing down', async () => {
    const found = (await violations(['server'])).sort();
    // The cycle is reported once, from whichever of its two modules the cruise reaches first.
    expect(found.filter((v) => v.startsWith('no-cycle: server/'))).toHaveLength(1);
    expect(found.filter((v) => !v.startsWith('no-cycle') && !v.startsWith('http-'))).toEqual([
      'server-layer-generation: server/generation/generate.ts → server/http/router.ts',
      'server-layer-storage: server/storage/jobs.ts → server/providers/remote/adapter.ts',
      'server-module-in-a-layer: server/index.ts → server/odd/thing.ts',
    ]);
  });

  it('let server/http read only the storage modules the docs name', async () => {
    const found = (await violations(['server'])).filter((v) => v.startsWith('http-'));
    expect(found).toEqual(['http-reads-storage-records-only: server/http/routes/media.ts → server/storage/leases.ts']);
  });
});
