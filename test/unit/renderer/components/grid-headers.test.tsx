import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { GroupHead, SessionHead } from '../../../../renderer/src/features/library/components/GridHeaders.tsx';
import { groupLibrary } from '../../../../renderer/src/stores/library/groups.ts';
import { libraryItem } from '../fixtures.ts';

const NOW = new Date(2026, 2, 2, 15, 0).getTime();
const at = (id: number, minutesAgo: number, over: Partial<ReturnType<typeof libraryItem>['item']>) => {
  const entry = libraryItem(id);
  return { ...entry, item: { ...entry.item, createdAt: new Date(NOW - minutesAgo * 60_000).toISOString(), ...over } };
};

afterEach(cleanup);

describe('the Library’s group headers', () => {
  it('a prompt group: the prompt in full on hover, the day, the count and the total with what had no price', () => {
    const prompt = 'a very long prompt about a fox in the snow '.repeat(4).trim();
    const [session] = groupLibrary([
      at(1, 1, { prompt, price: 0.1 }),
      at(2, 2, { prompt, price: 0.25 }),
      at(3, 3, { prompt }),
    ]);
    render(<GroupHead group={session!.groups[0]!} now={NOW} />);
    const head = screen.getByTestId('library-group');
    expect(head.getAttribute('title')).toBe(prompt);
    expect(head.textContent).toContain('Today · 3 takes · $0.350 + 1 unpriced');
    cleanup();
    render(<SessionHead session={session!} now={NOW} />);
    expect(screen.getByTestId('library-session').textContent).toMatch(/^Today.*· 3 takes · \$0\.350 \+ 1 unpriced$/);
  });
  it('uploads and extracted frames: inputs, not charged, no prompt', () => {
    const upload = { model: 'upload/file', prompt: '', price: undefined };
    const [session] = groupLibrary([at(1, 1, upload), at(2, 2, upload)]);
    render(<GroupHead group={session!.groups[0]!} now={NOW} />);
    expect(screen.getByTestId('library-group').textContent).toBe(
      'Uploads and extracted framesToday · 2 inputs · not charged',
    );
    cleanup();
    render(<SessionHead session={session!} now={NOW} />);
    expect(screen.getByTestId('library-session').textContent).toMatch(/· 2 inputs · not charged$/);
  });
});
