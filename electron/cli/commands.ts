import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ROUTING_MODES } from '../../shared/api/index.ts';
import type { GenerationResponse, MediaItem } from '../../shared/api/index.ts';
import { newIdempotencyKey } from '../core/api/index.ts';
import type { DownloadResult } from '../core/downloads/index.ts';
import { UsageError } from './errors.ts';
import { createProgress } from './io.ts';
import type { CliIo } from './io.ts';
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

const json = (io: CliIo, value: unknown): void => io.stdout(`${JSON.stringify(value, null, 2)}\n`);

export async function generate(session: Session, io: CliIo, kind: 'video' | 'image', flags: Flags): Promise<void> {
  const prompt = str(flags, 'prompt');
  if (!prompt) throw new UsageError('generate needs --prompt TEXT');
  const routing = str(flags, 'routing');
  if (routing !== undefined && !(ROUTING_MODES as readonly string[]).includes(routing)) {
    throw new UsageError(`--routing must be one of ${ROUTING_MODES.join(', ')}`);
  }
  const { api } = session;
  let model = str(flags, 'model');
  if (!model) {
    const { models } = await api.listModels({ limit: 100 });
    const first = models.find((m) => m.media === kind);
    if (!first) throw new UsageError(`The service lists no ${kind} model; pass --model`);
    model = first.id;
  }

  let imageUrl: string | undefined;
  const image = str(flags, 'image');
  if (image !== undefined) {
    if (/^https?:\/\//i.test(image)) imageUrl = image;
    else {
      const path = resolve(image);
      if (!existsSync(path)) throw new UsageError(`--image: no such file: ${image}`);
      const bar = createProgress(io, `Uploading ${image}`);
      const up = await session.uploader.upload(
        { path },
        { onProgress: (p) => p.phase === 'uploading' && bar.update(p.sent, p.total) },
      );
      bar.end();
      io.stderr(`${up.deduplicated ? 'Reusing upload' : 'Uploaded'} ${image} as ${up.item.id}\n`);
      imageUrl = up.url;
    }
  }

  const common = {
    model,
    prompt,
    ...(routing ? { routing: routing as (typeof ROUTING_MODES)[number] } : {}),
    ...(str(flags, 'provider') ? { provider: str(flags, 'provider') } : {}),
    ...(flags['private'] ? { public: false } : {}),
    ...(str(flags, 'size') ? { size: str(flags, 'size') } : {}),
    ...(str(flags, 'style') ? { style: str(flags, 'style') } : {}),
  };
  io.stderr(`Generating ${kind} with ${model}…\n`);
  const idempotencyKey = newIdempotencyKey();
  let res: GenerationResponse;
  if (kind === 'video') {
    const duration = num(flags, 'duration');
    res = await api.generateVideo(
      { ...common, ...(imageUrl ? { image_url: imageUrl } : {}), ...(duration ? { duration } : {}) },
      { idempotencyKey },
    );
  } else {
    if (imageUrl) throw new UsageError('--image is for video generation');
    res = await api.generateImage(common, { idempotencyKey });
  }
  io.stderr(
    `Generated ${res.data.length} item(s) by ${res.stats.providerSlug ?? res.stats.providerId} for $${res.price.toFixed(4)}\n`,
  );

  const manager = session.downloads(str(flags, 'out') ? resolve(str(flags, 'out')!) : undefined);
  const saved: Array<DownloadResult & { item: MediaItem | GenerationResponse['data'][number] }> = [];
  for (const item of res.data) {
    const bar = createProgress(io, `Downloading ${item.id}`);
    const result = await manager.download({
      item,
      context: {
        routing: res.stats.routing ?? routing ?? 'optimal',
        price: item.price ?? res.price,
        ...(imageUrl ? { sourceImage: image } : {}),
      },
      onProgress: (p) => bar.update(p.received, p.total),
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
        item: s.item,
      })),
      price: res.price,
      stats: res.stats,
    });
  } else for (const s of saved) io.stdout(`${s.path}\n`);
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
  if (flags['json']) return json(io, page);
  for (const m of page.medias) {
    const prompt = m.prompt.length > 60 ? `${m.prompt.slice(0, 57)}...` : m.prompt;
    io.stdout(`${m.id}\t${m.createdAt}\t${m.media}\t${m.model}\t${m.provider}\t${m.size}\t${m.duration}s\t${prompt}\n`);
  }
  io.stderr(`${page.medias.length} of ${page.total}\n`);
}

export async function mediaDownload(session: Session, io: CliIo, id: string | undefined, flags: Flags): Promise<void> {
  if (!id) throw new UsageError('media download needs an ID');
  const item = await session.api.getMedia(id);
  const manager = session.downloads(str(flags, 'out') ? resolve(str(flags, 'out')!) : undefined);
  const bar = createProgress(io, `Downloading ${id}`);
  const res = await manager.download({ item, onProgress: (p) => bar.update(p.received, p.total) });
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
    { onProgress: (p) => p.phase === 'uploading' && bar.update(p.sent, p.total) },
  );
  bar.end();
  if (flags['json'])
    json(io, {
      id: res.item.id,
      url: res.url,
      sha256: res.sha256,
      mime: res.mime,
      bytes: res.bytes,
      deduplicated: res.deduplicated,
    });
  else io.stdout(`${res.url}\n`);
}

export async function models(session: Session, io: CliIo, flags: Flags): Promise<void> {
  const page = await session.api.listModels({ limit: 100 });
  if (flags['json']) return json(io, page);
  for (const m of page.models) {
    const providers = m.providers.map((p) => `${p.slug} $${p.price}`).join(', ');
    io.stdout(`${m.id}\t${m.media}\t${m.name}\t${providers}\n`);
  }
}

export async function providers(session: Session, io: CliIo, flags: Flags): Promise<void> {
  const page = await session.api.listProviders({ limit: 100 });
  if (flags['json']) return json(io, page);
  for (const p of page.providers) io.stdout(`${p.id}\t${p.slug}\t${p.status}\t${p.name}\t${p.models.join(',')}\n`);
}

export async function usage(session: Session, io: CliIo, flags: Flags): Promise<void> {
  const u = await session.api.getUsage();
  if (flags['json']) return json(io, u);
  const r = u.usage.requests;
  const l = u.limits.rate;
  io.stdout(`tier\t${u.tier}\n`);
  io.stdout(`requests\t${r.minute}/${l.minute} per minute, ${r.hour}/${l.hour} per hour, ${r.day}/${l.day} per day\n`);
  io.stdout(
    `running\t${u.usage.running.video}/${u.limits.concurrency.video} videos, ${u.usage.running.image}/${u.limits.concurrency.image} images\n`,
  );
  io.stdout(
    `storage\t${(u.usage.storageBytes / 1e6).toFixed(1)} MB of ${(u.limits.storageBytes / 1e6).toFixed(0)} MB, kept ${u.limits.retentionDays} days\n`,
  );
  io.stdout(`cost\t$${u.usage.cost.total.toFixed(4)}\n`);
}
