import { createMediaTools, type MediaTools } from '../../core/media/index.ts';

/** ffmpeg follows the setting; a change rebuilds the tools (running work finishes on the old ones). */
export function mediaToolsFollowing(
  binaries: { ffmpegPath: string; ffprobePath: string } | undefined,
  initialPath: string | null,
): { current(): MediaTools; follow(ffmpegPath: string | null): void; dispose(): Promise<void> } {
  const toolsFor = (p: string | null): MediaTools =>
    createMediaTools({ binaries: { ...binaries, ...(p ? { ffmpegPath: p } : {}) } });
  let ffmpegPath = initialPath;
  let media = toolsFor(ffmpegPath);
  const retired: MediaTools[] = [];
  return {
    current: () => media,
    follow(next) {
      if (next === ffmpegPath) return;
      ffmpegPath = next;
      retired.push(media);
      media = toolsFor(ffmpegPath);
    },
    async dispose() {
      await Promise.all([media, ...retired].map((m) => m.dispose()));
    },
  };
}
