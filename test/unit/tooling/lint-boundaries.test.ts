import { describe, expect, it } from 'vitest';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { boundaries } from '../../../eslint/boundaries.js';

// Lints small fixtures, placed at virtual paths, against the exact boundary rules that
// eslint.config.js uses. Proves each rule both fires and stays quiet where it should.
const linter = new Linter({ configType: 'flat' });
const config = [{ files: ['**/*.{ts,tsx}'], languageOptions: { parser: tseslint.parser } }, ...boundaries];

function violations(filename: string, code: string): string[] {
  return linter
    .verify(code, config, { filename })
    .filter((m) => m.ruleId === 'no-restricted-imports')
    .map((m) => m.message);
}

describe('import boundaries', () => {
  it.each([
    ['electron/main/platform/window.ts', true],
    ['electron/preload/index.ts', true],
    ['electron/core/api/client.ts', false],
    ['electron/cli/main.ts', false],
    ['server/http/app.ts', false],
    ['shared/api/index.ts', false],
    ['renderer/src/App.tsx', false],
  ])("'electron' in %s allowed: %s", (file, allowed) => {
    expect(violations(file, "import { app } from 'electron';\nexport { app };").length === 0).toBe(allowed);
  });

  it('keeps Node built-ins out of the renderer', () => {
    expect(violations('renderer/src/lib/ipc.ts', "import fs from 'node:fs';\nexport { fs };")).toHaveLength(1);
    expect(violations('renderer/src/lib/ipc.ts', "import path from 'path';\nexport { path };")).toHaveLength(1);
    expect(violations('renderer/src/lib/ipc.ts', "import { create } from 'zustand';\nexport { create };")).toEqual([]);
  });

  it('keeps the renderer on the contract, not on main or the service', () => {
    expect(
      violations('renderer/src/App.tsx', "import { x } from '../../electron/core/api/client.ts';\nexport { x };"),
    ).toHaveLength(1);
    expect(
      violations('renderer/src/App.tsx', "import { x } from '../../server/index.ts';\nexport { x };"),
    ).toHaveLength(1);
    expect(
      violations(
        'renderer/src/App.tsx',
        "import type { Contract } from '../../shared/ipc/index.ts';\nexport type { Contract };",
      ),
    ).toEqual([]);
  });

  it('keeps renderer features from importing the shell', () => {
    const feature = 'renderer/src/features/library/components/DetailPanel.tsx';
    expect(
      violations(feature, "import { Sidebar } from '../../../app/Sidebar.tsx';\nexport { Sidebar };"),
    ).toHaveLength(1);
    expect(violations(feature, "import { App } from '../../../App.tsx';\nexport { App };")).toHaveLength(1);
    // The rest of the renderer's rules still hold inside a feature.
    expect(violations(feature, "import fs from 'node:fs';\nexport { fs };")).toHaveLength(1);
    expect(
      violations(feature, "import { x } from '../../../../../electron/core/api/client.ts';\nexport { x };"),
    ).toHaveLength(1);
    expect(
      violations(
        feature,
        "import { useShell } from '../../../lib/shell/index.ts';\nimport { useQueue } from '../../queue/store/index.ts';\nexport { useShell, useQueue };",
      ),
    ).toEqual([]);
    // The shell composes the features.
    expect(
      violations(
        'renderer/src/app/Sidebar.tsx',
        "import { useQueue } from '../features/queue/store/index.ts';\nexport { useQueue };",
      ),
    ).toEqual([]);
  });

  it('keeps shared/ isomorphic and self-contained', () => {
    expect(
      violations('shared/api/media.ts', "import { readFile } from 'node:fs/promises';\nexport { readFile };"),
    ).toHaveLength(1);
    expect(
      violations('shared/api/media.ts', "import { x } from '../../server/storage/db.ts';\nexport { x };"),
    ).toHaveLength(1);
    expect(violations('shared/api/media.ts', "import { x } from '../node/ffmpeg.ts';\nexport { x };")).toHaveLength(1);
    expect(
      violations(
        'shared/api/media.ts',
        "import { z } from 'zod';\nimport { TIERS } from './tiers.ts';\nexport { z, TIERS };",
      ),
    ).toEqual([]);
  });

  it('lets shared/node use Node but not the app or the service', () => {
    expect(
      violations('shared/node/hash.ts', "import { createHash } from 'node:crypto';\nexport { createHash };"),
    ).toEqual([]);
    expect(violations('shared/node/hash.ts', "import { x } from '../../server/index.ts';\nexport { x };")).toHaveLength(
      1,
    );
  });

  it('keeps the service independent of the app', () => {
    expect(
      violations('server/index.ts', "import { x } from '../electron/core/api/client.ts';\nexport { x };"),
    ).toHaveLength(1);
    expect(violations('server/index.ts', "import { TIERS } from '../shared/api/index.ts';\nexport { TIERS };")).toEqual(
      [],
    );
  });

  it('keeps the service domain from importing its HTTP layer', () => {
    expect(
      violations('server/media/generate.ts', "import { json } from '../http/router.ts';\nexport { json };"),
    ).toHaveLength(1);
    expect(
      violations('server/media/generate.ts', "import { ApiError } from '../errors.ts';\nexport { ApiError };"),
    ).toEqual([]);
    expect(violations('server/index.ts', "import { json } from './http/router.ts';\nexport { json };")).toEqual([]);
  });
});
