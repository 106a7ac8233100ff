import { describe, expect, it } from 'vitest';
import type { Generation } from '../../../../shared/api/index.ts';
import { createGenerationProgress } from '../../../../electron/cli/generations.ts';
import type { CliIo } from '../../../../electron/cli/io.ts';

function logIo(): CliIo & { lines: () => string[] } {
  let stderr = '';
  return {
    stdout: () => undefined,
    stderr: (t) => void (stderr += t),
    readStdin: () => Promise.resolve(''),
    env: {},
    interactive: false,
    lines: () => stderr.split('\n').filter(Boolean),
  };
}

const gen = (status: Generation['status'], extra: Partial<Generation> = {}) =>
  ({ id: 'gen_1', status, ...extra }) as Generation;

describe('progress when stderr is not a terminal', () => {
  it('prints each state once, however often the polls repeat it', () => {
    const io = logIo();
    const progress = createGenerationProgress(io, 'Generating video', () => 0);
    progress.update(gen('queued', { queuePosition: 1 }));
    progress.update(gen('queued', { queuePosition: 1 }));
    progress.update(gen('queued'));
    progress.update(gen('queued'));
    progress.update(gen('generating'));
    progress.update(gen('generating'));
    progress.end();
    expect(io.lines()).toEqual([
      'Generating video: Queued · 0 s · queue position 1',
      'Generating video: Queued · 0 s',
      'Generating video: Generating · 0 s',
    ]);
  });
});
