import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createORPCClient } from '@orpc/client';
import { RPCLink } from '@orpc/client/fetch';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startBrowserMode, type BrowserMode } from '../../../electron/host/browser-mode.ts';
import type { IpcClient } from '../../../shared/ipc/client.ts';
import { KEY_SHAPE, TOOL_NAMES, call, connectStdio, durationOf, ok } from './helpers.ts';

/**
 * The "done when": with the app running on the data folder (browser mode, its Local
 * engine), `clipdesk mcp` over stdio goes through it. A 3-shot chain (generate, continue twice,
 * export) within a daily budget set for the test; the shots land in the app's library with their
 * lineage; a fourth shot past the budget is refused naming it. The other tools over stdio too.
 */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const BUDGET = 0.13;
let dir: string;
let mode: BrowserMode;
let ipc: IpcClient;
let client: Client;
let serverLog: () => string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-mcp-chain-'));
  mode = await startBrowserMode({ root, version: '0.0.0-test', dataDir: dir, background: false });
  const cookie = `clipdesk_${mode.host.port}=${mode.host.secret}`;
  ipc = createORPCClient(new RPCLink({ url: `${mode.host.origin}/rpc`, headers: { cookie } }));
  await ipc.profiles.setBudget({ id: 'local', daily: BUDGET, monthly: null });
  ({ client, stderr: serverLog } = await connectStdio(dir));
}, 120_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await mode?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Generation {
  generation_id: string;
  status: string;
  price: number | null;
  media: Array<{ media_id: string; path: string; sidecar_path: string }>;
}
const shot = { model: 'clipdesk/motion', size: '360p', duration: 2, wait: true };

describe('clipdesk mcp over stdio, through the running app', () => {
  it('makes a 3-shot chain within the budget, into the app’s library, and refuses a fourth past it', async () => {
    expect(serverLog()).toContain('through the running app');
    const first = await ok<Generation>(client, 'generate_video', { ...shot, prompt: 'a lighthouse at dusk' });
    const second = await ok<Generation>(client, 'continue_shot', {
      ...shot,
      media_id: first.media[0]!.media_id,
      prompt: 'the beam sweeps over the waves',
    });
    const third = await ok<Generation>(client, 'continue_shot', {
      ...shot,
      media_id: second.media[0]!.media_id,
      prompt: 'night falls on the sea',
    });
    const shots = [first, second, third];
    const ids = shots.map((g) => g.media[0]!.media_id);
    const cut = await ok<{ path: string }>(client, 'export_sequence', { media_ids: ids });

    // The export is the shots back to back.
    const lengths = await Promise.all(shots.map((g) => durationOf(g.media[0]!.path)));
    expect(await durationOf(cut.path)).toBeCloseTo(
      lengths.reduce((a, b) => a + b, 0),
      0,
    );
    // Each shot's lineage names the one before, as the tools and the app both tell it.
    const found = await ok<{ items: Array<{ media_id: string; lineage: { parent_id: string | null } | null }> }>(
      client,
      'search_library',
      { kind: 'video', limit: 10 },
    );
    const parentOf = (id: string) => found.items.find((i) => i.media_id === id)?.lineage?.parent_id;
    expect(ids.map(parentOf)).toEqual([null, ids[0], ids[1]]);
    const chain = await ipc.library.chain({ id: ids[2]! });
    expect(chain.shots.map((s) => [s.itemId, s.parentId])).toEqual([
      [ids[0], null],
      [ids[1], ids[0]],
      [ids[2], ids[1]],
    ]);
    // Spend within the budget, by the tools' prices and by the app's ledger.
    const spent = shots.reduce((n, g) => n + (g.price ?? 0), 0);
    expect(spent).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(BUDGET);
    expect((await ipc.usage.reconcile()).total).toBeLessThanOrEqual(BUDGET);
    // The clips are in the app's library, downloaded.
    const library = await ipc.library.query({ media: 'video' });
    for (const id of ids) expect(library.items.find((i) => i.item.id === id)?.localPath).toBeTruthy();

    // A fourth shot would pass today's cap: refused, naming it, and not left in the app's queue.
    const before = (await ipc.jobs.list()).jobs.length;
    const fourth = await call(client, 'continue_shot', { ...shot, media_id: ids[2], prompt: 'dawn' });
    expect(fourth.isError).toBe(true);
    expect(fourth.text).toMatch(/^budget_exceeded: Over today's budget \(\$0\.\d+ of \$0\.130\)/);
    expect((await ipc.jobs.list()).jobs.length).toBe(before);
  }, 1_800_000);

  it('serves the other tools, the media resources and the prompt over stdio', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
    const answers: string[] = [];
    const keep = async <T>(name: string, args: Record<string, unknown>) => {
      const res = await call(client, name, args);
      answers.push(res.text);
      if (res.isError) throw new Error(`${name} failed: ${res.text}`);
      return res.data as T;
    };
    const { models } = await keep<{ models: Array<{ id: string; kind: string }> }>('list_models', { kind: 'image' });
    expect(models.every((m) => m.kind === 'image')).toBe(true);
    const preview = await keep<{ rows: unknown[] }>('preview_route', { kind: 'image', model: 'clipdesk/still' });
    expect(preview.rows).toHaveLength(3);
    const image = await keep<Generation>('generate_image', {
      model: 'clipdesk/still',
      prompt: 'a gull',
      size: '256x256',
    });
    expect(image.media).toEqual([]);
    const canceled = await keep<Generation>('cancel_generation', { generation_id: image.generation_id });
    expect((await keep<Generation>('get_generation', { generation_id: image.generation_id })).status).toBe(
      canceled.status,
    );
    // The app's queue shows the agent's job.
    expect((await ipc.jobs.get({ id: image.generation_id })).request.prompt).toBe('a gull');

    const { items } = await keep<{ items: Array<{ media_id: string }> }>('search_library', { query: 'lighthouse' });
    const saved = await keep<{ path: string; sidecar_path: string }>('download_media', {
      media_id: items[0]!.media_id,
    });
    expect(existsSync(saved.path) && existsSync(saved.sidecar_path)).toBe(true);
    const read = await client.readResource({ uri: `clipdesk://media/${items[0]!.media_id}` });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ id: items[0]!.media_id });
    const prompt = await client.getPrompt({ name: 'shot_list', arguments: { scene: 'a storm', shots: '2' } });
    expect(JSON.stringify(prompt.messages)).toContain('2 chained shots');

    const bad = await call(client, 'download_media', { media_id: 'med_missing' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/^not_found: /);
    for (const text of [...answers, bad.text, serverLog()]) expect(text).not.toMatch(KEY_SHAPE);
  }, 300_000);
});
