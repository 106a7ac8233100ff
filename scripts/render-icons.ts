// Renders the app icon (renderer/public/icon.svg) into the packaging icons electron-builder.yml
// names: resources/icons/<N>x<N>.png (Linux), icon.icns (macOS) and icon.ico (Windows). The PNGs
// are drawn by Chromium (Debian's, or CHROMIUM_PATH), so they are the SVG as a browser shows it.
// Run it after changing the SVG: `node scripts/render-icons.ts`; the results are committed.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = path.join(root, 'resources', 'icons');
const svg = await readFile(path.join(root, 'renderer', 'public', 'icon.svg'), 'utf8');

/** Linux icon sizes (the hicolor theme's), each also used below. */
const LINUX = [16, 24, 32, 48, 64, 128, 256, 512];
/** Windows: PNG-compressed entries, up to 256 (the ICO maximum). */
const ICO = [16, 24, 32, 48, 64, 128, 256];
/** macOS: icns entry type → pixel size (PNG data in every entry). */
const ICNS: [string, number][] = [
  ['icp4', 16],
  ['icp5', 32],
  ['icp6', 64],
  ['ic07', 128],
  ['ic08', 256],
  ['ic09', 512],
  ['ic10', 1024],
  ['ic11', 32],
  ['ic12', 64],
  ['ic13', 256],
  ['ic14', 512],
];

const browser = await chromium.launch({ executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium' });
const png = new Map<number, Buffer>();
try {
  const page = await browser.newPage();
  for (const size of new Set([...LINUX, ...ICO, ...ICNS.map(([, s]) => s)])) {
    await page.setViewportSize({ width: size, height: size });
    const sized = svg.replace('<svg ', `<svg width="${size}" height="${size}" `);
    await page.setContent(`<!doctype html><html><body style="margin:0;background:transparent">${sized}</body></html>`);
    png.set(size, await page.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } }));
  }
} finally {
  await browser.close();
}
const get = (size: number): Buffer => png.get(size)!;

await mkdir(out, { recursive: true });
for (const size of LINUX) await writeFile(path.join(out, `${size}x${size}.png`), get(size));

// ICO: header, one 16-byte directory entry per image, then the PNGs.
const header = Buffer.alloc(6);
header.writeUInt16LE(0, 0);
header.writeUInt16LE(1, 2); // 1 = icon
header.writeUInt16LE(ICO.length, 4);
let offset = 6 + 16 * ICO.length;
const entries = ICO.map((size) => {
  const e = Buffer.alloc(16);
  e.writeUInt8(size === 256 ? 0 : size, 0); // 0 means 256
  e.writeUInt8(size === 256 ? 0 : size, 1);
  e.writeUInt16LE(1, 4); // colour planes
  e.writeUInt16LE(32, 6); // bits per pixel
  e.writeUInt32LE(get(size).length, 8);
  e.writeUInt32LE(offset, 12);
  offset += get(size).length;
  return e;
});
await writeFile(path.join(out, 'icon.ico'), Buffer.concat([header, ...entries, ...ICO.map(get)]));

// ICNS: 'icns' + total length, then per entry its type, its length (header included) and the PNG.
const chunks = ICNS.map(([type, size]) => {
  const h = Buffer.alloc(8);
  h.write(type, 0, 'latin1');
  h.writeUInt32BE(8 + get(size).length, 4);
  return Buffer.concat([h, get(size)]);
});
const icnsHeader = Buffer.alloc(8);
icnsHeader.write('icns', 0, 'latin1');
icnsHeader.writeUInt32BE(8 + chunks.reduce((n, c) => n + c.length, 0), 4);
await writeFile(path.join(out, 'icon.icns'), Buffer.concat([icnsHeader, ...chunks]));

console.log(`wrote ${LINUX.length} PNGs, icon.ico and icon.icns to ${path.relative(root, out)}/`);
