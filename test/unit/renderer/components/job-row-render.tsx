import { render, screen } from '@testing-library/react';
import type { Job } from '../../../../shared/ipc/index.ts';
import { JobRow } from '../../../../renderer/src/features/queue/components/JobRow.tsx';

/** The clock the queue's rows are rendered at, unless a test gives its own. */
export const ROW_NOW = Date.parse('2026-01-01T00:01:00.000Z');

/** One queue row, as the Queue renders it (in its list), and its list item, found by the job's prompt. */
export function renderJobRow(
  j: Job,
  { index = null, queuedCount = 0, now = ROW_NOW }: { index?: number | null; queuedCount?: number; now?: number } = {},
): HTMLElement {
  render(
    <ul>
      <JobRow job={j} index={index} queuedCount={queuedCount} now={now} />
    </ul>,
  );
  return screen.getByRole('listitem', { name: `Job: ${j.request.prompt}` });
}
