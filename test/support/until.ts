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
