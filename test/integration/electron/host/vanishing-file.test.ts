import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A defect found when the app was tried as a new user: a file deleted while the host answered for it killed the whole process
// with an unhandled ENOENT. The host runs in a child process here, so its death is observable.
const childScript = fileURLToPath(new URL('./host-child.ts', import.meta.url));
let dir: string;
let child: ChildProcessWithoutNullStreams;
let origin: string;
let cookie: string;
let downloads: string;
let stderr = '';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-vanish-'));
  child = spawn(process.execPath, [childScript, path.join(dir, 'data')], { stdio: 'pipe' });
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const lines = createInterface({ input: child.stdout });
  const [line] = (await Promise.race([once(lines, 'line'), once(child, 'exit')])) as [string];
  if (child.exitCode !== null) throw new Error(`the host did not start: ${stderr}`);
  const info = JSON.parse(line) as { port: number; secret: string; downloads: string };
  origin = `http://127.0.0.1:${info.port}`;
  cookie = `clipdesk_${info.port}=${info.secret}`;
  downloads = info.downloads;
  await mkdir(downloads, { recursive: true });
});

afterAll(async () => {
  if (child.exitCode === null) {
    const exited = once(child, 'exit');
    child.stdin.end();
    await exited;
  }
  await rm(dir, { recursive: true, force: true });
});

/** GETs a file and deletes it while the request is in flight; any answer but a dead host is fine. */
async function getWhileDeleting(name: string, delayTicks: number, range: boolean): Promise<number | 'cut'> {
  const file = path.join(downloads, name);
  await writeFile(file, Buffer.alloc(256 * 1024, 1));
  const response = fetch(`${origin}/local-media/downloads/${name}`, {
    headers: { cookie, ...(range ? { range: 'bytes=100-' } : {}) },
  });
  for (let i = 0; i < delayTicks; i++) await new Promise((r) => setImmediate(r));
  await unlink(file);
  try {
    const res = await response;
    await res.arrayBuffer();
    return res.status;
  } catch {
    // The host may cut a response off once its file is gone; that is an allowed answer.
    return 'cut';
  }
}

describe('browser-mode host: a served file that disappears', () => {
  it('answers 404 (or cuts the response) and keeps running, many times over', async () => {
    const answers = new Set<number | 'cut'>();
    for (let round = 0; round < 60 && child.exitCode === null; round++) {
      const batch = Array.from({ length: 8 }, (_, i) =>
        getWhileDeleting(`clip-${round}-${i}.mp4`, (round + i) % 6, i % 2 === 1),
      );
      for (const answer of await Promise.all(batch)) answers.add(answer);
    }
    expect(stderr).not.toMatch(/ENOENT|Unhandled|uncaught/i);
    expect(child.exitCode).toBeNull();
    for (const answer of answers) expect([200, 206, 404, 'cut']).toContain(answer);

    // Still serving: the contract and a file that stays.
    const info = await fetch(`${origin}/rpc/app/info`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(info.status).toBe(200);
    await writeFile(path.join(downloads, 'stays.mp4'), 'still here');
    const stays = await fetch(`${origin}/local-media/downloads/stays.mp4`, { headers: { cookie } });
    expect(await stays.text()).toBe('still here');
  });
});
