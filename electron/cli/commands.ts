import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { END_IMAGE_PARAMETER, ROUTING_MODES } from '../../shared/api/index.ts';
import { PRICE_UNKNOWN, promptProblem } from '../../shared/api/spec-rules.ts';
import type { GeneratedItem, Generation, GenerationResponse, ModelRecord } from '../../shared/api/index.ts';
import { isServiceError, newIdempotencyKey } from '../core/api/index.ts';
import type { WaitNotice } from '../core/api/index.ts';
import type { DownloadResult } from '../core/downloads/index.ts';
import { UsageError } from './errors.ts';
import { createGenerationProgress } from './generations.ts';
import { createProgress } from './io.ts';
import type { CliIo } from './io.ts';
import { MEDIA_REF_SCHEME, mediaIdFrom, mediaRef, portableItem } from './media-ref.ts';
import { checkAgainstModel } from './validate.ts';
import { isPartialUsage, providerLines, usageLines } from './listings.ts';
import type { Session } from './session.ts';

type Flags = Record<string, string | boolean | undefined>;

const str = (flags: Flags, name: string): string | undefined => {
  const v = flags[name];
  return typeof v === 'string' ? v : undefined;
};

function int(flags: Flags, name: string): number | undefined {
  const v = str(flags, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number`);
  return Number(v);
}

function num(flags: Flags, name: string): number | undefined {
  const v = str(flags, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} must be a positive number`);
  return n;
}

/** `--out DIR` (the file in DIR; `--library-layout`: the library's folders under DIR), else the library. */
function downloadsFor(session: Session, flags: Flags) {
  const out = str(flags, 'out');
  return session.downloads(out ? { dir: resolve(out), libraryLayout: flags['libraryLayout'] === true } : undefined);
}

const json = (io: CliIo, value: unknown): void => io.stdout(`${JSON.stringify(value, null, 2)}\n`);

export async function generate(session: Session, io: CliIo, kind: 'video' | 'image', flags: Flags): Promise<void> {
  const prompt = str(flags, 'prompt');
  if (!prompt) throw new UsageError('generate needs --prompt TEXT');
  // Counted in code points, as the service counts them.
  const promptError = promptProblem(prompt, kind);
  if (promptError) throw new UsageError(`--${promptError}`);
  const routing = str(flags, 'routing');
  if (routing !== undefined && !(ROUTING_MODES as readonly string[]).includes(routing)) {
    throw new UsageError(`--routing must be one of ${ROUTING_MODES.join(', ')}`);
  }
  const image = str(flags, 'image');
  if (image !== undefined && kind === 'image') throw new UsageError('--image is for video generation');
  const endImage = str(flags, 'endImage');
  if (endImage !== undefined && image === undefined)
    throw new UsageError('--end-image needs --image: an end frame needs a start frame');
  const duration = kind === 'video' ? num(flags, 'duration') : undefined;
  const { api } = session;
  const model = await modelFor(session, kind, str(flags, 'model'));
  checkAgainstModel(model, {
    kind,
    duration,
    size: str(flags, 'size'),
    style: str(flags, 'style'),
    provider: str(flags, 'provider'),
    image: image !== undefined,
    endImage: endImage !== undefined,
  });
  const modelId = str(flags, 'model') ?? model.id;

  const start = image === undefined ? null : await frameImage(session, io, image, '--image');
  const end = endImage === undefined ? null : await frameImage(session, io, endImage, '--end-image');
  const common = {
    model: modelId,
    prompt,
    ...(routing ? { routing: routing as (typeof ROUTING_MODES)[number] } : {}),
    ...(str(flags, 'provider') ? { provider: str(flags, 'provider') } : {}),
    ...(flags['private'] ? { public: false } : {}),
    ...(str(flags, 'size') ? { size: str(flags, 'size') } : {}),
    ...(str(flags, 'style') ? { style: str(flags, 'style') } : {}),
  };
  io.stderr(`Generating ${kind} with ${modelId}…\n`);
  const idempotencyKey = newIdempotencyKey();
  const input =
    kind === 'video'
      ? {
          ...common,
          ...(start ? { image_url: start.url } : {}),
          ...(end ? { [END_IMAGE_PARAMETER]: end.url } : {}),
          ...(duration ? { duration } : {}),
        }
      : common;
  const operation = kind === 'video' ? 'videos.generations' : 'images.generations';
  let res: GenerationResponse;
  if (flags['async']) {
    const accepted = await api.submitGeneration(operation, input, { idempotencyKey });
    if (accepted.async) {
      // The id is the result: `clipdesk generations wait ID` picks it up from here.
      io.stderr(`Accepted as ${accepted.generation.id} (${accepted.generation.status})\n`);
      io.stdout(flags['json'] ? `${JSON.stringify(accepted.generation, null, 2)}\n` : `${accepted.generation.id}\n`);
      return;
    }
    io.stderr('The service has no asynchronous mode: it answered with the result\n');
    res = accepted.response;
  } else {
    const progress = createGenerationProgress(io, `Generating ${kind}`);
    try {
      const opts = {
        idempotencyKey,
        onAccepted: (g: { id: string }) => io.stderr(`Accepted as ${g.id}\n`),
        onUpdate: (g: Generation) => progress.update(g),
        onWait: (w: WaitNotice) => progress.wait(w),
      };
      res = kind === 'video' ? await api.generateVideo(input, opts) : await api.generateImage(input, opts);
    } finally {
      progress.end();
    }
  }
  io.stderr(
    `Generated ${res.data.length} item(s) by ${res.stats.providerSlug ?? res.stats.providerId} for $${res.price.toFixed(4)}\n`,
  );

  const providerName = await providerNames(session);
  const local = session.engine !== null;
  const manager = downloadsFor(session, flags);
  const saved: Array<DownloadResult & { item: GeneratedItem }> = [];
  for (const item of res.data) {
    const bar = createProgress(io, `Downloading ${item.id}`);
    const result = await manager.download({
      item,
      context: {
        routing: res.stats.routing ?? routing ?? 'optimal',
        price: item.price ?? res.price,
        // The generated item has neither; the model and provider records do (docs/api.md).
        modelSlug: modelSlugOf(item.model, modelId, model),
        providerName: providerName(item.provider),
        ...(start ? { sourceImage: start.source } : {}),
        ...sidecarService(session, item.id),
      },
      onProgress: (p) => bar.update(p.received, p.total),
      onWait: (w) => bar.wait(w),
    });
    bar.end();
    saved.push({ ...result, item });
  }
  if (flags['json']) {
    json(io, {
      items: saved.map((s) => ({
        id: s.id,
        path: s.path,
        sidecar: s.sidecarPath,
        sha256: s.sha256,
        bytes: s.bytes,
        item: portableItem(s.item, local),
      })),
      price: res.price,
      stats: res.stats,
      ...engineFields(session),
    });
  } else for (const s of saved) io.stdout(`${s.path}\n`);
}

/** The named model's record, or the service's first model of the kind; an unknown name is a usage error. */
async function modelFor(session: Session, kind: 'video' | 'image', name: string | undefined): Promise<ModelRecord> {
  if (name === undefined) {
    const { models } = await session.api.listModels({ limit: 100 });
    const first = models.find((m) => m.media === kind);
    if (!first) throw new UsageError(`The service lists no ${kind} model; pass --model`);
    return first;
  }
  try {
    return await session.api.getModel(name);
  } catch (error) {
    if (isServiceError(error) && error.code === 'not_found_error')
      throw new UsageError(`Unknown model ${name} (clipdesk models lists them)`);
    throw error;
  }
}

/**
 * `--image` (the start frame) and `--end-image`: an http(s) URL is passed as is; an existing file
 * is uploaded; otherwise a media id (or `clipdesk-media:<id>`) names an item the service already
 * holds, whose current URL is used. `source` is what the sidecar records: never a URL of the
 * embedded engine.
 */
async function frameImage(
  session: Session,
  io: CliIo,
  image: string,
  flag: '--image' | '--end-image',
): Promise<{ url: string; source: string }> {
  if (/^https?:\/\//i.test(image)) return { url: image, source: image };
  const path = resolve(image);
  if (!image.startsWith(MEDIA_REF_SCHEME) && existsSync(path)) {
    const bar = createProgress(io, `Uploading ${image}`);
    const up = await session.uploader.upload(
      { path },
      { onProgress: (p) => p.phase === 'uploading' && bar.update(p.sent, p.total), onWait: (w) => bar.wait(w) },
    );
    bar.end();
    io.stderr(`${up.deduplicated ? 'Reusing upload' : 'Uploaded'} ${image} as ${up.item.id}\n`);
    return { url: up.url, source: path };
  }
  const id = mediaIdFrom(image);
  if (id === null) throw new UsageError(`${flag}: no such file, URL or media id: ${image}`);
  const item = await session.api.getMedia(id).catch((error: unknown) => {
    if (isServiceError(error) && error.code === 'not_found_error')
      throw new UsageError(`${flag}: no such file or media item: ${image}`);
    throw error;
  });
  if (item.media !== 'image') throw new UsageError(`${flag}: ${id} is a ${item.media}, not an image`);
  return { url: item.url, source: mediaRef(id) };
}

/** Provider id → its display name, from GET /providers (null when the service does not say). */
async function providerNames(session: Session): Promise<(id: string) => string | null> {
  const { providers } = await session.api.listProviders({ limit: 100 }).catch(() => ({ providers: [] }));
  return (id) => providers.find((p) => p.id === id || p.slug === id)?.name ?? null;
}

/** `base/model:version`, as /media lists it: the version asked for, else the model's current one. */
function modelSlugOf(itemModel: string, asked: string, model: ModelRecord): string {
  if (itemModel.includes(':')) return itemModel;
  const version = asked.includes(':') ? asked.slice(asked.indexOf(':') + 1) : model.version;
  // A service that tells no version: the item's model as it is (the latest, per the spec).
  return version === undefined ? itemModel : `${itemModel}:${version}`;
}

/** The sidecar's service-independent reference on the embedded engine (its URLs die with the run). */
function sidecarService(session: Session, id: string): Record<string, unknown> {
  return session.engine === null ? {} : { url: mediaRef(id), ...engineFields(session) };
}

/** Where the embedded engine keeps the media a reference names. */
function engineFields(session: Session): { engineDataDir?: string } {
  return session.engineDataDir === null ? {} : { engineDataDir: session.engineDataDir };
}

export async function mediaList(session: Session, io: CliIo, flags: Flags): Promise<void> {
  const sort = str(flags, 'sort');
  if (sort !== undefined && sort !== 'newest' && sort !== 'oldest')
    throw new UsageError('--sort must be newest or oldest');
  const media = str(flags, 'media');
  if (media !== undefined && media !== 'video' && media !== 'image')
    throw new UsageError('--media must be video or image');
  const page = await session.api.listMedia({
    ...(str(flags, 'user') ? { user: str(flags, 'user') } : {}),
    ...(str(flags, 'search') ? { search: str(flags, 'search') } : {}),
    ...(str(flags, 'model') ? { model: str(flags, 'model') } : {}),
    ...(str(flags, 'provider') ? { provider: str(flags, 'provider') } : {}),
    ...(media ? { media: media } : {}),
    ...(str(flags, 'size') ? { size: str(flags, 'size') } : {}),
    ...(sort ? { sort: sort } : {}),
    ...(int(flags, 'limit') !== undefined ? { limit: int(flags, 'limit') } : {}),
    ...(int(flags, 'page') !== undefined ? { page: int(flags, 'page') } : {}),
  });
  if (flags['json']) {
    const local = session.engine !== null;
    return json(io, { ...page, medias: page.medias.map((m) => portableItem(m, local)), ...engineFields(session) });
  }
  for (const m of page.medias) {
    const prompt = m.prompt.length > 60 ? `${m.prompt.slice(0, 57)}...` : m.prompt;
    io.stdout(`${m.id}\t${m.createdAt}\t${m.media}\t${m.model}\t${m.provider}\t${m.size}\t${m.duration}s\t${prompt}\n`);
  }
  io.stderr(`${page.medias.length} of ${page.total}\n`);
}

export async function mediaDownload(session: Session, io: CliIo, id: string | undefined, flags: Flags): Promise<void> {
  if (!id) throw new UsageError('media download needs an ID');
  const item = await session.api.getMedia(mediaIdFrom(id) ?? id);
  const manager = downloadsFor(session, flags);
  const bar = createProgress(io, `Downloading ${id}`);
  const res = await manager.download({
    item,
    context: sidecarService(session, item.id),
    onProgress: (p) => bar.update(p.received, p.total),
    onWait: (w) => bar.wait(w),
  });
  bar.end();
  if (flags['json'])
    json(io, { id: res.id, path: res.path, sidecar: res.sidecarPath, sha256: res.sha256, bytes: res.bytes });
  else io.stdout(`${res.path}\n`);
}

export async function upload(session: Session, io: CliIo, file: string | undefined, flags: Flags): Promise<void> {
  if (!file) throw new UsageError('upload needs a FILE');
  const path = resolve(file);
  if (!existsSync(path)) throw new UsageError(`No such file: ${file}`);
  const bar = createProgress(io, `Uploading ${file}`);
  const res = await session.uploader.upload(
    { path },
    { onProgress: (p) => p.phase === 'uploading' && bar.update(p.sent, p.total), onWait: (w) => bar.wait(w) },
  );
  bar.end();
  // The id is what `generate --image` and `media download` take; on the embedded engine the URL
  // would name a port that closes when this command exits.
  if (flags['json'])
    json(io, {
      id: res.item.id,
      url: session.engine === null ? res.url : mediaRef(res.item.id),
      sha256: res.sha256,
      mime: res.mime,
      bytes: res.bytes,
      deduplicated: res.deduplicated,
      ...engineFields(session),
    });
  else io.stdout(`${res.item.id}\n`);
}

export async function models(session: Session, io: CliIo, flags: Flags): Promise<void> {
  const page = await session.api.listModels({ limit: 100 });
  if (flags['json']) return json(io, page);
  for (const m of page.models) {
    const providers = m.providers?.map((p) => `${p.slug} $${p.price}`).join(', ') ?? PRICE_UNKNOWN;
    io.stdout(`${m.id}\t${m.media}\t${m.name}\t${providers}\n`);
  }
  if (page.models.some((m) => m.providers === undefined))
    io.stderr('This service lists no offers or prices: the price is known after generation\n');
}

export async function providers(session: Session, io: CliIo, flags: Flags): Promise<void> {
  const page = await session.api.listProviders({ limit: 100 });
  if (flags['json']) return json(io, page);
  for (const line of providerLines(page.providers, new Date())) io.stdout(`${line}\n`);
}

export async function usage(session: Session, io: CliIo, flags: Flags): Promise<void> {
  const u = await session.api.getUsage();
  if (flags['json']) return json(io, u);
  for (const line of usageLines(u)) io.stdout(`${line}\n`);
  if (isPartialUsage(u)) io.stderr('This service reports only part of its usage; showing what it sent\n');
}
