import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// electron-builder.yml, read with the YAML parser electron-builder itself uses.
const root = fileURLToPath(new URL('../../..', import.meta.url));
const builderRequire = createRequire(createRequire(import.meta.url).resolve('app-builder-lib/package.json'));
const yaml = builderRequire('js-yaml') as { load(text: string): unknown };

interface BuilderConfig {
  directories: { buildResources: string };
  electronFuses: Record<string, unknown>;
  linux: { icon: string };
  mac: { icon: string; entitlements: string; entitlementsInherit: string };
  win: { icon: string };
}
const config = yaml.load(readFileSync(path.join(root, 'electron-builder.yml'), 'utf8')) as BuilderConfig;

/** Width and height from a PNG's IHDR chunk. */
function pngSize(data: Buffer): { width: number; height: number } {
  expect(data.subarray(0, 8).toString('latin1')).toBe('\x89PNG\r\n\x1a\n');
  expect(data.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

describe('electron-builder.yml', () => {
  it('sets the security fuses', () => {
    expect(config.electronFuses).toMatchObject({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
    });
    // A misspelt fuse is silently ignored: every key must be one electron-builder reads.
    const packager = readFileSync(builderRequire.resolve('./out/platformPackager.js'), 'utf8');
    for (const key of Object.keys(config.electronFuses)) expect(packager, key).toContain(`fuses.${key} `);
  });

  it('names only icons and entitlements that exist in resources/', () => {
    expect(config.directories.buildResources).toBe('resources');
    const named = [config.linux.icon, config.mac.icon, config.win.icon, config.mac.entitlements];
    for (const file of [...named, config.mac.entitlementsInherit]) {
      expect(file.startsWith('resources/'), file).toBe(true);
      expect(existsSync(path.join(root, file)), file).toBe(true);
    }
  });

  it('Linux: a folder of square PNGs named by their size, up to at least 512', () => {
    const dir = path.join(root, config.linux.icon);
    expect(statSync(dir).isDirectory()).toBe(true);
    const sizes = readdirSync(dir)
      .filter((f) => f.endsWith('.png'))
      .map((f) => {
        const m = /^(\d+)x(\d+)\.png$/.exec(f);
        expect(m, f).not.toBeNull();
        expect(pngSize(readFileSync(path.join(dir, f)))).toEqual({ width: Number(m![1]), height: Number(m![2]) });
        return Number(m![1]);
      });
    expect(sizes).toEqual(expect.arrayContaining([16, 32, 48, 64, 128, 256, 512]));
  });

  it('Windows: an .ico with PNG entries up to 256', () => {
    const ico = readFileSync(path.join(root, config.win.icon));
    expect(ico.readUInt16LE(0)).toBe(0);
    expect(ico.readUInt16LE(2)).toBe(1);
    const sizes: number[] = [];
    for (let i = 0; i < ico.readUInt16LE(4); i++) {
      const entry = 6 + 16 * i;
      const [length, offset] = [ico.readUInt32LE(entry + 8), ico.readUInt32LE(entry + 12)];
      const { width, height } = pngSize(ico.subarray(offset, offset + length));
      expect(width).toBe(ico.readUInt8(entry) || 256);
      expect(height).toBe(width);
      sizes.push(width);
    }
    expect(sizes).toEqual(expect.arrayContaining([16, 32, 48, 256]));
  });

  it('macOS: an .icns whose entries are PNGs up to 1024', () => {
    const icns = readFileSync(path.join(root, config.mac.icon));
    expect(icns.subarray(0, 4).toString('latin1')).toBe('icns');
    expect(icns.readUInt32BE(4)).toBe(icns.length);
    const sizes: number[] = [];
    for (let at = 8; at < icns.length; at += icns.readUInt32BE(at + 4)) {
      sizes.push(pngSize(icns.subarray(at + 8, at + icns.readUInt32BE(at + 4))).width);
    }
    expect(sizes).toEqual(expect.arrayContaining([16, 32, 128, 256, 512, 1024]));
  });
});
