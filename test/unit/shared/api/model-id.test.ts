import { describe, expect, it } from 'vitest';
import { formatModelId, parseModelId } from '../../../../shared/api/model-id.ts';

describe('parseModelId', () => {
  it.each([
    ['clipdesk/motion', { base: 'clipdesk', model: 'motion', version: null }],
    ['clipdesk/motion:1.1', { base: 'clipdesk', model: 'motion', version: '1.1' }],
    ['  clipdesk/motion:1.0  ', { base: 'clipdesk', model: 'motion', version: '1.0' }],
    ['ClipDesk/Motion:V2', { base: 'clipdesk', model: 'motion', version: 'v2' }],
    ['a/b-c_d.e:2025-01-01', { base: 'a', model: 'b-c_d.e', version: '2025-01-01' }],
  ])('accepts %j', (input, id) => {
    expect(parseModelId(input)).toEqual({ ok: true, id });
  });

  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['motion', /form/],
    ['/motion', /base/],
    ['clipdesk/', /model name/],
    ['clipdesk/motion:', /version/],
    ['clipdesk/motion:1:2', /at most one ":"/],
    ['clipdesk/motion::1', /at most one ":"/],
    ['clip desk/motion', /whitespace/],
    ['clipdesk/mo\ttion', /whitespace/],
    ['a/b/c', /form/],
    ['../etc/passwd', /form/],
    ['clipdesk/%2e%2e', /model name/],
    ['clipdesk/-motion', /model name/],
    ['x'.repeat(201) + '/m', /longer than/],
  ])('rejects %j', (input, message) => {
    const result = parseModelId(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(message);
  });

  it('round-trips through formatModelId', () => {
    for (const text of ['clipdesk/motion', 'clipdesk/motion:1.1']) {
      const result = parseModelId(text);
      expect(result.ok && formatModelId(result.id)).toBe(text);
    }
  });
});
