import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { MediaTools } from '../../core/media/index.ts';
import { mimeForPath } from '../local-media.ts';
import { ipcError } from '../errors.ts';
import type { ProbeResult } from '../../../shared/ipc/schemas/media.ts';

/**
 * uploads.probe: what the start-frame preview needs to warn about size and dimensions. Metadata
 * only; the path must be absolute (it comes from a drop or a picker in main).
 */
export async function probeLocalFile(media: MediaTools, file: string, signal?: AbortSignal): Promise<ProbeResult> {
  if (!path.isAbsolute(file)) throw ipcError('invalid_input', 'The file path must be absolute.');
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) throw ipcError('not_found', `${path.basename(file)} does not exist or is not a file.`);
  const probed = await media.probe(file, signal ? { signal } : {});
  return {
    mime: mimeForPath(file),
    bytes: info.size,
    duration: probed.durationSeconds ?? 0,
    width: probed.video?.width ?? null,
    height: probed.video?.height ?? null,
    videoCodec: probed.video?.codec ?? null,
    audioCodec: probed.audio?.codec ?? null,
  };
}
