// The renderer benchmark's filmstrip (bench/renderer-budgets.ts): the canvas's real Filmstrip and
// styles with a session of `?takes=N` finished takes, each with a thumbnail of its own URL, so that
// scrolling it lays out, paints and decodes as the app's does. A session that long cannot be made
// through the app in a benchmark's time (each take is a render), so its takes are made here.
import '../../../renderer/src/styles/tokens.css';
import '../../../renderer/src/styles/base.css';
import '../../../renderer/src/styles/primitives.css';
import '../../../renderer/src/features/compose/canvas.css';
import '../../../renderer/src/features/compose/canvas-windows.css';
import { createRoot } from 'react-dom/client';
import type { LibraryItem } from '../../../shared/ipc/index.ts';
import { Filmstrip } from '../../../renderer/src/features/compose/components/Filmstrip.tsx';
import type { Take } from '../../../renderer/src/stores/stage/index.ts';

function take(i: number): Take {
  const id = `take-${i}`;
  const entry = {
    item: {
      id,
      url: `./take.mp4?${i}`,
      thumbnailUrl: `./thumb.png?${i}`,
      mime: 'video/mp4',
      media: 'video',
      prompt: `Take ${i}: a paper lantern drifting over a night lake`,
      model: 'clipdesk/motion',
      size: '720p',
      duration: 4,
      width: 1280,
      height: 720,
      createdAt: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
    },
    favourite: false,
    collectionIds: [],
    retentionDeadline: null,
    lost: false,
    localPath: null,
    localUrl: null,
  } as unknown as LibraryItem;
  return { key: id, jobId: null, itemId: id, job: null, item: entry, sourceId: null, variations: [] };
}

const count = Number(new URLSearchParams(location.search).get('takes') ?? '1000');
const takes = Array.from({ length: count }, (_, i) => take(count - 1 - i));
createRoot(document.getElementById('root')!).render(
  <div className="canvas-screen screen">
    <div className="canvas-view">
      <Filmstrip takes={takes} />
    </div>
  </div>,
);
