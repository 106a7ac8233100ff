import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Page } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import {
  compose,
  expectNoPageErrors,
  generateButton,
  nav,
  RENDER_TIMEOUT_MS,
  waitForJobsToFinish,
} from './support/pages.ts';

const ffmpegPath = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;

/** Drops files on the start-frame zone the way the OS does: a drop event carrying a DataTransfer. */
async function dropFile(
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

test.describe('start frames', () => {
  test('a PNG dragged in becomes the start frame, and the image-to-video job succeeds', async ({
    app,
    page,
    pageErrors,
  }) => {
    const png = join(app.dataDir, 'frame.png');
    await promisify(execFile)(ffmpegPath, [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=640x360',
      '-frames:v',
      '1',
      png,
    ]);
    const uploads: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/rpc/uploads')) uploads.push(r.url());
    });
    await compose(page, { prompt: 'Slow push-in on the test card', model: /^Motion/, shortest: true });
    await dropFile(page, { name: 'frame.png', type: 'image/png', base64: (await readFile(png)).toString('base64') });
    await page.getByRole('img', { name: 'Start frame preview: frame.png' }).waitFor();
    await page.getByText('640×360').waitFor();
    await screenshot(page, 'compose-start-frame');
    await generateButton(page).click();
    await nav(page, 'Queue');
    expect(await waitForJobsToFinish(page, 1, RENDER_TIMEOUT_MS)).toEqual(['Done']);
    expect(await page.getByRole('listitem').first().textContent()).toContain('start frame');
    expect(uploads.length).toBeGreaterThan(0);
    expectNoPageErrors(pageErrors);
  });

  test('a 21 MB image is refused with a clear message before any upload', async ({ page, pageErrors }) => {
    const uploads: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/rpc/uploads')) uploads.push(r.url());
    });
    await compose(page, { prompt: 'Too big to start from', model: /^Motion/ });
    await dropFile(page, { name: 'huge.png', type: 'image/png', size: 21_000_000 });
    const alert = page.getByRole('alert').filter({ hasText: 'huge.png' });
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      'huge.png is 21 MB; start frames can be at most 20 MB. Nothing was uploaded.',
    );
    expect(await generateButton(page).isDisabled()).toBe(true);
    await screenshot(page, 'compose-start-frame-refused');
    expect(uploads).toEqual([]);
    expectNoPageErrors(pageErrors);
  });
});
