import { describe, expect, it } from 'vitest';
import { renderNiceness } from '../../../../../shared/node/ffmpeg/process.ts';

describe('CLIPDESK_RENDER_NICENESS', () => {
  it('is 19 when unset or empty, and any whole number from 0 to 19 when set', () => {
    const warned: string[] = [];
    const warn = (line: string) => warned.push(line);
    expect([undefined, '', ' '].map((s) => renderNiceness(s, warn))).toEqual([19, 19, 19]);
    expect(['0', '10', ' 19 '].map((s) => renderNiceness(s, warn))).toEqual([0, 10, 19]);
    expect(warned).toEqual([]);
  });

  it('ignores anything else with one line that says what it takes, and renders at 19', () => {
    for (const bad of ['20', '-1', '5.5', 'x', '1e1']) {
      const warned: string[] = [];
      expect(renderNiceness(bad, (line) => warned.push(line))).toBe(19);
      expect(warned).toEqual([
        `ignoring CLIPDESK_RENDER_NICENESS='${bad}' (a whole number from 0 to 19): renders run at nice 19`,
      ]);
    }
  });
});
