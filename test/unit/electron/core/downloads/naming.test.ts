import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import {
  renderPattern,
  resolveInside,
  safeSegment,
  extensionFor,
  DEFAULT_NAMING_PATTERN,
} from '../../../../../electron/core/downloads/index.ts';

describe('download naming', () => {
  it('renders the default pattern', () => {
    expect(
      renderPattern(DEFAULT_NAMING_PATTERN, {
        id: 'med_1',
        model: 'local/mosaic:1',
        createdAt: '2026-03-04T05:06:07.890Z',
        ext: 'mp4',
      }),
    ).toBe('2026-03/local_mosaic_1/2026-03-04T05-06-07Z-med_1.mp4');
  });

  it('keeps hostile values inside one safe segment', () => {
    const rel = renderPattern('{model}/{id}.{ext}', {
      id: '../../etc/passwd',
      model: '..',
      createdAt: 'x',
      ext: 'mp4',
    });
    expect(rel.split('/')).toHaveLength(2);
    expect(rel.split('/')).not.toContain('..');
    expect(resolveInside('/tmp/root', rel).startsWith('/tmp/root/')).toBe(true);
    expect(safeSegment('CON')).toBe('_CON');
    expect(safeSegment('lpt1.txt')).toBe('_lpt1.txt');
    expect(safeSegment('a<b>c:d"e|f?g*h\u0001')).toBe('a_b_c_d_e_f_g_h_');
    expect(safeSegment('name. . ')).toBe('name');
    expect(safeSegment('')).toBe('_');
    expect(safeSegment('x'.repeat(300))).toHaveLength(120);
  });

  it('refuses paths that escape the root', () => {
    expect(() => resolveInside('/tmp/root', '../x')).toThrow(/outside/);
    expect(resolveInside('/tmp/root', 'a/b.mp4')).toBe(join('/tmp/root', 'a/b.mp4'));
  });

  it('picks the extension from the MIME type, else the URL', () => {
    expect(extensionFor('video/mp4')).toBe('mp4');
    expect(extensionFor('application/x-foo', 'http://h/a/b.MKV?x=1')).toBe('mkv');
    expect(extensionFor('application/x-foo')).toBe('bin');
  });
});
