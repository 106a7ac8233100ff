import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runFfmpeg } from '../../../shared/node/ffmpeg.ts';
import type { StartImage } from './contract.ts';

/**
 * A start frame fitted to what a provider takes inline (docs/providers.md, "Request schemas"):
 * the service hands every frame over as a lossless PNG, which for a photo is often more than a
 * data URI may carry (Runway: 5 MB). Rather than refuse it, the frame is re-encoded as a JPEG of
 * high quality and, only if that is still too big, scaled down step by step.
 */
export interface FrameLimits {
  /** The largest data URI (`data:<mime>;base64,…`, all of it) the provider takes, in bytes. */
  maxDataUriBytes: number;
  /** The types it takes. */
  mimes: readonly string[];
}

/** Longest sides tried in turn once a full-size JPEG is still too big. */
const STEPS: ReadonlyArray<{ longest?: number; quality: number }> = [
  { quality: 2 },
  { longest: 2560, quality: 3 },
  { longest: 1920, quality: 3 },
  { longest: 1280, quality: 4 },
  { longest: 960, quality: 5 },
];

export function dataUriBytes(mime: string, bytes: number): number {
  return `data:${mime};base64,`.length + Math.ceil(bytes / 3) * 4;
}

/** The frame as a data URI within `limits`, or undefined when no fitting version could be made. */
export async function fitStartFrame(
  frame: StartImage,
  limits: FrameLimits,
  signal?: AbortSignal,
): Promise<{ dataUri: string; mime: string; bytes: number; refitted: boolean } | undefined> {
  if (limits.mimes.includes(frame.mime) && dataUriBytes(frame.mime, frame.bytes) <= limits.maxDataUriBytes) {
    const data = await readFile(frame.path);
    if (dataUriBytes(frame.mime, data.length) <= limits.maxDataUriBytes) {
      return {
        dataUri: `data:${frame.mime};base64,${data.toString('base64')}`,
        mime: frame.mime,
        bytes: data.length,
        refitted: false,
      };
    }
  }
  if (!limits.mimes.includes('image/jpeg')) return undefined;
  for (const [i, step] of STEPS.entries()) {
    const out = join(dirname(frame.path), `start-frame-fitted-${i}.jpg`);
    const scale = step.longest
      ? ['-vf', `scale='min(${step.longest},iw)':'min(${step.longest},ih)':force_original_aspect_ratio=decrease`]
      : [];
    try {
      await runFfmpeg(['-i', frame.path, ...scale, '-frames:v', '1', '-q:v', String(step.quality), '-y', out], {
        timeoutMs: 60_000,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      // A frame ffmpeg cannot read cannot be fitted: the caller refuses it.
      if (signal?.aborted) throw error;
      return undefined;
    }
    const bytes = (await stat(out)).size;
    if (dataUriBytes('image/jpeg', bytes) <= limits.maxDataUriBytes) {
      const data = await readFile(out);
      return {
        dataUri: `data:image/jpeg;base64,${data.toString('base64')}`,
        mime: 'image/jpeg',
        bytes: data.length,
        refitted: true,
      };
    }
  }
  return undefined;
}
