import { describe, expect, it } from 'vitest';
import { ffmpegArgs } from '../../../../../electron/core/media/run.ts';
import { sequenceArgs } from '../../../../../electron/core/media/sequence.ts';
import type { SequenceClip } from '../../../../../electron/core/media/sequence.ts';

const clip = (patch: Partial<SequenceClip> = {}): SequenceClip => ({
  durationSeconds: 2,
  width: 1280,
  height: 720,
  fps: 24,
  hasAudio: true,
  ...patch,
});

describe('sequence arguments', () => {
  it('fits every shot into the first shot’s frame and rate, and concatenates picture and sound together', () => {
    const args = sequenceArgs([clip(), clip({ width: 720, height: 1280, fps: 30 })]);
    const graph = args.complexFilter!;
    expect(graph).toContain('[0:v:0]scale=1280:720:force_original_aspect_ratio=decrease,pad=1280:720');
    expect(graph).toContain('[1:v:0]scale=1280:720');
    expect(graph.match(/fps=24:start_time=0/g)).toHaveLength(2);
    expect(graph).toContain('[0:a:0]aresample=48000:async=1:first_pts=0');
    expect(graph).toMatch(/\[v0\]\[a0\]\[v1\]\[a1\]concat=n=2:v=1:a=1\[v\]\[a\]$/);
    expect(args.outputOptions).toEqual(expect.arrayContaining(['-map', '[v]', '-map', '[a]', '-c:a', 'aac']));
  });

  it('gives a silent shot silence of its own length when another shot has sound', () => {
    const graph = sequenceArgs([clip(), clip({ hasAudio: false, durationSeconds: 3.25 })]).complexFilter!;
    expect(graph).toContain('anullsrc=channel_layout=stereo:sample_rate=48000,atrim=duration=3.250');
    expect(graph).not.toContain('[1:a:0]');
  });

  it('makes no audio track when no shot has sound', () => {
    const args = sequenceArgs([clip({ hasAudio: false }), clip({ hasAudio: false })]);
    expect(args.complexFilter).toMatch(/\[v0\]\[v1\]concat=n=2:v=1:a=0\[v\]$/);
    expect(args.complexFilter).not.toContain('anullsrc');
    expect(args.outputOptions).toContain('-an');
    expect(args.outputOptions).not.toContain('[a]');
  });

  it('takes the size and rate asked for, rounding odd sizes down to even', () => {
    const graph = sequenceArgs([clip({ width: 641, height: 361 })], { fps: 25 }).complexFilter!;
    expect(graph).toContain('scale=640:360');
    expect(graph).toContain('fps=25:start_time=0');
    expect(sequenceArgs([clip()], { width: 427, height: 240 }).complexFilter).toContain('pad=426:240');
  });

  it('refuses nonsense clearly', () => {
    expect(() => sequenceArgs([])).toThrow(/1 to 100 clips/);
    expect(() => sequenceArgs([clip(), clip({ durationSeconds: 0 })])).toThrow(/clip 2 has no duration/);
    expect(() => sequenceArgs([clip()], { fps: 0 })).toThrow(/fps/);
    expect(() => sequenceArgs([clip()], { width: 1 })).toThrow(/width/);
    expect(() => sequenceArgs([clip()], { crf: 60 })).toThrow(/crf/);
  });

  it('puts the safety options before every input', () => {
    const args = ffmpegArgs(
      {
        op: 'sequence',
        input: '/a/1.mp4',
        moreInputs: ['/a/2.webm'],
        output: '/a/o.mp4',
        ...sequenceArgs([clip(), clip()]),
      },
      '/a/.o.partial.mp4',
    );
    const inputs = args.flatMap((a, i) => (a === '-i' ? [i] : []));
    expect(inputs.map((i) => args[i + 1])).toEqual(['file:/a/1.mp4', 'file:/a/2.webm']);
    for (const i of inputs) expect(args.slice(i - 4, i)).toEqual(expect.arrayContaining(['-format_whitelist']));
  });
});
