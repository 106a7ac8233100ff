import { formatInteger } from '../../../lib/format.ts';
import {
  sessionDay,
  sessionHours,
  totalPriceText,
  type LibraryGroup,
  type LibrarySession,
} from '../../../stores/library/groups.ts';

// The Library's group headers (docs/workflows.md, "The Library"). Plain text rows, not headings:
// they sit among the listbox's options, where only options and groups belong.

/** "3 takes", or "3 inputs" for uploads and extracted frames (they are not takes). */
function takesText(n: number, inputs = false): string {
  return `${formatInteger(n)} ${inputs ? 'input' : 'take'}${n === 1 ? '' : 's'}`;
}

/** A session: the day and the hours it spans, how many takes, what they cost. */
export function SessionHead({ session, now }: { session: LibrarySession; now: number }) {
  const inputs = session.groups.every((g) => g.input);
  return (
    <div className="grid-head grid-session" data-testid="library-session">
      <span className="grid-session-day">{sessionDay(session.oldest, now)}</span>
      <span className="grid-head-meta">
        {sessionHours(session)} · {takesText(session.takes, inputs)} · {totalPriceText(session, inputs)}
      </span>
    </div>
  );
}

/**
 * A prompt's takes in a session, over the first row of its tiles: the prompt (in full on hover),
 * the session's day, how many takes and what they cost.
 */
export function GroupHead({ group, now, style }: { group: LibraryGroup; now: number; style?: React.CSSProperties }) {
  const prompt = group.input ? 'Uploads and extracted frames' : group.prompt || 'No prompt';
  return (
    <div
      className="grid-head grid-group"
      data-testid="library-group"
      title={group.input ? undefined : group.prompt}
      style={style}
    >
      <span className="grid-group-prompt">{group.input ? prompt : `“${prompt}”`}</span>
      <span className="grid-head-meta">
        {sessionDay(group.sessionStart, now)} · {takesText(group.takes, group.input)} ·{' '}
        {totalPriceText(group, group.input)}
      </span>
    </div>
  );
}
