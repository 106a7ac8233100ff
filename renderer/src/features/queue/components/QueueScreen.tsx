import { useEffect } from 'react';
import { useShell } from '../../../lib/shell/index.ts';
import { useNow } from '../../../lib/useNow.ts';
import { useModels } from '../../../stores/models/index.ts';
import { useQueue } from '../store/index.ts';
import { finishedJobs, queuedJobs, runningCount, runningJobs, slotCardText } from '../store/selectors.ts';
import { JobRow } from './JobRow.tsx';
import { useShallow } from 'zustand/react/shallow';
import '../queue.css';

export function QueueScreen() {
  const status = useQueue((s) => s.status);
  const error = useQueue((s) => s.error);
  const stats = useQueue((s) => s.stats);
  const statsAt = useQueue((s) => s.statsAt);
  const queued = useQueue(useShallow(queuedJobs));
  const running = useQueue(useShallow(runningJobs));
  const finished = useQueue(useShallow(finishedJobs));
  // From the jobs themselves, not the stats: a stats answer that arrives after newer job events
  // (resume's reply racing the events) cannot make it say "Running 0" while jobs generate.
  const runningNow = useQueue(runningCount);
  const go = useShell((s) => s.go);
  const now = useNow(1000, running.length + queued.length > 0 || (stats?.nextSlotInMs ?? 0) > 0);

  useEffect(() => {
    void useQueue.getState().load();
    // Rows name models and providers as the catalog does.
    if (useModels.getState().status === 'idle') void useModels.getState().load();
  }, []);

  const paused = stats?.paused ?? false;
  const empty = queued.length + running.length + finished.length === 0;

  return (
    <div className="screen">
      <header className="screen-head">
        <h1>Queue</h1>
        {paused && <span className="badge badge-warning">Paused</span>}
        <span className="spacer" />
        {paused ? (
          <button type="button" className="btn btn-primary" onClick={() => void useQueue.getState().resume()}>
            Resume queue
          </button>
        ) : (
          <button type="button" className="btn" onClick={() => void useQueue.getState().pause()}>
            Pause queue
          </button>
        )}
      </header>
      <div className="stat-row" aria-label="Queue status">
        <div className="stat">
          <div className="label">Running</div>
          <div className="value">
            {status === 'ready' ? `${runningNow}` : '—'}
            <span className="faint" style={{ fontSize: 13 }}>
              {stats ? ` / ${stats.limit.video} video · ${stats.limit.image} image` : ''}
            </span>
          </div>
        </div>
        <div className="stat">
          <div className="label">Waiting</div>
          <div className="value">{queued.length}</div>
        </div>
        <div className="stat">
          <div className="label">Rate limit</div>
          <div className="value" role="status" aria-label="Rate limit status">
            {slotCardText(stats, statsAt === null ? 0 : now - statsAt)}
          </div>
        </div>
      </div>
      {status === 'loading' && (
        <div role="status" aria-label="Loading the queue" className="job-list">
          {[0, 1, 2].map((i) => (
            <div key={i} className="skeleton" style={{ height: 72 }} />
          ))}
        </div>
      )}
      {status === 'error' && (
        <div className="notice notice-error" role="alert">
          <span className="grow">Could not load the queue: {error}</span>
          <button type="button" className="btn btn-small" onClick={() => void useQueue.getState().load()}>
            Retry
          </button>
        </div>
      )}
      {status === 'ready' && empty && (
        <div className="empty">
          <h2>Nothing in the queue</h2>
          <p>Jobs you start in Compose wait here for a free slot, then run, download and land in the Library.</p>
          <button type="button" className="btn btn-primary" onClick={() => go('compose')}>
            Compose something
          </button>
        </div>
      )}
      {running.length > 0 && (
        <section aria-label="Running">
          <h3 style={{ marginBottom: 8 }}>Running</h3>
          <ul className="job-list">
            {running.map((j) => (
              <JobRow key={j.id} job={j} index={null} queuedCount={queued.length} now={now} />
            ))}
          </ul>
        </section>
      )}
      {queued.length > 0 && (
        <section aria-label="Waiting">
          <h3 style={{ marginBottom: 8 }}>Waiting</h3>
          <ul className="job-list">
            {queued.map((j, i) => (
              <JobRow key={j.id} job={j} index={i} queuedCount={queued.length} now={now} />
            ))}
          </ul>
        </section>
      )}
      {finished.length > 0 && (
        <section aria-label="Finished">
          <h3 style={{ marginBottom: 8 }}>Finished</h3>
          <ul className="job-list">
            {finished.map((j) => (
              <JobRow key={j.id} job={j} index={null} queuedCount={queued.length} now={now} />
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}
