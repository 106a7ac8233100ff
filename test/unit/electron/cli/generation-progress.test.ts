import { describe, expect, it } from 'vitest';
import type { Generation } from '../../../../shared/api/index.ts';
import { createGenerationProgress } from '../../../../electron/cli/generations.ts';
import { createProgress } from '../../../../electron/cli/io.ts';
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

describe('every wait is said on stderr, with what it waits for and how long', () => {
  it('a request tried again after a failure, and a 429', () => {
    const io = logIo();
    const progress = createGenerationProgress(io, 'Generating video', () => 0);
    progress.wait({ reason: 'retry', ms: 1_500, what: 'GET /generations/gen_1', message: 'busy' });
    progress.wait({ reason: 'rate_limit', ms: 7_000, what: 'GET /generations/gen_1', message: 'Too many' });
    progress.end();
    expect(io.lines()).toEqual([
      'Generating video: failed (busy), trying again; waiting 2 s before GET /generations/gen_1',
      'Generating video: rate limited (429: Too many); waiting 7 s before GET /generations/gen_1',
    ]);
  });

  it('a broken upload or download tried again', () => {
    const io = logIo();
    const bar = createProgress(io, 'Uploading a.png');
    bar.wait({ ms: 250, what: 'the upload of a.png', message: 'socket hang up' });
    bar.end();
    expect(io.lines()).toEqual([
      'Uploading a.png: failed (socket hang up), trying again; waiting 1 s before the upload of a.png',
    ]);
  });
});
