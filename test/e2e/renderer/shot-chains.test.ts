// Browser mode, the real core and the embedded Local engine (docs/workflows.md, "Shot chains"): a video is
// continued twice with "Continue this shot" (its last frame as the start frame, the same model),
// the three shots show as one chain, the sequence is previewed and exported, and a clip is trimmed.
// The exported MP4s are checked with ffprobe.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Locator, Page } from '@playwright/test';
import { ffprobePath } from '../../../shared/node/ffmpeg.ts';
import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import { RENDER_TIMEOUT_MS, compose, expectNoPageErrors, generateButton, nav } from './support/pages.ts';

const PROMPTS = ['a paper boat sets sail', 'the paper boat meets a wave', 'the paper boat reaches the shore'];
const tile = (page: Page, prompt: string) => page.getByRole('option', { name: new RegExp(`${prompt}$`) });
const details = (page: Page) => page.getByRole('complementary', { name: 'Item details' });

async function ffprobe(file: string) {
  const { stdout } = await promisify(execFile)(ffprobePath(), [
    '-v',
    'error',
    '-show_streams',
    '-show_format',
    '-of',
    'json',
    file,
  ]);
  return JSON.parse(stdout) as {
    streams: { codec_type: string; width?: number; height?: number }[];
    format: { duration: string };
  };
}

/** The path a result notice shows (the last line of its text). */
async function shownPath(notice: Locator): Promise<string> {
  const text = (await notice.locator('.mono').innerText()).trim();
  return text.split('\n').at(-1)!.trim();
}

async function generateAndWait(page: Page, prompt: string): Promise<void> {
  await generateButton(page).click();
  await page.getByText('Job queued').last().waitFor();
  await nav(page, 'Queue');
  await expect
    .poll(
      () =>
        page
          .getByRole('listitem', { name: `Job: ${prompt}` })
          .getByTestId('job-state')
          .textContent(),
      {
        timeout: RENDER_TIMEOUT_MS,
      },
    )
    .toBe('Done');
}

/** From the open shot: "Continue this shot", a new prompt, Generate. */
async function continueShot(page: Page, from: string, prompt: string): Promise<void> {
  await nav(page, 'Library');
  await tile(page, from).click();
  await details(page).getByRole('button', { name: 'Continue this shot' }).click();
  // Compose: the same model, the clip's last frame as the start frame, the parent named.
  await expect(page.getByText(`Continues “${from.slice(0, 40)}”`)).toBeVisible({ timeout: 30_000 });
  await page.getByLabel('Prompt', { exact: true }).fill(prompt);
  await generateAndWait(page, prompt);
}

test.describe('shot chains', () => {
  test('continue a shot twice, preview and export the sequence, trim a clip', async ({ page, pageErrors }) => {
    test.setTimeout(600_000);
    await compose(page, { prompt: PROMPTS[0]!, model: /Motion/, shortest: true });
    await generateAndWait(page, PROMPTS[0]!);

    await continueShot(page, PROMPTS[0]!, PROMPTS[1]!);
    await screenshot(page, 'shot-chains-queue');
    await continueShot(page, PROMPTS[1]!, PROMPTS[2]!);

    // One chain of three, in order; tiles carry the badge; the panel links the parent.
    await nav(page, 'Library');
    await expect(tile(page, PROMPTS[2]!).getByText('Shot 3/3')).toBeVisible({ timeout: 15_000 });
    await expect(tile(page, PROMPTS[0]!).getByText('Shot 1/3')).toBeVisible();
    await tile(page, PROMPTS[1]!).click();
    const chain = details(page).getByRole('region', { name: 'Shot chain' });
    await expect(chain.getByText('Shot 2 of 3')).toBeVisible({ timeout: 15_000 });
    const strip = chain.getByRole('listitem');
    await expect(strip).toHaveCount(3);
    for (const [i, prompt] of PROMPTS.entries())
      await expect(strip.nth(i).getByRole('button')).toHaveAccessibleName(`Shot ${i + 1}: ${prompt}`);
    await expect(chain.getByRole('button', { name: 'Continues shot 1' })).toBeVisible();

    // Preview: a stitched proxy plays in the panel.
    await chain.getByRole('button', { name: 'Preview sequence' }).click();
    const preview = chain.getByLabel('Sequence preview').locator('video');
    await expect(preview).toBeVisible({ timeout: 120_000 });
    await expect
      .poll(() => preview.evaluate((v) => (v as HTMLVideoElement).readyState), { timeout: 30_000 })
      .toBeGreaterThanOrEqual(1);
    await screenshot(page, 'shot-chains-strip-preview');

    // Export: an MP4 in the download folder, one video stream, as long as the three shots.
    await chain.getByRole('button', { name: 'Export sequence' }).click();
    const exported = chain.getByRole('status', { name: 'Sequence export' });
    await expect(exported).toBeVisible({ timeout: 120_000 });
    const sequencePath = await shownPath(exported);
    expect(sequencePath).toMatch(/[\\/]downloads[\\/]exports[\\/].*sequence-3-shots\.mp4$/);
    const sequence = await ffprobe(sequencePath);
    const video = sequence.streams.filter((s) => s.codec_type === 'video');
    expect(video).toHaveLength(1);
    expect([video[0]!.width, video[0]!.height]).toEqual([640, 360]);
    expect(Number(sequence.format.duration)).toBeGreaterThan(5.5);
    expect(Number(sequence.format.duration)).toBeLessThan(6.5);

    // Trim the first shot: export the trimmed clip, then use it trimmed in the chain.
    await chain.getByRole('button', { name: `Shot 1: ${PROMPTS[0]!}` }).click();
    const trim = details(page).getByRole('region', { name: 'Trim' });
    await trim.getByLabel('In point (seconds)').fill('0.5');
    await trim.getByLabel('Out point (seconds)').fill('1.5');
    await trim.getByRole('button', { name: 'Export trimmed clip' }).click();
    const trimmed = trim.getByRole('status', { name: 'Trim result' });
    await expect(trimmed).toBeVisible({ timeout: 60_000 });
    const trimmedPath = await shownPath(trimmed);
    expect(trimmedPath).toMatch(/[\\/]downloads[\\/]exports[\\/].*trim-0\.5-1\.5\.mp4$/);
    expect(Number((await ffprobe(trimmedPath)).format.duration)).toBeCloseTo(1, 0);

    await trim.getByRole('button', { name: 'Use trimmed clip in chain' }).click();
    await expect(trim.getByRole('status', { name: 'Chain trim' })).toHaveText('In its chain: 0.5–1.5 s', {
      timeout: 15_000,
    });
    await expect(
      details(page).getByRole('button', { name: `Shot 1: ${PROMPTS[0]!} (trimmed 0.5–1.5 s)` }),
    ).toBeVisible();
    await details(page).getByRole('button', { name: 'Export sequence' }).click();
    const again = details(page).getByRole('status', { name: 'Sequence export' });
    await expect(again).toBeVisible({ timeout: 120_000 });
    const shorter = Number((await ffprobe(await shownPath(again))).format.duration);
    expect(shorter).toBeGreaterThan(4.5);
    expect(shorter).toBeLessThan(5.5);
    await trim.scrollIntoViewIfNeeded();
    await screenshot(page, 'shot-chains-trim');
    expectNoPageErrors(pageErrors);
  });
});
