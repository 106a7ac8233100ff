// The tools' JSON schemas as `tools/list` sends them use spellings every MCP client reads: the
// MCP Inspector's schema portability check (`npm run mcp:inspect`, docs/agents.md) finds nothing.
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createClipdeskMcpServer } from '../../../../electron/mcp/server.ts';
import { createSessionSpend } from '../../../../electron/mcp/guardrails.ts';
import type { McpBackend } from '../../../../electron/mcp/backend.ts';

/** Listing the tools calls no backend: one that fails if asked anything. */
const backend = {
  ipc: new Proxy(
    {},
    {
      get: () => {
        throw new Error('the backend was called');
      },
    },
  ),
  via: 'core',
  dataDir: '/nowhere',
  roots: () => Promise.resolve([]),
  close: () => Promise.resolve(),
} as unknown as McpBackend;

/** Keywords that describe a value without constraining it. */
const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', '$schema', '$comment']);

/** Every place in a schema a portable client would stumble on, by its path. */
function problems(schema: unknown, path: string): string[] {
  if (schema === true || schema === false || schema === null || typeof schema !== 'object') return [];
  if (Array.isArray(schema)) return schema.flatMap((s, i) => problems(s, `${path}[${i}]`));
  const node = schema as Record<string, unknown>;
  const found: string[] = [];
  if (Array.isArray(node['type'])) found.push(`${path}: type is an array`);
  if (Object.keys(node).every((k) => ANNOTATIONS.has(k))) found.push(`${path}: no validation keyword`);
  for (const key of ['items', 'additionalProperties', 'not'])
    if (key in node) found.push(...problems(node[key], `${path}.${key}`));
  for (const key of ['anyOf', 'oneOf', 'allOf']) if (key in node) found.push(...problems(node[key], `${path}.${key}`));
  for (const key of ['properties', 'definitions', '$defs'])
    for (const [name, sub] of Object.entries((node[key] as Record<string, unknown> | undefined) ?? {}))
      found.push(...problems(sub, `${path}.${key}.${name}`));
  return found;
}

describe('clipdesk mcp tool schemas', () => {
  it('have no type arrays and no schema without a validation keyword', async () => {
    const server = createClipdeskMcpServer(backend, createSessionSpend(null), '0.0.0');
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      const found = tools.flatMap((t) => [
        ...problems(t.inputSchema, `${t.name}.inputSchema`),
        ...problems(t.outputSchema, `${t.name}.outputSchema`),
      ]);
      expect(found).toEqual([]);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
