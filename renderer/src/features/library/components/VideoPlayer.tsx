import { useEffect, useRef } from 'react';
import { Icon } from '../../../lib/icons.tsx';
import { useLibrary } from '../../../stores/library/index.ts';

/**
 * The detail panel's player, with a sound toggle of its own. Generated clips often have sound
 * (Veo 3, Kling, Seedance); the choice to mute holds for every clip opened in this session, and the
 * player's own mute control and this toggle stay one setting.
 */
export function VideoPlayer({ src, poster }: { src: string; poster: string | undefined }) {
  const muted = useLibrary((s) => s.playerMuted);
  const video = useRef<HTMLVideoElement>(null);
  // Set as a property: React does not keep the `muted` attribute in step after the first render.
  useEffect(() => {
    if (video.current && video.current.muted !== muted) video.current.muted = muted;
  }, [muted]);
  return (
    <div className="player">
      <video
        ref={video}
        src={src}
        poster={poster}
        muted={muted}
        controls
        loop
        playsInline
        aria-label="Player"
        onVolumeChange={(e) => {
          if (e.currentTarget.muted !== useLibrary.getState().playerMuted)
            useLibrary.getState().setPlayerMuted(e.currentTarget.muted);
        }}
      />
      <button
        type="button"
        className="chip player-mute"
        aria-pressed={muted}
        title={muted ? 'Sound is off for every clip until you turn it on' : 'Turn the sound off for every clip'}
        onClick={() => useLibrary.getState().setPlayerMuted(!muted)}
      >
        <Icon name={muted ? 'soundOff' : 'sound'} size={14} /> Mute
      </button>
    </div>
  );
}
