import { expect, type Locator, type Page } from '@playwright/test';

/**
 * How long one video render may take while other work fills both cores: a bound that keeps a
 * stuck job from hanging the suite, not a goal (no test asserts on wall time).
 */
export const RENDER_TIMEOUT_MS = 240_000;

/** Page objects: every element is found by role and accessible name, as a screen reader would. */
export function nav(page: Page, screen: 'Compose' | 'Queue' | 'Library' | 'Settings'): Promise<void> {
  return page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('button', { name: new RegExp(`^${screen}`) })
    .click();
}

/**
 * Fills Compose. `shortest`: the shortest duration and the smallest size, so the Local engine's
 * render takes about a second rather than a 1080p one's several (docs/testing.md).
 */
export async function compose(page: Page, o: { prompt: string; model: RegExp; shortest?: boolean }): Promise<void> {
  await nav(page, 'Compose');
  await page.getByLabel('Prompt', { exact: true }).fill(o.prompt);
  await pickModel(page, o.model);
  // The drawer's routing, seed and "Submit at…" in view, as the form showed them before the canvas.
  await openOptions(page);
  if (o.shortest) {
    const duration = page.getByRole('slider', { name: 'Duration' });
    await duration.focus();
    await duration.press('Home');
    await page.getByLabel('Size').selectOption('360p');
  }
}

/** The prompt dock's model chip opens the model list; picks the first model whose name matches. */
export async function pickModel(page: Page, model: RegExp): Promise<void> {
  if (!(await page.getByRole('listbox', { name: 'Model' }).isVisible()))
    await page.getByRole('button', { name: /^Model:/ }).click();
  await page.getByRole('option', { name: model }).first().click();
}

/** Opens Compose's "More options" drawer (provider and routing, seed, public, Submit at…). */
export async function openOptions(page: Page): Promise<void> {
  const button = page.getByRole('button', { name: 'More options' });
  if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
}

export function generateButton(page: Page): Locator {
  return page.getByRole('button', { name: 'Generate', exact: true });
}

export function jobs(page: Page): Locator {
  return page.getByRole('listitem').filter({ has: page.getByTestId('job-state') });
}

/** Waits until every job shown is finished; returns their state labels. */
export async function waitForJobsToFinish(page: Page, count: number, timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states = await page.getByTestId('job-state').allTextContents();
    if (states.length >= count && states.every((s) => ['Done', 'Failed', 'Canceled'].includes(s))) return states;
    if (Date.now() > deadline) throw new Error(`jobs still running after ${timeoutMs} ms: ${states.join(', ')}`);
    await page.waitForTimeout(500);
  }
}

export async function imageLoaded(img: Locator): Promise<boolean> {
  return img.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0);
}

export function expectNoPageErrors(errors: string[]): void {
  expect(errors, `page errors: ${errors.join('\n')}`).toEqual([]);
}
