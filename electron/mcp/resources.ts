import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { LibraryItem } from '../../shared/ipc/schemas/library.ts';
import type { McpBackend } from './backend.ts';
import { pathInside } from './guardrails.ts';

/** `clipdesk://media/{id}`: each library item, as its metadata (JSON) and its thumbnail (docs/agents.md). */
export const MEDIA_URI = 'clipdesk://media/{id}';
const uriOf = (id: string): string => `clipdesk://media/${encodeURIComponent(id)}`;

const THUMBNAIL_TIMEOUT_MS = 10_000;
const THUMBNAIL_MAX_BYTES = 2_000_000;

export function registerResources(server: McpServer, backend: McpBackend): void {
  const { ipc } = backend;
  server.registerResource(
    'media',
    new ResourceTemplate(MEDIA_URI, {
      list: async () => {
        const page = await ipc.library.query({ limit: 100 });
        return {
          resources: page.items.map((i) => ({
            uri: uriOf(i.item.id),
            name: i.item.id,
            title: i.item.prompt.slice(0, 80),
            mimeType: 'application/json',
          })),
        };
      },
    }),
    { title: 'Library item', description: 'A Clipdesk library item: metadata as JSON, and its thumbnail.' },
    async (uri, { id }): Promise<ReadResourceResult> => {
      const itemId = decodeURIComponent(String(id));
      const entry = await ipc.library.get({ id: itemId });
      const thumbnail = await thumbnailOf(entry);
      return {
        contents: [
          { uri: uri.href, mimeType: 'application/json', text: JSON.stringify(metadata(entry, await backend.roots())) },
          ...(thumbnail ? [{ uri: `${uri.href}#thumbnail`, mimeType: thumbnail.mime, blob: thumbnail.base64 }] : []),
        ],
      };
    },
  );

  server.registerPrompt(
    'shot_list',
    {
      title: 'Shot list',
      description: 'Turns a scene description into chained shots: generate the first, continue it, cut them together.',
      argsSchema: {
        scene: z.string().min(1).max(2000).describe('The scene, in a few sentences'),
        shots: z
          .string()
          .regex(/^\d{1,2}$/)
          .optional()
          .describe('How many shots (default 3)'),
        seconds: z
          .string()
          .regex(/^\d{1,2}$/)
          .optional()
          .describe('Seconds per shot (default 4)'),
      },
    },
    ({ scene, shots, seconds }) => {
      const n = Math.min(12, Math.max(1, Number(shots ?? 3)));
      const s = Math.max(1, Number(seconds ?? 4));
      return {
        messages: [
          {
            role: 'user',
            content: {
              type: 'text',
              text: [
                `Plan and make this scene as ${n} chained shots of ${s} seconds each with the Clipdesk tools:`,
                '',
                scene,
                '',
                `1. Write a shot list: ${n} numbered shots, each one line of prompt describing what is seen, in order; each shot continues the previous one's last moment.`,
                '2. Check the price first with preview_route (and stay within the budget).',
                `3. Make shot 1 with generate_video (duration ${s}, wait: true).`,
                `4. Make each next shot with continue_shot on the previous shot's media_id (duration ${s}, wait: true): its last frame starts the next.`,
                '5. Cut them together with export_sequence (media_ids in order) and give me the path of the MP4.',
              ].join('\n'),
            },
          },
        ],
      };
    },
  );
}

function metadata(entry: LibraryItem, roots: readonly string[]): Record<string, unknown> {
  const { url: _url, thumbnailUrl: _thumb, formats: _formats, ...item } = entry.item;
  return {
    ...item,
    path: pathInside(entry.localPath, roots),
    retentionDeadline: entry.retentionDeadline,
    lost: entry.lost,
    chain: entry.chain ?? null,
  };
}

/** The service's thumbnail, when it has one and answers in time; a resource is still read without it. */
async function thumbnailOf(entry: LibraryItem): Promise<{ mime: string; base64: string } | null> {
  const url = entry.item.thumbnailUrl ?? (entry.item.media === 'image' ? entry.item.url : undefined);
  if (!url || !/^https?:\/\//i.test(url)) return null;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(THUMBNAIL_TIMEOUT_MS) });
    const mime = res.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
    if (!res.ok || !mime.startsWith('image/')) return null;
    const bytes = Buffer.from(await res.arrayBuffer());
    if (bytes.length > THUMBNAIL_MAX_BYTES) return null;
    return { mime, base64: bytes.toString('base64') };
  } catch {
    return null;
  }
}
