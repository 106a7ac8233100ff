import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { Filmstrip } from '../../../../renderer/src/features/compose/components/Filmstrip.tsx';
import { useStage, type Take } from '../../../../renderer/src/stores/stage/index.ts';
import { installFakeIpc, libraryItem } from '../fixtures.ts';

beforeEach(() => {
  installFakeIpc();
  useStage.getState().reset();
});
afterEach(cleanup);

function take(i: number): Take {
  const entry = libraryItem(i);
  return {
    key: entry.item.id,
    jobId: null,
    itemId: entry.item.id,
    job: null,
    item: entry,
    sourceId: null,
    variations: [],
  };
}

// A long session (docs/benchmarks.md, the filmstrip of 1,000 takes): only the columns near the view
// are in the page, not one column of pictures per take.
describe('the session filmstrip', () => {
  it('mounts the newest takes of a 1,000-take session, not all 1,000', () => {
    const takes = Array.from({ length: 1000 }, (_, i) => take(999 - i));
    render(<Filmstrip takes={takes} />);
    const strip = screen.getByRole('region', { name: 'Session takes' });
    const columns = strip.querySelectorAll('.film-column');
    expect(columns.length).toBeGreaterThan(0);
    expect(columns.length).toBeLessThan(50);
    // The newest is first, with its show-on-stage button and its compare tick.
    expect(screen.getByRole('button', { name: `Show on stage: ${takes[0]!.item!.item.prompt}` })).toBeTruthy();
    expect(screen.getByRole('checkbox', { name: `Compare ${takes[0]!.item!.item.prompt}` })).toBeTruthy();
  });

  it('a short session shows every take', () => {
    const takes = [take(2), take(1), take(0)];
    render(<Filmstrip takes={takes} />);
    for (const t of takes) expect(screen.getByRole('list', { name: `Takes of ${t.item!.item.prompt}` })).toBeTruthy();
  });
});
