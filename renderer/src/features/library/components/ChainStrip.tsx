import type { ChainShot, LibraryItem } from '../../../../../shared/ipc/index.ts';
import { useLibrary } from '../../../stores/library/index.ts';
import { thumbnailUrl } from '../../../stores/library/selectors.ts';
import { SequenceControls } from './SequenceControls.tsx';
import { useChain } from './useChain.ts';

function shotLabel(shot: ChainShot): string {
  const prompt = shot.item?.item.prompt ?? shot.itemId;
  return `Shot ${shot.position}: ${prompt.slice(0, 60)}${shot.trim ? ` (trimmed ${shot.trim.start}–${shot.trim.end} s)` : ''}`;
}

/**
 * The open item's shot chain as a strip of its shots in order, a link to the shot it continues,
 * and the chain's sequence (preview, export). Nothing for a clip in no chain.
 */
export function ChainStrip({ entry }: { entry: LibraryItem }) {
  const chain = useChain(entry);
  const open = (id: string) => void useLibrary.getState().openById(id);
  const shots = chain?.shots ?? [];
  const self = shots.find((s) => s.itemId === entry.item.id);
  if (!chain?.chainId || !self || (shots.length < 2 && !self.parentId)) return null;
  const parent = self.parentId;
  const parentShot = shots.find((s) => s.itemId === parent);
  return (
    <section className="chain" aria-label="Shot chain">
      <div className="row chain-head">
        <strong className="grow">
          Shot {self.position} of {shots.length}
        </strong>
        {parent && (
          <button type="button" className="variation-link" title={`Open ${parent}`} onClick={() => open(parent)}>
            Continues {parentShot ? `shot ${parentShot.position}` : 'another chain’s shot'}
          </button>
        )}
      </div>
      <ol className="chain-strip">
        {shots.map((shot) => {
          const thumb = shot.item ? thumbnailUrl(shot.item) : null;
          const current = shot.itemId === entry.item.id;
          return (
            <li key={shot.itemId}>
              <button
                type="button"
                className={`chain-shot${current ? ' current' : ''}`}
                aria-current={current ? 'true' : undefined}
                aria-label={shotLabel(shot)}
                title={shotLabel(shot)}
                onClick={() => open(shot.itemId)}
              >
                {thumb ? <img src={thumb} alt="" draggable={false} /> : <span className="chain-thumb-missing" />}
                <span className="chain-pos">{shot.position}</span>
                {shot.trim && <span className="chain-trim">✂</span>}
              </button>
            </li>
          );
        })}
      </ol>
      <SequenceControls chainId={chain.chainId} shots={shots.length} />
    </section>
  );
}
