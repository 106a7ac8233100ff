import { parseModelId } from '../shared/api/model-id.ts';
import { reportFigure } from './support/report.ts';

// The parser runs on every request and every list filter: compare it with a bare regular
// expression that accepts the same shape without the validation and messages.
export default async function (): Promise<void> {
  const ids = ['clipdesk/motion', 'clipdesk/motion:1.1', 'ClipDesk/Drift:2', ' a/b ', 'bad id', 'x/y:z:w'];
  const n = 200_000;
  const bare = /^\s*([a-z0-9][a-z0-9._-]*)\/([a-z0-9][a-z0-9._-]*)(?::([a-z0-9][a-z0-9._-]*))?\s*$/i;

  const measure = (fn: (s: string) => unknown): number => {
    const start = performance.now();
    for (let i = 0; i < n; i++) fn(ids[i % ids.length]!);
    return performance.now() - start;
  };
  measure(parseModelId); // warm-up
  measure((s) => bare.exec(s));
  const ours = measure(parseModelId);
  const theirs = measure((s) => bare.exec(s));
  reportFigure('model-id-parse', (n / ours) * 1000, 'ids/s', theirs / ours, 'bare regex');
  await Promise.resolve();
}
