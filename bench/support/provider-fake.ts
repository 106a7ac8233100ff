import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** fal's contract fake in a child process; it reports its address and each new job. */
export async function startFakeProcess(scenario = 'slow') {
  const script = fileURLToPath(new URL('./provider-fake-process.ts', import.meta.url));
  const child = spawn(process.execPath, [script, 'fal', scenario], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  let submissions = 0;
  const waiters: Array<() => void> = [];
  const ready = new Promise<{ baseUrl: string; key: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the provider fake exited (${code})`)));
    lines.on('line', (line) => {
      const msg = JSON.parse(line) as { baseUrl?: string; key?: string; submissions?: number };
      if (msg.baseUrl !== undefined && msg.key !== undefined) resolve({ baseUrl: msg.baseUrl, key: msg.key });
      if (msg.submissions !== undefined) {
        submissions = msg.submissions;
        for (const w of waiters.splice(0)) w();
      }
    });
  });
  const { baseUrl, key } = await ready;
  return {
    baseUrl,
    key,
    async waitForSubmissions(n: number): Promise<void> {
      while (submissions < n) await new Promise<void>((r) => waiters.push(r));
    },
    stop: () => child.kill(),
  };
}
