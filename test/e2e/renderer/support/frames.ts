import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Page } from '@playwright/test';

const ffmpegPath = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;

/** A 640×360 PNG of ffmpeg's test card in `dir`: its path and its bytes in base64 (for a drop). */
export async function testCardPng(dir: string): Promise<{ path: string; base64: string }> {
  const path = join(dir, 'frame.png');
  await promisify(execFile)(ffmpegPath, [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=640x360',
    '-frames:v',
    '1',
    path,
  ]);
  return { path, base64: (await readFile(path)).toString('base64') };
}

/**
 * Drops a file on the start-frame zone the way the OS does: a drop event carrying a DataTransfer.
 * Without `base64`, a file of `size` bytes that starts with PNG's signature (for the size limits).
 */
export async function dropStartFrame(
  page: Page,
  file: { name: string; type: string; base64?: string; size?: number },
): Promise<void> {
  const dataTransfer = await page.evaluateHandle((f) => {
    const bytes = f.base64 ? Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0)) : new Uint8Array(f.size ?? 0);
    if (!f.base64) bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], f.name, { type: f.type }));
    return dt;
  }, file);
  const zone = page.getByRole('button', { name: /Start frame drop zone/ });
  await zone.dispatchEvent('dragover', { dataTransfer });
  await zone.dispatchEvent('drop', { dataTransfer });
}
