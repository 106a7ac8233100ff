import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localMediaUrl, parseRange, serveLocalMedia, type MediaRoots } from '../../../../electron/app/local-media.ts';
import { serveAppFile, splitMediaUrl } from '../../../../electron/main/app-files.ts';

let dir: string;
let roots: MediaRoots;
const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-media-'));
  await mkdir(path.join(dir, 'downloads', '2026-01', 'model'), { recursive: true });
  await mkdir(path.join(dir, 'work'));
  await mkdir(path.join(dir, 'renderer', 'assets'), { recursive: true });
  await writeFile(path.join(dir, 'downloads', '2026-01', 'model', 'a clip.mp4'), bytes);
  await writeFile(path.join(dir, 'downloads', 'empty.png'), '');
  await writeFile(path.join(dir, 'secret.txt'), 'TOP SECRET');
  await writeFile(path.join(dir, 'renderer', 'index.html'), '<!doctype html>');
  await writeFile(path.join(dir, 'renderer', 'assets', 'app.js'), 'export {}');
  await symlink(path.join(dir, 'secret.txt'), path.join(dir, 'downloads', 'link.mp4'));
  await symlink(dir, path.join(dir, 'downloads', 'up'));
  roots = () => ({ downloads: path.join(dir, 'downloads'), work: path.join(dir, 'work') });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** As the protocol handler gets it: the raw URL. */
async function get(url: string, init: { method?: string; range?: string } = {}): Promise<Response> {
  const parts = splitMediaUrl(url);
  if (!parts) return new Response(null, { status: 404 });
  return serveLocalMedia(roots, parts.root, parts.rest, init.method ?? 'GET', init.range ?? null);
}

describe('clipdesk-media:// traversal', () => {
  it.each([
    ['..', 'clipdesk-media://downloads/../secret.txt'],
    ['.. deeper', 'clipdesk-media://downloads/2026-01/../../secret.txt'],
    ['%2e%2e', 'clipdesk-media://downloads/%2e%2e/secret.txt'],
    ['%2E%2E mixed case', 'clipdesk-media://downloads/%2E%2e/secret.txt'],
    ['encoded slash', 'clipdesk-media://downloads/..%2fsecret.txt'],
    ['backslash', 'clipdesk-media://downloads/..\\secret.txt'],
    ['encoded backslash', 'clipdesk-media://downloads/..%5csecret.txt'],
    ['absolute path', 'clipdesk-media://downloads/$ENCODED_ABS'],
    ['absolute path with //', 'clipdesk-media://downloads/$ABS'],
    ['drive letter', 'clipdesk-media://downloads/C:%5cWindows%5cwin.ini'],
    ['NUL', 'clipdesk-media://downloads/a%00.mp4'],
    ['symlink escape (file)', 'clipdesk-media://downloads/link.mp4'],
    ['symlink escape (dir)', 'clipdesk-media://downloads/up/secret.txt'],
    ['unknown root', 'clipdesk-media://etc/passwd'],
    ['prototype root', 'clipdesk-media://__proto__/x'],
    ['no path', 'clipdesk-media://downloads/'],
    ['bad encoding', 'clipdesk-media://downloads/%E0%A4%A'],
  ])('refuses %s', async (_name, template) => {
    const abs = path.join(dir, 'secret.txt');
    const res = await get(template.replace('$ENCODED_ABS', encodeURIComponent(abs)).replace('$ABS', abs));
    expect([400, 403, 404]).toContain(res.status);
    expect(await res.text()).not.toContain('TOP SECRET');
  });
});

describe('clipdesk-media:// serving', () => {
  const url = 'clipdesk-media://downloads/2026-01/model/a%20clip.mp4';

  it('serves the whole file with its type', async () => {
    const res = await get(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-length')).toBe('1000');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
  });

  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=900-', 900, 999],
    ['bytes=-100', 900, 999],
    ['bytes=990-5000', 990, 999],
  ])('Range %s → 206', async (range, start, end) => {
    const res = await get(url, { range });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/1000`);
    expect(res.headers.get('content-length')).toBe(String(end - start + 1));
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes.subarray(start, end + 1));
  });

  it.each(['bytes=1000-', 'bytes=5000-6000', 'bytes=500-100', 'bytes=-0', 'bytes=-'])(
    'Range %s → 416',
    async (range) => {
      const res = await get(url, { range });
      expect(res.status).toBe(416);
      expect(res.headers.get('content-range')).toBe('bytes */1000');
    },
  );

  it('HEAD: the headers, no body', async () => {
    const res = await get(url, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('1000');
    expect(res.body).toBeNull();
    const ranged = await get(url, { method: 'HEAD', range: 'bytes=0-9' });
    expect(ranged.status).toBe(206);
    expect(ranged.body).toBeNull();
  });

  it('other methods → 405; an empty file → 200 with no body', async () => {
    expect((await get(url, { method: 'POST' })).status).toBe(405);
    const empty = await get('clipdesk-media://downloads/empty.png');
    expect(empty.status).toBe(200);
    expect(empty.headers.get('content-length')).toBe('0');
  });

  it('parseRange ignores what it does not understand', () => {
    expect(parseRange(null, 10)).toBeNull();
    expect(parseRange('items=0-1', 10)).toBeNull();
    expect(parseRange('bytes=0-1,3-4', 10)).toBeNull();
  });

  it('builds URLs that it then serves, and none outside the roots', async () => {
    const file = path.join(dir, 'downloads', '2026-01', 'model', 'a clip.mp4');
    const built = localMediaUrl(roots, 'clipdesk-media://', file);
    expect(built).toBe(url);
    expect((await get(built!)).status).toBe(200);
    expect(localMediaUrl(roots, 'clipdesk-media://', path.join(dir, 'secret.txt'))).toBeNull();
  });
});

describe('clipdesk-app:// (the renderer files)', () => {
  it('serves the renderer with the CSP, never outside it', async () => {
    const index = await serveAppFile(path.join(dir, 'renderer'), 'clipdesk-app://app/');
    expect(index.status).toBe(200);
    const csp = index.headers.get('content-security-policy')!;
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toMatch(/unsafe-eval/);
    expect(csp).toMatch(/object-src 'none'/);
    expect(
      (await serveAppFile(path.join(dir, 'renderer'), 'clipdesk-app://app/assets/app.js')).headers.get('content-type'),
    ).toMatch(/javascript/);
    for (const bad of [
      'clipdesk-app://app/../secret.txt',
      'clipdesk-app://app/%2e%2e/secret.txt',
      'clipdesk-app://app/..%5csecret.txt',
    ]) {
      expect((await serveAppFile(path.join(dir, 'renderer'), bad)).status, bad).toBe(404);
    }
  });
});
