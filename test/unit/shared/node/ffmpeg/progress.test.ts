import { describe, expect, it } from 'vitest';
import {
  createLineSplitter,
  initialProgress,
  parseDurationLine,
  parseProgressLine,
  parseTimestamp,
  reduceProgress,
} from '../../../../../shared/node/ffmpeg/progress.ts';

describe('progress parser', () => {
  it('reads timestamps, including the negative ones before the first frame', () => {
    expect(parseTimestamp('00:00:01.50')).toBe(1.5);
    expect(parseTimestamp('01:02:03')).toBe(3723);
    expect(parseTimestamp('-00:00:00.04')).toBe(-0.04);
    expect(parseTimestamp('N/A')).toBeNull();
  });

  it('reads the input duration', () => {
    expect(parseDurationLine('  Duration: 00:00:02.00, start: 0.000000, bitrate: 93 kb/s')).toBe(2);
    expect(parseDurationLine('  Duration: N/A, bitrate: N/A')).toBeNull();
  });

  it('reads a stats line', () => {
    expect(parseProgressLine('frame=   15 fps=0.0 q=-0.0 Lsize=N/A time=00:00:01.00 bitrate=N/A speed=23.7x')).toEqual({
      frame: 15,
      fps: 0,
      timeSeconds: 1,
      speed: 23.7,
      sizeKb: null,
    });
    expect(
      parseProgressLine(
        'frame=  120 fps= 60 q=28.0 size=     256kB time=00:00:04.00 bitrate= 524.3kbits/s speed=2.01x',
      ),
    ).toMatchObject({
      frame: 120,
      fps: 60,
      sizeKb: 256,
      timeSeconds: 4,
      speed: 2.01,
    });
    expect(parseProgressLine('size=      12kB time=00:00:00.50 bitrate= 196.6kbits/s speed=1x')).toMatchObject({
      frame: null,
      timeSeconds: 0.5,
    });
    expect(parseProgressLine('Stream #0:0: Video: h264')).toBeNull();
    expect(parseProgressLine('frame=    0 fps=0.0 q=0.0 size=N/A time=N/A bitrate=N/A speed=N/A')).toMatchObject({
      timeSeconds: null,
      speed: null,
    });
  });

  it('folds lines into a fraction of the duration, clamped to 0..1', () => {
    let s = initialProgress();
    s = reduceProgress(s, '  Duration: 00:00:04.00, start: 0.000000, bitrate: 93 kb/s');
    expect(s.durationSeconds).toBe(4);
    s = reduceProgress(s, 'frame=   30 fps=0.0 q=-0.0 size=1kB time=00:00:01.00 bitrate=N/A speed=2x');
    expect(s.fraction).toBe(0.25);
    s = reduceProgress(s, 'frame=  130 fps=0.0 q=-0.0 size=1kB time=00:00:05.00 bitrate=N/A speed=2x');
    expect(s.fraction).toBe(1);
    const same = reduceProgress(s, 'Press [q] to stop');
    expect(same).toBe(s);
  });

  it('keeps a caller duration hint (a trim knows its output length) over the input duration', () => {
    let s = initialProgress(2);
    s = reduceProgress(s, '  Duration: 00:00:10.00, start: 0.000000, bitrate: 93 kb/s');
    s = reduceProgress(s, 'frame=1 fps=0 q=0 size=1kB time=00:00:01.00 bitrate=N/A speed=1x');
    expect(s.fraction).toBe(0.5);
  });

  it('has no fraction while the duration is unknown', () => {
    const s = reduceProgress(initialProgress(), 'frame=1 fps=0 q=0 size=1kB time=00:00:01.00 bitrate=N/A speed=1x');
    expect(s.fraction).toBeNull();
    expect(s.latest?.timeSeconds).toBe(1);
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
