import { describe, expect, it } from 'vitest';
import { toIpcError } from '../../../../electron/app/errors.ts';
import { ServiceError } from '../../../../electron/core/api/index.ts';
import { JobConflictError } from '../../../../electron/core/jobs/index.ts';
import { MediaToolError } from '../../../../electron/core/media/errors.ts';
import { ProfileError } from '../../../../electron/core/profiles/profiles.ts';

describe('toIpcError: one vocabulary from the core to the renderer', () => {
  it("passes a service failure's code on unchanged, with its status and wait", () => {
    const e = toIpcError(new ServiceError('authentication_error', 'Invalid API key', { status: 401 }));
    expect([e.code, e.message, e.data]).toEqual(['authentication_error', 'Invalid API key', { status: 401 }]);
    expect(toIpcError(new ServiceError('invalid_response', 'not JSON')).code).toBe('invalid_response');
  });

  it("passes the core's own failures on with their shell codes", () => {
    expect(toIpcError(new ProfileError('not_found', 'No profile with id x')).code).toBe('not_found');
    expect(toIpcError(new JobConflictError('Only failed jobs can be retried')).code).toBe('conflict');
    expect(toIpcError(new MediaToolError('input_missing', 'a.mp4 does not exist')).code).toBe('not_found');
    expect(toIpcError(new MediaToolError('ffmpeg_failed', 'ffmpeg failed')).code).toBe('internal_error');
  });

  it('knows no code by its shape alone: a look-alike object is an internal error', () => {
    const lookAlike = Object.assign(new Error('Rate limit exceeded'), { code: 'rate_limit_exceeded', status: 429 });
    expect(toIpcError(lookAlike).code).toBe('internal_error');
    expect(toIpcError(Object.assign(new Error('gone'), { code: 'ENOENT' })).code).toBe('not_found');
  });
});
