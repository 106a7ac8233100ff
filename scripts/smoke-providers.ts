/**
 * `npm run smoke:providers`: a live check of the real providers whose keys are in the environment.
 * For each configured provider it runs the cheapest short generation the catalog offers on it,
 * through a private Local engine (the same code path as the app and the standalone service), and
 * prints what it cost and how long it took. With no key in the environment it says so and exits 0.
 * It spends real money (a few cents per provider) and is not part of `npm test`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import {
  ErrorBody,
  GenerationResponse,
  ModelListResponse,
  UploadCompleteResponse,
  UploadTicketResponse,
} from '../shared/api/index.ts';
import { runFfmpeg } from '../shared/node/ffmpeg.ts';
import { startService } from '../server/index.ts';
import { PROVIDER_ENV_KEYS } from '../server/providers/provider-keys.ts';

const VIDEO_SIZES = ['360p', '480p', '540p', '720p', '1080p'];

interface Offer {
  id: string;
  price: number;
  features: string[];
  sizes?: string[];
  durations?: number[];
}
interface Model {
  id: string;
  media: 'video' | 'image';
  parameters: { duration?: { min: number }; size?: { default?: string } };
  providers: Offer[];
}
interface Choice {
  model: Model;
  offer: Offer;
  duration: number;
  size: string | undefined;
  cost: number;
}

const configured = Object.entries(PROVIDER_ENV_KEYS).filter(([, env]) => (process.env[env] ?? '').trim() !== '');
if (configured.length === 0) {
  console.log(
    `No provider key in the environment (${Object.values(PROVIDER_ENV_KEYS).join(', ')}): nothing to smoke-test.`,
  );
  process.exit(0);
}

const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-smoke-'));
const service = await startService({ dataDir, sweepIntervalMs: 0 });
let failed = 0;
try {
  const { key } = await service.createKey({ user: 'smoke', tier: 'enterprise' });
  const api: Api = async (path, init = {}) => {
    const res = await fetch(`${service.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as unknown };
  };
  const models = ModelListResponse.parse((await api('/models?limit=100')).body).result.models as unknown as Model[];
  for (const [provider] of configured) {
    const choice = cheapest(models, provider);
    if (!choice) {
      console.log(`${provider}: configured, but the catalog has no offer on it`);
      continue;
    }
    const body: Record<string, unknown> = {
      model: choice.model.id,
      prompt: 'a paper boat drifting on a calm lake at dawn',
      provider,
    };
    if (choice.size !== undefined) body['size'] = choice.size;
    if (choice.model.media === 'video') body['duration'] = choice.duration;
    // Image-to-video-only offers (Runway Gen-4 Turbo) need a start frame: upload one first.
    if (choice.model.media === 'video' && !choice.offer.features.includes('text_to_video')) {
      body['image_url'] = await uploadStartFrame(api, dataDir);
    }
    const path = choice.model.media === 'video' ? '/videos/generations' : '/images/generations';
    console.log(`${provider}: ${choice.model.id} ${choice.size ?? ''} — expected about $${choice.cost.toFixed(3)} …`);
    const started = performance.now();
    const { status, body: answer } = await api(path, { method: 'POST', body: JSON.stringify(body) });
    const seconds = (performance.now() - started) / 1000;
    const ok = GenerationResponse.safeParse(answer);
    if (status === 200 && ok.success) {
      console.log(`${provider}: ok in ${seconds.toFixed(1)} s, charged $${ok.data.price.toFixed(4)}`);
    } else {
      failed++;
      const why = ErrorBody.safeParse(answer);
      const message = why.success ? (why.data.error?.message ?? '') : '';
      console.log(`${provider}: FAILED after ${seconds.toFixed(1)} s (HTTP ${status}): ${message}`);
    }
  }
} finally {
  await service.close();
  await rm(dataDir, { recursive: true, force: true });
}
process.exit(failed === 0 ? 0 : 1);

/** The offer of this provider with the lowest price for its shortest clip (or one image). */
function cheapest(models: Model[], provider: string): Choice | undefined {
  let best: Choice | undefined;
  for (const model of models) {
    for (const offer of model.providers) {
      if (offer.id !== provider) continue;
      const duration = model.media === 'video' ? (offer.durations?.[0] ?? model.parameters.duration?.min ?? 5) : 0;
      const cost = offer.price * (model.media === 'video' ? duration : 1);
      const size =
        model.media === 'video'
          ? [...(offer.sizes ?? [])].sort((a, b) => VIDEO_SIZES.indexOf(a) - VIDEO_SIZES.indexOf(b))[0]
          : model.parameters.size?.default;
      if (!best || cost < best.cost) best = { model, offer, duration, size, cost };
    }
  }
  return best;
}

type Api = (path: string, init?: RequestInit) => Promise<{ status: number; body: unknown }>;

async function uploadStartFrame(api: Api, dir: string): Promise<string> {
  const file = join(dir, 'start.png');
  await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=1280x720', '-frames:v', '1', '-f', 'image2', '-y', file], {
    timeoutMs: 60_000,
  });
  const bytes = await readFile(file);
  const asked = await api('/media/upload', {
    method: 'POST',
    body: JSON.stringify({ filename: 'start.png', mime: 'image/png', size: bytes.length }),
  });
  const ticket: z.infer<typeof UploadTicketResponse>['result'] = UploadTicketResponse.parse(asked.body).result;
  await fetch(ticket.uploadUrl, { method: 'PUT', headers: ticket.headers, body: bytes });
  return UploadCompleteResponse.parse((await api(`/media/${ticket.id}`, { method: 'POST' })).body).result.url;
}
