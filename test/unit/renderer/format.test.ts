import { describe, expect, it } from 'vitest';
import {
  formatBytes,
  formatElapsed,
  formatInteger,
  formatPrice,
  formatUnitPrice,
} from '../../../renderer/src/lib/format.ts';

describe('format', () => {
  it('integers: plain below 1,000, grouped by the locale from there', () => {
    expect(formatInteger(0)).toBe('0');
    expect(formatInteger(500)).toBe('500');
    expect(formatInteger(-999)).toBe('-999');
    expect(formatInteger(1000)).toBe((1000).toLocaleString());
    expect(formatInteger(10_000)).toBe((10_000).toLocaleString());
    expect(formatInteger(2.5)).toBe((2.5).toLocaleString());
  });
  it('prices', () => {
    expect(formatPrice(0)).toBe('Free');
    expect(formatPrice(0.004)).toBe('$0.0040');
    expect(formatPrice(0.25)).toBe('$0.250');
    expect(formatPrice(12.5)).toBe('$12.50');
    expect(formatUnitPrice(0.05, 'second')).toBe('$0.050 / s');
    expect(formatUnitPrice(0.02, 'image')).toBe('$0.020 / image');
  });
  it('bytes in decimal units, as the service counts', () => {
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(21_000_000)).toBe('21 MB');
    expect(formatBytes(20_000_000)).toBe('20 MB');
    expect(formatBytes(1_500_000)).toBe('1.5 MB');
  });
  it('elapsed', () => {
    expect(formatElapsed(5)).toBe('0:05');
    expect(formatElapsed(75)).toBe('1:15');
    expect(formatElapsed(3725)).toBe('1:02:05');
  });
});
