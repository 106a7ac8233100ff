import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { KEY_SHAPE, TOOL_NAMES, call, durationOf, startHttpServer } from './helpers.ts';

/**
 * `clipdesk mcp --http` with no app running: the server runs the core (and its Local engine) itself.
 * The official SDK client drives every tool over Streamable HTTP, behind the bearer secret,
 * within a `--max-spend` cap set for the test (docs/agents.md).
 */
let home: string;
let server: Awaited<ReturnType<typeof startHttpServer>>;
let client: Client;
const texts: string[] = [];

beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'clipdesk-mcp-http-'));
  server = await startHttpServer(home, ['--data', path.join(home, 'data'), '--max-spend', '0.1']);
  client = new Client({ name: 'clipdesk-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { authorization: `Bearer ${server.secret}` } },
    }),
  );
}, 90_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await server?.stop();
  await rm(home, { recursive: true, force: true });
});

/** Every answer's text is kept: none may carry a key. */
async function tool<T = Record<string, unknown>>(
  name: string,
  args: Record<string, unknown>,
  onprogress?: (p: Progress) => void,
) {
  const res = await call(client, name, args, onprogress);
  texts.push(res.text);
  if (res.isError) throw new Error(`${name} failed: ${res.text}`);
  return res.data as T;
}

interface Generation {
  generation_id: string;
  status: string;
  price: number | null;
  media: Array<{ media_id: string; path: string; sidecar_path: string }>;
}

describe('clipdesk mcp --http', () => {
  it('answers only on loopback, to the bearer secret, from its own origin', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} };
    const post = (headers: Record<string, string>) =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(init),
      });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post({ authorization: `Bearer ${server.secret}`, origin: 'https://evil.example' })).status).toBe(403);
    expect(server.url.startsWith('http://127.0.0.1:')).toBe(true);
  });

  it('lists exactly the tools, each with an output schema and honest annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
    for (const t of tools) expect(t.outputSchema?.type, t.name).toBe('object');
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    for (const name of ['list_models', 'preview_route', 'get_generation', 'search_library'])
      expect(hints[name]?.readOnlyHint, name).toBe(true);
    for (const name of ['generate_video', 'generate_image', 'continue_shot'])
      expect(hints[name], name).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(hints['cancel_generation']).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    });
  });

  it('drives every tool against the Local engine, within --max-spend', async () => {
    const { models } = await tool<{ models: Array<{ id: string; offers: unknown[] }> }>('list_models', {
      kind: 'video',
      search: 'motion',
    });
    expect(models.map((m) => m.id)).toEqual(['clipdesk/motion']);
    expect(models[0]!.offers.length).toBeGreaterThan(0);

    const preview = await tool<{ rows: Array<{ routing: string; price: number }> }>('preview_route', {
      kind: 'video',
      model: 'clipdesk/motion',
      size: '360p',
      duration: 2,
    });
    expect(preview.rows.map((r) => r.routing)).toEqual(['optimal', 'cheapest', 'compatible']);

    // An image, waited for: progress while it renders and downloads, then the file and its sidecar.
    const progress: Progress[] = [];
    const image = await tool<Generation>(
      'generate_image',
      { model: 'clipdesk/still', prompt: 'a lighthouse at dusk', size: '256x256', wait: true },
      (p) => progress.push(p),
    );
    expect(image.status).toBe('done');
    expect(progress.length).toBeGreaterThan(0);
    const imageFile = image.media[0]!;
    expect(existsSync(imageFile.path)).toBe(true);
    expect(existsSync(imageFile.sidecar_path)).toBe(true);

    // Without wait: the id at once; then cancelled.
    const queued = await tool<Generation>('generate_video', {
      model: 'clipdesk/motion',
      prompt: 'waves',
      size: '360p',
      duration: 2,
    });
    expect(queued.generation_id).toBeTruthy();
    expect(queued.media).toEqual([]);
    const canceled = await tool<Generation>('cancel_generation', { generation_id: queued.generation_id });
    expect(['canceled', 'done']).toContain(canceled.status);
    expect((await tool<Generation>('get_generation', { generation_id: queued.generation_id })).status).toBe(
      canceled.status,
    );

    const first = await tool<Generation>('generate_video', {
      model: 'clipdesk/motion',
      prompt: 'a lighthouse at dusk, waves below',
      size: '360p',
      duration: 2,
      wait: true,
    });
    const a = first.media[0]!.media_id;
    const next = await tool<Generation>('continue_shot', {
      media_id: a,
      prompt: 'the beam sweeps over the sea',
      size: '360p',
      duration: 2,
      wait: true,
    });
    const b = next.media[0]!.media_id;

    const found = await tool<{ items: Array<{ media_id: string; path: string | null; lineage: unknown }> }>(
      'search_library',
      { kind: 'video', limit: 10 },
    );
    expect(found.items.find((i) => i.media_id === b)?.lineage).toEqual({ chain_id: a, position: 2, parent_id: a });

    const saved = await tool<{ path: string; sidecar_path: string }>('download_media', {
      media_id: imageFile.media_id,
    });
    expect(saved.path).toBe(imageFile.path);
    expect(JSON.parse(readFileSync(saved.sidecar_path, 'utf8'))).toMatchObject({ id: imageFile.media_id });

    const cut = await tool<{ path: string }>('export_sequence', {
      media_ids: [a, b],
      trims: [null, { start: 0, end: 1 }],
    });
    expect(await durationOf(cut.path)).toBeCloseTo(3, 0);

    // The resource and the prompt.
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain(`clipdesk://media/${imageFile.media_id}`);
    const read = await client.readResource({ uri: `clipdesk://media/${imageFile.media_id}` });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ id: imageFile.media_id });
    expect(read.contents[1]?.mimeType).toMatch(/^image\//);
    const prompt = await client.getPrompt({ name: 'shot_list', arguments: { scene: 'a lighthouse at dusk' } });
    expect(JSON.stringify(prompt.messages)).toContain('continue_shot');

    // Past the session's cap: refused, naming it. Errors are tool errors, the server carries on.
    const over = await call(client, 'continue_shot', { media_id: b, prompt: 'night falls', size: '360p', duration: 2 });
    expect(over.isError).toBe(true);
    expect(over.text).toMatch(/^budget_exceeded: .*--max-spend cap \(\$0\.\d+ of \$0\.100\)/);
    // An end frame only with a start image, and only where the model names end_image_url.
    const endAlone = await call(client, 'generate_video', {
      model: 'clipdesk/motion',
      prompt: 'no start',
      end_image_url: 'https://media.example/end.png',
    });
    expect(endAlone.text).toMatch(/^invalid_input: An end frame needs a start image/);
    const endOnMotion = await call(client, 'generate_video', {
      model: 'clipdesk/motion',
      prompt: 'no end frame here',
      image_url: 'https://media.example/start.png',
      end_image_url: 'https://media.example/end.png',
    });
    expect(endOnMotion.text).toBe(
      'invalid_input: clipdesk/motion takes no end frame (its parameters name no end_image_url)',
    );
    const missing = await call(client, 'get_generation', { generation_id: 'job_nope' });
    expect(missing).toMatchObject({ isError: true });
    expect(missing.text).toMatch(/^not_found: /);
    texts.push(over.text, missing.text);
    for (const text of texts) expect(text).not.toMatch(KEY_SHAPE);
  }, 1_800_000);
});
