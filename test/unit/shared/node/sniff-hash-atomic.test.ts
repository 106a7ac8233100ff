import { describe, expect, it } from 'vitest';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sniffMime } from '../../../../shared/node/sniff.ts';
import { constantTimeEqual, hmacBase64Url, randomToken, sha256Hex } from '../../../../shared/node/hash.ts';
import { atomicWriteFile, moveIntoPlace } from '../../../../shared/node/atomic-write.ts';

const bytes = (...parts: Array<number[] | string>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('sniffMime', () => {
  it.each([
    ['png', bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'rest'), 'image/png'],
    ['jpeg', bytes([0xff, 0xd8, 0xff, 0xe0]), 'image/jpeg'],
    ['gif', bytes('GIF89a...'), 'image/gif'],
    ['webp', bytes('RIFF', [0, 0, 0, 0], 'WEBPVP8 '), 'image/webp'],
    ['mp4', bytes([0, 0, 0, 0x20], 'ftypisom'), 'video/mp4'],
    ['quicktime', bytes([0, 0, 0, 0x14], 'ftypqt  '), 'video/quicktime'],
    ['webm', bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x82, 0x84], 'webm'), 'video/webm'],
  ])('%s', (_name, head, mime) => {
    expect(sniffMime(head)?.mime).toBe(mime);
  });

  it.each([
    ['text', bytes('hello world, not media')],
    ['empty', bytes()],
    ['avif is not a video', bytes([0, 0, 0, 0x1c], 'ftypavif')],
    ['matroska without webm', bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f], 'matroska')],
    ['short png prefix', bytes([0x89, 0x50])],
  ])('%s is not accepted', (_name, head) => {
    expect(sniffMime(head)).toBeNull();
  });
});

describe('hash helpers', () => {
  it('sha256, hmac and constant-time comparison', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hmacBase64Url('k', 'm')).toBe(hmacBase64Url(Buffer.from('k'), 'm'));
    expect(hmacBase64Url('k', 'm')).not.toBe(hmacBase64Url('k', 'n'));
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(randomToken(16)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe('atomic writes', () => {
  it('replace the target whole and leave no temp files; moves are renames', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'atomic-'));
    try {
      const target = join(dir, 'sub', 'file.txt');
      await atomicWriteFile(target, 'one');
      await atomicWriteFile(target, 'two', 0o600);
      expect(await readFile(target, 'utf8')).toBe('two');
      expect(await readdir(join(dir, 'sub'))).toEqual(['file.txt']);
      expect((await stat(target)).mode & 0o777).toBe(0o600);
      await moveIntoPlace(join(dir, 'sub'), join(dir, 'moved', 'here'));
      expect(await readFile(join(dir, 'moved', 'here', 'file.txt'), 'utf8')).toBe('two');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
