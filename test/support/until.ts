/**
 * Waits for `look` to find something (anything but undefined), looking every `everyMs`; rejects
 * naming `what` once `timeoutMs` has passed. The tests' one way to wait on another process or node.
 */
export async function until<T>(
  what: string,
  look: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
  everyMs = 20,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const found = await look();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** `until` for a yes-or-no look: waits for `check` to hold. */
export async function untilTrue(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  await until(what, async () => ((await check()) ? true : undefined), timeoutMs);
}

/**
 * Settles with the promise's value, or 'still waiting' after `ms`: for what must happen well before
 * a slower fallback would (a safety poll), and for what must not have happened yet.
 */
export function within<T>(ms: number, promise: Promise<T>): Promise<T | 'still waiting'> {
  return Promise.race([promise, new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), ms))]);
}
