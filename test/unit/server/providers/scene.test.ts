import { describe, expect, it } from 'vitest';
import { buildScene, styleFilters } from '../../../../server/providers/scene.ts';
import type { SceneSpec } from '../../../../server/providers/scene.ts';

const base: SceneSpec = {
  model: 'clipdesk/motion:1.1',
  prompt: 'a red fox',
  seed: 42,
  width: 640,
  height: 360,
  fps: 24,
  durationSeconds: 2,
};

describe('buildScene', () => {
  it('gives identical arguments for identical inputs', () => {
    expect(buildScene(base)).toEqual(buildScene({ ...base }));
  });

  it('changes with the prompt, the seed, the style and the model version', () => {
    const a = buildScene(base).filter;
    expect(buildScene({ ...base, prompt: 'a blue fox' }).filter).not.toBe(a);
    expect(buildScene({ ...base, seed: 43 }).filter).not.toBe(a);
    expect(buildScene({ ...base, model: 'clipdesk/motion:1.0' }).filter).not.toBe(a);
    const drift = { ...base, model: 'clipdesk/drift:1.0' };
    expect(buildScene({ ...drift, style: 'noir' }).filter).not.toBe(buildScene(drift).filter);
  });

  it('writes duration × fps frames at the requested size', () => {
    const s = buildScene({ ...base, durationSeconds: 3, fps: 30 });
    expect(s.frames).toBe(90);
    expect(s.filter).toContain('scale=640:360');
    expect(buildScene({ ...base, durationSeconds: 0 }).frames).toBe(1);
  });

  it('picks a variety of patterns across prompts', () => {
    const patterns = new Set(
      Array.from({ length: 40 }, (_, i) => buildScene({ ...base, prompt: `scene ${i}` }).pattern),
    );
    expect(patterns.size).toBeGreaterThanOrEqual(3);
  });

  it('animates a start image instead of a pattern', () => {
    const s = buildScene({ ...base, startImagePath: '/tmp/start.png' });
    expect(s.pattern).toBe('image');
    expect(s.inputs.slice(0, 2)).toEqual(['-i', '/tmp/start.png']);
    expect(s.filter).toContain('zoompan=');
  });

  it('never uses shared geq variables (slice threads would make frames racy) or fonts', () => {
    for (let i = 0; i < 20; i++) {
      const f = buildScene({ ...base, prompt: `p${i}` }).filter;
      expect(f).not.toMatch(/\bst\(|\bld\(|drawtext/);
    }
  });
});

describe('styleFilters', () => {
  it('gives each style a look and leaves unknown ones alone', () => {
    for (const s of ['noir', 'neon', 'pastel', 'vivid']) expect(styleFilters(s).length).toBeGreaterThan(0);
    expect(styleFilters('noir')).toContain('hue=s=0');
    expect(styleFilters(undefined)).toEqual([]);
  });
});
