import { useEffect, useId, useRef } from 'react';
import { formatInteger } from '../../../lib/format.ts';
import { useCompose } from '../../../stores/compose/index.ts';
import { useStage } from '../../../stores/stage/index.ts';
import { isPromptOverLimit, promptLength, promptLimit } from '../../../stores/compose/selectors.ts';

export function PromptBox() {
  const id = useId();
  const prompt = useCompose((s) => s.prompt);
  const media = useCompose((s) => s.media);
  const history = useCompose((s) => s.history);
  const setPrompt = useCompose((s) => s.setPrompt);
  const recall = useCompose((s) => s.recallHistory);
  const limit = promptLimit({ media });
  const count = promptLength(prompt);
  const over = isPromptOverLimit({ media, prompt });
  const area = useRef<HTMLTextAreaElement>(null);
  // Extend and "Use as start frame" hand the keyboard to the prompt, for the next shot's words.
  const promptFocus = useStage((s) => s.promptFocus);
  useEffect(() => {
    if (promptFocus > 0) area.current?.focus();
  }, [promptFocus]);
  return (
    <div className={`prompt-box field${over ? ' over' : ''}`}>
      <div className="field-label">
        <label htmlFor={id}>Prompt</label>
        <span className="faint">Alt+↑/↓ recalls earlier prompts</span>
      </div>
      <textarea
        ref={area}
        id={id}
        className="textarea"
        placeholder={
          media === 'video'
            ? 'A slow dolly shot through a neon-lit alley in the rain…'
            : 'A studio portrait of a ceramic fox, soft rim light…'
        }
        value={prompt}
        aria-invalid={over}
        aria-describedby={`${id}-count`}
        onChange={(e) => setPrompt(e.target.value)}
        onKeyDown={(e) => {
          if (e.altKey && (e.key === 'ArrowUp' || e.key === 'ArrowDown')) {
            e.preventDefault();
            recall(e.key === 'ArrowUp' ? -1 : 1);
          }
        }}
      />
      <div className="prompt-meta">
        <span id={`${id}-count`} className={`prompt-count${over ? ' over' : ''}`} aria-live="polite">
          {formatInteger(count)} / {formatInteger(limit)} characters
          {over && ` — ${formatInteger(count - limit)} over the limit`}
        </span>
        <select
          className="select prompt-history"
          aria-label="Prompt history"
          value=""
          disabled={history.length === 0}
          onChange={(e) => e.target.value && setPrompt(e.target.value)}
        >
          <option value="">{history.length === 0 ? 'No history yet' : `History (${history.length})`}</option>
          {history.map((h, i) => (
            <option key={i} value={h}>
              {h.length > 60 ? `${h.slice(0, 60)}…` : h}
            </option>
          ))}
        </select>
      </div>
    </div>
  );
}
