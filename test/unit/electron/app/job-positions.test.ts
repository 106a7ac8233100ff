// A queued job's place in line, as jobs.list and job events show it ("3rd in line").
import { describe, expect, it } from 'vitest';
import { NO_POSITIONS, queuePositions, toJob } from '../../../../electron/app/mappers.ts';
import type { Job as CoreJob } from '../../../../electron/core/jobs/index.ts';
import { coreJob } from '../../../support/core-job.ts';

const job = (id: string, state: CoreJob['state'], position: number): CoreJob =>
  coreJob(id, 0, { kind: 'image', state, request: { model: 'clipdesk/still', prompt: id }, position });

describe('queue positions', () => {
  // Listed in another order than their places, with running and finished jobs among them.
  const all = [
    job('c', 'queued', 7),
    job('run', 'generating', 1),
    job('a', 'queued', 3),
    job('done', 'done', 0),
    job('b', 'queued', 5),
  ];

  it('count only queued jobs, in the order of their places', () => {
    const positions = queuePositions(all);
    expect(all.map((j) => toJob(j, positions, 0).position)).toEqual([2, null, 0, null, 1]);
  });

  it('a job that is not queued has no place, whatever positions it is given', () => {
    expect(toJob(all[1]!, queuePositions(all), 0).position).toBeNull();
    expect(toJob(all[1]!, NO_POSITIONS, 0).position).toBeNull();
  });
});
