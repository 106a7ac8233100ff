import { describe, expect, it } from 'vitest';
import { ffmpegMajor } from '../../../../electron/cli/doctor.ts';

describe('ffmpegMajor', () => {
  it('reads a release number, or the release a git build’s libavutil ships with', () => {
    expect(ffmpegMajor('ffmpeg version 6.1.1-3ubuntu5 Copyright (c) 2000-2023')).toBe(6);
    expect(ffmpegMajor('ffprobe version n7.0.2 Copyright')).toBe(7);
    const gitBuild = 'ffmpeg version N-47683-g0e8eb07980-static https://johnvansickle.com/ffmpeg/\n';
    expect(ffmpegMajor(`${gitBuild}libavutil      56. 24.101 / 56. 24.101\n`)).toBe(4);
    expect(ffmpegMajor(`${gitBuild}libavutil      58. 14.100 / 58. 14.100\n`)).toBe(6);
    expect(ffmpegMajor(gitBuild)).toBeNull();
  });
});
