import { describe, expect, it } from 'vitest';
import {
  createLineSplitter,
  parseProgressFraction,
  parseProgressSeconds,
} from '../../../../shared/node/ffmpeg-progress.ts';

describe('parseProgressSeconds', () => {
  it('reads -progress key=value lines (out_time_ms is in microseconds)', () => {
    expect(parseProgressSeconds('out_time_ms=1500000')).toBe(1.5);
    expect(parseProgressSeconds('out_time_us=250000')).toBe(0.25);
    expect(parseProgressSeconds('out_time=00:00:02.500000')).toBe(2.5);
  });

  it('reads the stderr status line', () => {
    const line = 'frame=   42 fps= 20 q=28.0 size=     256kB time=00:01:02.40 bitrate= 33.6kbits/s speed=1.2x';
    expect(parseProgressSeconds(line)).toBeCloseTo(62.4, 6);
  });

  it('reads hours and clamps negative times to zero', () => {
    expect(parseProgressSeconds('time=01:00:00.00')).toBe(3600);
    expect(parseProgressSeconds('time=-00:00:00.04')).toBe(0);
  });

  it('ignores lines without progress', () => {
    expect(parseProgressSeconds('Stream #0:0: Video: h264')).toBeNull();
    expect(parseProgressSeconds('  Duration: 00:00:05.00, start: 0.000000')).toBeNull();
    expect(parseProgressSeconds('progress=continue')).toBeNull();
    expect(parseProgressSeconds('time=N/A bitrate=N/A')).toBeNull();
  });
});

describe('parseProgressFraction', () => {
  it('divides by the total and clamps to [0, 1]', () => {
    expect(parseProgressFraction('time=00:00:01.00', 4)).toBe(0.25);
    expect(parseProgressFraction('out_time_ms=8000000', 4)).toBe(1);
  });

  it('treats progress=end as done', () => {
    expect(parseProgressFraction('progress=end', 0)).toBe(1);
  });

  it('returns null when the total is unknown or the line has no time', () => {
    expect(parseProgressFraction('time=00:00:01.00', 0)).toBeNull();
    expect(parseProgressFraction('hello', 10)).toBeNull();
  });
});

describe('createLineSplitter', () => {
  it('splits on \\n, \\r\\n and the bare \\r of the status line, across chunks', () => {
    const lines: string[] = [];
    const s = createLineSplitter((l) => lines.push(l));
    s.push('a\r\nb');
    s.push('c\rframe=1 time=00:00:00.04\r');
    s.push('tail');
    s.end();
    expect(lines).toEqual(['a', 'bc', 'frame=1 time=00:00:00.04', 'tail']);
  });
});
