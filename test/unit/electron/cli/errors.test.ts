import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../../electron/core/api/index.ts';
import { describeFailure, EXIT } from '../../../../electron/cli/errors.ts';

describe('describeFailure', () => {
  it("says a 429's wait once: the service's words are kept, not repeated", () => {
    const error = new ServiceError(
      'rate_limit_exceeded',
      'Rate limit of 10 requests per minute reached. Retry after 52 seconds.',
      {
        status: 429,
        retryAfter: 52,
      },
    );
    expect(describeFailure(error)).toEqual({
      code: EXIT.rateLimited,
      line: 'Rate limit of 10 requests per minute reached. Retry after 52 seconds.',
    });
  });

  it('adds the wait when the message does not say it', () => {
    const error = new ServiceError('rate_limit_exceeded', 'Too many requests', { status: 429, retryAfter: 1 });
    expect(describeFailure(error).line).toBe('Too many requests. Retry after 1 second.');
  });
});
