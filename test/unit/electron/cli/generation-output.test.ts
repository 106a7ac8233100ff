// What `clipdesk generations get|wait|cancel` print: on the embedded engine, never a URL of a port
// that closes when the command exits (docs/cli.md).
import { describe, expect, it } from 'vitest';
import { describeGeneration, portableGeneration } from '../../../../electron/cli/generations.ts';
import type { Generation } from '../../../../shared/api/index.ts';

const done = {
  id: 'gen_1',
  status: 'succeeded',
  operation: 'videos.generations',
  createdAt: '2026-12-06T10:00:00Z',
  data: [
    { id: 'med_1', url: 'http://127.0.0.1:41234/v1/files/med_1.mp4?sig=x', thumbnailUrl: 'http://127.0.0.1:41234/t' },
  ],
} as unknown as Generation;

describe('generations wait/get output', () => {
  it('on the embedded engine: the item as clipdesk-media:ID, no loopback address', () => {
    const text = describeGeneration(done, true);
    expect(text).toBe('gen_1 succeeded\nmed_1 clipdesk-media:med_1\n');
    expect(JSON.stringify(portableGeneration(done, true))).not.toMatch(/127\.0\.0\.1/);
  });

  it("on a remote service: the service's URL, which outlives the command", () => {
    expect(describeGeneration(done, false)).toBe(
      'gen_1 succeeded\nmed_1 http://127.0.0.1:41234/v1/files/med_1.mp4?sig=x\n',
    );
    expect(portableGeneration(done, false)).toEqual(done);
  });
});
