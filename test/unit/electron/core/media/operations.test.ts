import { describe, expect, it } from 'vitest';
import { classifyFfmpegFailure } from '../../../../../electron/core/media/index.ts';
import {
  contactSheetArgs,
  exportGifArgs,
  thumbnailArgs,
  trimArgs,
} from '../../../../../electron/core/media/operations.ts';
import { ffmpegArgs } from '../../../../../electron/core/media/run.ts';
import { ffprobeArgs, parseProbeOutput } from '../../../../../electron/core/media/probe.ts';

describe('operation arguments', () => {
  it('seeks on the input for a thumbnail', () => {
    const args = thumbnailArgs({ atSeconds: 1.5, width: 200 });
    expect(args.inputOptions).toEqual(['-loglevel', 'error', '-ss', '1.500']);
    expect(args.outputOptions).toContain('scale=200:-2');
  });

  it('always limits inputs to local files of video/image formats, one array element per argument', () => {
    const args = ffmpegArgs(
      { op: 't', input: '/tmp/-weird name.mp4', output: '/tmp/o.png', ...thumbnailArgs() },
      '/tmp/.o.partial.png',
    );
    const i = args.indexOf('-i');
    expect(args.slice(0, i)).toContain('-protocol_whitelist');
    expect(args[args.indexOf('-protocol_whitelist') + 1]).toBe('file,pipe');
    expect(args[args.indexOf('-format_whitelist') + 1]).not.toMatch(/tty|lavfi|concat/);
    expect(args[i + 1]).toBe('file:/tmp/-weird name.mp4');
    expect(ffprobeArgs('/x/y.mp4')).toEqual(
      expect.arrayContaining(['-protocol_whitelist', 'file,pipe', 'file:/x/y.mp4']),
    );
  });

  it('builds a palette GIF in one filter graph', () => {
    expect(exportGifArgs({ fps: 10, width: 320 }).complexFilter).toMatch(/fps=10,scale=320:-1.*palettegen.*paletteuse/);
  });

  it('lays out a contact sheet grid from the frame count', () => {
    expect(contactSheetArgs(10, { frames: 6 }).outputOptions.join(' ')).toMatch(
      /fps=1\/1\.666667:start_time=0\.833333,scale=240:-2,tile=3x2/,
    );
    expect(contactSheetArgs(10, { frames: 4, columns: 4 }).outputOptions.join(' ')).toContain('tile=4x1');
  });

  it('rejects nonsense arguments with clear errors', () => {
    expect(() => trimArgs({ start: 2, end: 1 })).toThrow(/end must be after start/);
    expect(() => thumbnailArgs({ atSeconds: -1 })).toThrow(/≥ 0/);
    expect(() => contactSheetArgs(0, { frames: 4 })).toThrow(/no duration/);
    expect(() => contactSheetArgs(1, { frames: 0 })).toThrow(/1 to 100/);
  });

  it('trims fast by stream copy, accurately by re-encoding', () => {
    expect(trimArgs({ start: 1, end: 3, mode: 'fast' }).outputOptions).toEqual(
      expect.arrayContaining(['-c', 'copy', '-t', '2.000']),
    );
    expect(trimArgs({ start: 1, end: 3 }).outputOptions).toEqual(expect.arrayContaining(['libx264']));
  });
});

describe('error classification', () => {
  it('names the file and the cause', () => {
    expect(
      classifyFfmpegFailure(
        'thumbnail',
        'a.mp4',
        '[mov,mp4 @ 0x1] moov atom not found\nfile:/a.mp4: Invalid data found when processing input',
      ),
    ).toMatchObject({
      code: 'input_truncated',
      message: 'thumbnail: a.mp4 is truncated or corrupt (not a complete video file)',
    });
    expect(
      classifyFfmpegFailure(
        'probe',
        'n.txt',
        "[tty @ 0x1] Format not on whitelist 'mov'\nfile:/n.txt: Invalid argument",
      ).code,
    ).toBe('input_invalid');
    expect(classifyFfmpegFailure('export', 'a.m4a', "Stream map '0:v:0' matches no streams.").code).toBe(
      'input_no_video',
    );
    expect(classifyFfmpegFailure('export', 'a.mp4', 'Something odd happened').message).toBe(
      'export failed on a.mp4: Something odd happened',
    );
  });
});

describe('probe output', () => {
  it('reads streams and treats pipe image formats as stills', () => {
    const info = parseProbeOutput(
      JSON.stringify({
        streams: [
          {
            codec_type: 'video',
            codec_name: 'png',
            width: 10,
            height: 20,
            avg_frame_rate: '0/0',
            r_frame_rate: '25/1',
          },
        ],
        format: { format_name: 'png_pipe', size: '123' },
      }),
    );
    expect(info).toMatchObject({
      isImage: true,
      durationSeconds: null,
      bytes: 123,
      audio: null,
      video: { fps: 25, width: 10 },
    });
  });
});
