import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probe, runFfmpeg } from '../../../../shared/node/ffmpeg.ts';
import { MAX_IMAGE_SIDE, SNIFF_BYTES, headerDimensions, implausibleDecode } from '../../../../shared/node/sniff.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-sniff-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function image(name: string, extra: string[] = []): Promise<string> {
  const path = join(dir, name);
  await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=s=123x45', '-frames:v', '1', ...extra, '-y', path]);
  return path;
}

async function head(path: string): Promise<Buffer> {
  return (await readFile(path)).subarray(0, SNIFF_BYTES);
}

describe('real images', () => {
  it.each([
    ['a.png', []],
    ['a.gif', []],
    ['a.webp', ['-lossless', '0']],
    ['b.webp', ['-lossless', '1']],
    ['a.jpg', []],
  ])('%s: the header size (where stated) is the decoded size, and the decode is plausible', async (name, extra) => {
    const path = await image(name, extra);
    const bytes = await head(path);
    const stated = headerDimensions(bytes);
    if (!name.endsWith('.jpg')) expect(stated).toEqual({ width: 123, height: 45 });
    expect(implausibleDecode(bytes, await probe(path))).toBeNull();
  });
});

describe('lying headers', () => {
  it('GIF89a followed by HTML is refused whatever ffprobe believes', async () => {
    const html = '<!doctype html><html><body>' + 'x'.repeat(400) + '</body></html>';
    const bytes = Buffer.concat([Buffer.from('GIF89a'), Buffer.from(html)]).subarray(0, 306);
    const path = join(dir, 'fake.gif');
    await writeFile(path, bytes);
    const facts = await probe(path).catch(() => ({ width: 8508, height: 28516, videoCodec: 'gif', formatName: 'gif' }));
    expect(implausibleDecode(bytes.subarray(0, SNIFF_BYTES), facts)).toMatch(/larger than 16384|header says/);
  });

  it('a size past the bound, a codec that is not the sniffed one, a size other than the header’s', async () => {
    const png = await head(await image('c.png'));
    const facts = { width: 123, height: 45, videoCodec: 'png', formatName: 'png_pipe' };
    expect(implausibleDecode(png, facts)).toBeNull();
    expect(implausibleDecode(png, { ...facts, videoCodec: 'mjpeg' })).toMatch(/not image\/png/);
    expect(implausibleDecode(png, { ...facts, width: 124 })).toMatch(/header says 123x45/);
    expect(implausibleDecode(png, { ...facts, width: MAX_IMAGE_SIDE + 1 })).toMatch(/larger than/);
  });
});
