import { existsSync } from 'node:fs';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { takesEndFrame } from '../../shared/api/model-parameters.ts';
import type { IpcClient } from '../../shared/ipc/client.ts';
import type { JobRequestInput, StartFrame } from '../../shared/ipc/schemas/jobs.ts';
import type { LibraryItem } from '../../shared/ipc/schemas/library.ts';
import type { McpBackend } from './backend.ts';
import { ToolFailure, insideRoots, pathInside, toolError, type SessionSpend } from './guardrails.ts';
import { generationView, submitWithinBudgets, waitForJob, type ProgressSink } from './jobs.ts';
import {
  ContinueShotInput,
  DownloadMediaOutput,
  ExportSequenceInput,
  ExportSequenceOutput,
  GenerateImageInput,
  GenerateVideoInput,
  GenerationOutput,
  ListModelsOutput,
  PreviewRouteInput,
  PreviewRouteOutput,
  SearchLibraryInput,
  SearchLibraryOutput,
} from './schemas.ts';
import type { LibraryEntry } from './schemas.ts';
import type { z } from 'zod';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface ToolDeps {
  backend: McpBackend;
  spend: SessionSpend;
}

/** A handler's result as both text (for models that read text) and structuredContent; any throw is a tool error. */
async function answer<T extends Record<string, unknown>>(work: () => Promise<T>): Promise<CallToolResult> {
  try {
    const out = await work();
    return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
  } catch (error) {
    return toolError(error);
  }
}

/** Progress notifications for the call, when the client asked for them (a progressToken). */
function progressOf(extra: Extra): ProgressSink | null {
  const token = extra._meta?.progressToken;
  if (token === undefined) return null;
  return (p) =>
    extra.sendNotification({
      method: 'notifications/progress',
      params: { progressToken: token, progress: p.progress, total: p.total, message: p.message },
    });
}

const ido = { destructiveHint: false, openWorldHint: false } as const;

export function registerTools(server: McpServer, deps: ToolDeps): void {
  const { backend, spend } = deps;
  const { ipc } = backend;

  server.registerTool(
    'list_models',
    {
      title: 'List models',
      description: 'Models with their provider offers, prices (USD per second or per image), features and parameters.',
      inputSchema: {
        kind: PreviewRouteInput.kind.unwrap().optional(),
        search: SearchLibraryInput.query.describe('Words of the id, name or description'),
      },
      outputSchema: ListModelsOutput,
      annotations: { readOnlyHint: true, idempotentHint: true, ...ido },
    },
    ({ kind, search }, extra) =>
      answer(async () => {
        const { models } = await ipc.models.list(kind ? { media: kind } : undefined, { signal: extra.signal });
        const words = (search ?? '').toLowerCase().split(/\s+/).filter(Boolean);
        const matches = models.filter((m) =>
          words.every((w) => `${m.id} ${m.name} ${m.description}`.toLowerCase().includes(w)),
        );
        return {
          models: matches.map((m) => ({
            id: m.id,
            name: m.name,
            kind: m.media,
            description: m.description,
            parameters: m.parameters,
            offers: (m.providers ?? []).map((o) => ({
              provider: o.slug,
              name: o.name ?? null,
              price: o.price,
              price_unit: o.priceUnit ?? null,
              // The price table (docs/providers.md, "Prices"): null where the headline is the price.
              prices: o.prices ?? null,
              features: o.features,
              sizes: o.sizes ?? [],
            })),
          })),
        };
      }),
  );

  server.registerTool(
    'preview_route',
    {
      title: 'Preview routing',
      description:
        'What a generation request would get under each routing mode: the provider, the price (USD) and the parameters it would drop. Nothing is rendered or charged.',
      inputSchema: PreviewRouteInput,
      outputSchema: PreviewRouteOutput,
      annotations: { readOnlyHint: true, idempotentHint: true, ...ido },
    },
    (input, extra) =>
      answer(async () => {
        const request = await jobRequest(ipc, input.kind, input);
        return ipc.compose.preview(request, { signal: extra.signal });
      }),
  );

  const generate = (kind: 'video' | 'image') => async (input: GenerateInput, extra: Extra) =>
    answer(async () => {
      const request = await jobRequest(ipc, kind, input);
      const job = await submitWithinBudgets(ipc, request, spend, extra.signal);
      return finish(backend, job.id, input.wait === true, extra);
    });
  const generationTool = {
    outputSchema: GenerationOutput,
    annotations: { readOnlyHint: false, ...ido, openWorldHint: true, idempotentHint: false },
  };
  server.registerTool(
    'generate_video',
    {
      title: 'Generate a video',
      description:
        'Queues a video in Clipdesk (it appears in the app’s queue and library). Answers {generation_id, status} at once, or with wait: true the finished media with local paths. Refused when it would pass a budget or --max-spend.',
      inputSchema: GenerateVideoInput,
      ...generationTool,
    },
    generate('video'),
  );
  server.registerTool(
    'generate_image',
    {
      title: 'Generate an image',
      description:
        'Queues an image in Clipdesk. Answers {generation_id, status} at once, or with wait: true the finished media with local paths. Refused when it would pass a budget or --max-spend.',
      inputSchema: GenerateImageInput,
      ...generationTool,
    },
    generate('image'),
  );

  registerFollowUpTools(server, deps);
}

/** The tools that read and act on what was generated: generations, the library, continuations. */
function registerFollowUpTools(server: McpServer, deps: ToolDeps): void {
  const { backend, spend } = deps;
  const { ipc } = backend;

  server.registerTool(
    'get_generation',
    {
      title: 'Get a generation',
      description: 'A generation’s status, price, error or media with local paths.',
      inputSchema: { generation_id: ContinueShotInput.media_id.describe('From generate_video/generate_image') },
      outputSchema: GenerationOutput,
      annotations: { readOnlyHint: true, idempotentHint: true, ...ido },
    },
    ({ generation_id }) =>
      answer(async () => generationView(await ipc.jobs.get({ id: generation_id }), await backend.roots())),
  );

  server.registerTool(
    'cancel_generation',
    {
      title: 'Cancel a generation',
      description: 'Cancels a queued or running generation (no charge unless the provider already charged).',
      inputSchema: { generation_id: ContinueShotInput.media_id.describe('From generate_video/generate_image') },
      outputSchema: GenerationOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ generation_id }) =>
      answer(async () => generationView(await ipc.jobs.cancel({ id: generation_id }), await backend.roots())),
  );

  server.registerTool(
    'search_library',
    {
      title: 'Search the library',
      description:
        'Items of the Clipdesk library, newest first: ids, prompts, local paths, when the service deletes them, and shot lineage.',
      inputSchema: SearchLibraryInput,
      outputSchema: SearchLibraryOutput,
      annotations: { readOnlyHint: true, idempotentHint: true, ...ido },
    },
    ({ query, kind, limit }) =>
      answer(async () => {
        const page = await ipc.library.query({
          ...(query ? { search: query } : {}),
          ...(kind ? { media: kind } : {}),
          limit,
        });
        const roots = await backend.roots();
        const parents = await parentsOf(ipc, page.items);
        return { items: page.items.map((i) => libraryEntry(i, roots, parents)), total: page.total };
      }),
  );

  server.registerTool(
    'download_media',
    {
      title: 'Download media',
      description: 'Saves a library item into the download folder, with its JSON sidecar; answers the local path.',
      inputSchema: { media_id: ContinueShotInput.media_id.describe('From search_library or a generation') },
      outputSchema: DownloadMediaOutput,
      annotations: { readOnlyHint: false, idempotentHint: true, ...ido, openWorldHint: true },
    },
    ({ media_id }, extra) =>
      answer(async () => {
        let entry = await ipc.library.get({ id: media_id }, { signal: extra.signal });
        const saved = entry.localPath && existsSync(entry.localPath) && existsSync(`${entry.localPath}.json`);
        if (!saved) entry = await ipc.library.downloadAgain({ id: media_id }, { signal: extra.signal });
        if (!entry.localPath) throw new ToolFailure('internal_error', 'The download left no file');
        const file = insideRoots(entry.localPath, await backend.roots());
        return { media_id, path: file, sidecar_path: `${file}.json` };
      }),
  );

  server.registerTool(
    'continue_shot',
    {
      title: 'Continue a shot',
      description:
        'The next shot of a video: its last frame is the start image, the new shot joins its chain (lineage recorded). Same answers and limits as generate_video.',
      inputSchema: ContinueShotInput,
      outputSchema: GenerationOutput,
      annotations: { readOnlyHint: false, idempotentHint: false, ...ido, openWorldHint: true },
    },
    (input, extra) =>
      answer(async () => {
        const parent = await ipc.library.get({ id: input.media_id }, { signal: extra.signal });
        if (parent.item.media !== 'video') throw new ToolFailure('invalid_input', `${input.media_id} is not a video`);
        const frame = await ipc.library.useLastFrame({ id: input.media_id }, { signal: extra.signal });
        const request = await jobRequest(ipc, 'video', {
          ...input,
          model: input.model ?? parent.item.model,
        });
        const job = await submitWithinBudgets(
          ipc,
          { ...request, startFrame: { kind: 'path', path: frame.path }, parentItemId: input.media_id },
          spend,
          extra.signal,
        );
        return finish(backend, job.id, input.wait === true, extra);
      }),
  );

  server.registerTool(
    'export_sequence',
    {
      title: 'Export a sequence',
      description:
        'Videos back to back in one MP4 (each fitted into the first one’s frame size and rate), optionally trimmed; written to the download folder’s exports.',
      inputSchema: ExportSequenceInput,
      outputSchema: ExportSequenceOutput,
      annotations: { readOnlyHint: false, idempotentHint: true, ...ido },
    },
    ({ media_ids, trims }, extra) =>
      answer(async () => {
        if (trims && trims.length !== media_ids.length)
          throw new ToolFailure('invalid_input', 'trims: give one trim (or null) per media id');
        const file = await ipc.media.sequence(
          { itemIds: media_ids, ...(trims ? { trims } : {}), purpose: 'export' },
          { signal: extra.signal },
        );
        return { path: insideRoots(file.path, await backend.roots()), bytes: file.bytes, mime: file.mime };
      }),
  );
}

/** A generation tool's answer: the job now, or with `wait` once it has finished. */
async function finish(backend: ToolDeps['backend'], id: string, wait: boolean, extra: Extra) {
  const { ipc } = backend;
  const job = wait ? await waitForJob(ipc, id, progressOf(extra), extra.signal) : await ipc.jobs.get({ id });
  if (job.state === 'failed' && job.error) throw new ToolFailure(job.error.code, job.error.message);
  return generationView(job, await backend.roots());
}

type GenerateInput = Partial<z.infer<z.ZodObject<typeof GenerateVideoInput>>> & {
  prompt: string;
  wait?: boolean | undefined;
};

/** A frame given as a URL or as a library image, or none. */
function frameOf(url: string | undefined, mediaId: string | undefined): StartFrame | undefined {
  if (url) return { kind: 'url', url };
  return mediaId ? { kind: 'item', itemId: mediaId } : undefined;
}

/** The app's job request for a tool's v1 fields; the model defaults to the catalog's first of the kind. */
async function jobRequest(ipc: IpcClient, kind: 'video' | 'image', input: GenerateInput): Promise<JobRequestInput> {
  const model = input.model ?? (await firstModel(ipc, kind));
  const startFrame = frameOf(input.image_url, input.image_media_id);
  const endFrame = frameOf(input.end_image_url, input.end_image_media_id);
  if ((startFrame || endFrame) && kind === 'image')
    throw new ToolFailure('invalid_input', 'A start image is only for video');
  if (endFrame && !startFrame)
    throw new ToolFailure('invalid_input', 'An end frame needs a start image (image_url or image_media_id)');
  // The service drops a parameter the model does not name: say so rather than make a clip without it.
  if (endFrame && !takesEndFrame(await ipc.models.get({ id: model })))
    throw new ToolFailure('invalid_input', `${model} takes no end frame (its parameters name no end_image_url)`);
  const pick = <K extends keyof GenerateInput>(k: K) => (input[k] === undefined ? {} : { [k]: input[k] });
  return {
    kind,
    model,
    prompt: input.prompt,
    ...pick('provider'),
    ...pick('routing'),
    ...pick('public'),
    ...pick('seed'),
    ...pick('size'),
    ...pick('style'),
    ...pick('aspect_ratio'),
    ...(kind === 'video' ? pick('duration') : {}),
    ...(startFrame ? { startFrame } : {}),
    ...(endFrame ? { endFrame } : {}),
  };
}

async function firstModel(ipc: IpcClient, kind: 'video' | 'image'): Promise<string> {
  const { models } = await ipc.models.list({ media: kind });
  const first = models[0];
  if (!first) throw new ToolFailure('not_found', `The service lists no ${kind} model`);
  return first.id;
}

/** Each chained item's parent, one chain lookup per chain on the page. */
async function parentsOf(ipc: IpcClient, items: readonly LibraryItem[]): Promise<Map<string, string | null>> {
  const parents = new Map<string, string | null>();
  const seen = new Set<string>();
  for (const i of items) {
    if (!i.chain || seen.has(i.chain.chainId)) continue;
    seen.add(i.chain.chainId);
    const view = await ipc.library.chain({ id: i.item.id });
    for (const shot of view.shots) parents.set(shot.itemId, shot.parentId);
  }
  return parents;
}

function libraryEntry(
  i: LibraryItem,
  roots: readonly string[],
  parents: ReadonlyMap<string, string | null>,
): z.infer<typeof LibraryEntry> {
  return {
    media_id: i.item.id,
    kind: i.item.media,
    prompt: i.item.prompt,
    model: i.item.model,
    provider: i.item.providerName || i.item.provider,
    size: i.item.size,
    duration: i.item.duration,
    created_at: i.item.createdAt,
    path: pathInside(i.localPath, roots),
    expires_at: i.retentionDeadline,
    lineage: i.chain
      ? { chain_id: i.chain.chainId, position: i.chain.position, parent_id: parents.get(i.item.id) ?? null }
      : null,
  };
}
