import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Generation } from '../../../shared/api/index.ts';
import { API_COMPONENTS, apiComponentSchemas } from '../../../shared/api/openapi.ts';
import { recordDelivery } from '../../../server/webhooks/deliveries.ts';
import { checkSchema } from '../../support/json-schema.ts';
import type { Schema } from '../../support/json-schema.ts';
import { generated, makePng, openTestDatabase, single, startTestService } from './helpers.ts';
import type { ApiResponse, TestClient, TestService } from './helpers.ts';

/**
 * `/v1/openapi.json` is generated from the zod schemas of shared/api. These tests hold real
 * responses of the engine against the document itself (the schema each path names for its
 * status), with every object closed, so a field the service sends that the schemas do not
 * describe, or a path that names the wrong schema, fails here.
 */
interface Doc {
  openapi: string;
  paths: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema: Schema }> }> }>
  >;
  components: { schemas: Record<string, Schema> };
}

let t: TestService;
let c: TestClient;
let doc: Doc;
beforeAll(async () => {
  t = await startTestService();
  c = await t.client('documented', 'pro');
  const res = await fetch(`${t.service.url}/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as Doc;
});
afterAll(async () => {
  await t.stop();
});

/** The response schema the document gives for a path, method and status. */
function documented(path: string, method: string, status: number): Schema {
  const schema = doc.paths[path]?.[method]?.responses?.[String(status)]?.content?.['application/json']?.schema;
  if (!schema) throw new Error(`the document has no JSON response for ${method.toUpperCase()} ${path} ${status}`);
  return schema;
}

function conforms(res: ApiResponse, path: string, method: string): void {
  const errors = checkSchema(res.body, documented(path, method, res.status), {
    closed: true,
    resolve: (ref) => doc.components.schemas[ref.replace('#/components/schemas/', '')],
  });
  expect(errors, `${method.toUpperCase()} ${path} ${res.status}`).toEqual([]);
}

describe('GET /v1/openapi.json', () => {
  it('its component schemas are zod’s JSON Schema of the shared/api schemas', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.schemas).toEqual(JSON.parse(JSON.stringify(apiComponentSchemas())));
    // And each is the schema zod gives for that shared/api schema alone (references aside).
    const media = z.toJSONSchema(API_COMPONENTS.MediaItem, { io: 'input' }) as { properties: object };
    expect(Object.keys((doc.components.schemas['MediaItem'] as { properties: object }).properties)).toEqual(
      Object.keys(media.properties),
    );
  });

  it('every $ref in the paths resolves to a component', () => {
    const refs = [...JSON.stringify(doc.paths).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(20);
    for (const name of refs) expect(doc.components.schemas, name).toHaveProperty(name!);
  });

  it('the engine’s real responses conform to the document', async () => {
    conforms(await c.call('GET', '/models'), '/models', 'get');
    conforms(await c.call('GET', '/models/clipdesk%2Fmotion'), '/models/{id}', 'get');
    conforms(await c.call('GET', '/models/nope%2Fnope'), '/models/{id}', 'get');
    conforms(await c.call('GET', '/providers'), '/providers', 'get');
    conforms(await c.call('GET', '/providers/prism'), '/providers/{id}', 'get');
    conforms(await c.call('GET', '/usage'), '/usage', 'get');

    const png = await readFile(await makePng(t.dataDir, 'doc.png'));
    const ticket = await c.call('POST', '/media/upload', { filename: 'doc.png', mime: 'image/png', size: png.length });
    conforms(ticket, '/media/upload', 'post');
    await fetch(String(ticket.body.result.uploadUrl), { method: 'PUT', body: new Uint8Array(png) });
    const done = await c.call('POST', `/media/${ticket.body.result.id}`);
    conforms(done, '/media/{id}', 'post');
    conforms(await c.call('POST', '/media/upload', { filename: 'x' }), '/media/upload', 'post');

    const gen = await c.call('POST', '/images/generations', {
      model: 'clipdesk/still',
      prompt: 'a documented kite',
      size: '256x256',
      unknown_knob: 1,
    });
    conforms(gen, '/images/generations', 'post');
    const item = generated(gen.body)[0]!;
    conforms(
      await c.call('POST', '/videos/generations', { model: 'clipdesk/motion', prompt: 'x', duration: 99 }),
      '/videos/generations',
      'post',
    );

    // docs/workflows.md: a preview with a dropped parameter, one with an error row, and a refused body.
    for (const body of [
      { model: 'clipdesk/motion', prompt: 'x', size: '360p', image_url: 'https://example.test/a.png' },
      { model: 'clipdesk/still', prompt: 'x', mood: 'calm' },
      { model: 'clipdesk/motion', prompt: 'x', duration: 99 },
    ])
      conforms(await c.call('POST', '/routing/preview', body), '/routing/preview', 'post');

    conforms(await c.call('GET', '/media?user=me'), '/media', 'get');
    conforms(await c.call('GET', `/media/${item.id}`), '/media/{id}', 'get');
    conforms(await c.call('GET', `/media/${single(done.body).id}`), '/media/{id}', 'get');
    conforms(await c.call('POST', `/media/${item.id}/retain`, { days: 2 }), '/media/{id}/retain', 'post');
    conforms(await c.call('GET', '/media?limit=0'), '/media', 'get');
  });

  it('GET /webhooks/deliveries and the webhook body conform to the document', async () => {
    conforms(await c.call('GET', '/webhooks/deliveries'), '/webhooks/deliveries', 'get');
    conforms(await c.call('GET', '/webhooks/deliveries?state=lost'), '/webhooks/deliveries', 'get');
    const generation = Generation.parse({
      id: 'gen_doc',
      object: 'generation',
      operation: 'images.generations',
      status: 'failed',
      createdAt: '2026-01-01T12:00:00.000Z',
      updatedAt: '2026-01-01T12:00:01.000Z',
      error: { type: 'provider_unavailable', message: 'no provider' },
    });
    const db = await openTestDatabase(t.dataDir);
    // Recorded only: the service's dispatcher is not woken, and 192.0.2.1 is refused anyway.
    const row = await recordDelivery(db, Date.now(), generation, { url: 'http://192.0.2.1/hook', keyId: c.keyId });
    await db.close();
    const list = await c.call('GET', '/webhooks/deliveries?limit=5');
    expect(list.body.result.total).toBe(1);
    conforms(list, '/webhooks/deliveries', 'get');
    const raw = doc as unknown as {
      webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: Schema }> } } }>;
    };
    const eventSchema = raw.webhooks['generation.finished']?.post.requestBody.content['application/json']?.schema;
    expect(eventSchema).toBeDefined();
    const resolve = (ref: string) => doc.components.schemas[ref.replace('#/components/schemas/', '')];
    expect(checkSchema(JSON.parse(row!.payload), eventSchema!, { closed: true, resolve })).toEqual([]);
  });

  it('the checker catches drift: an undescribed field or a wrong type fails', () => {
    const resolve = (ref: string) => doc.components.schemas[ref.replace('#/components/schemas/', '')];
    const schema = documented('/providers/{id}', 'get', 200);
    const provider = { id: 'p', slug: 'p', name: 'P', status: 'available', models: [], features: [] };
    expect(checkSchema({ success: true, result: provider }, schema, { closed: true, resolve })).toEqual([]);
    expect(
      checkSchema({ success: true, result: { ...provider, sizes: [] } }, schema, { closed: true, resolve }),
    ).toEqual(['$.result.sizes: not described by the schema']);
    expect(checkSchema({ success: true, data: provider }, schema, { closed: true, resolve }).length).toBeGreaterThan(0);
  });
});
