import { describe, expect, it } from 'vitest';
import { meterUsd, spendMeter } from '../../../renderer/src/app/topbar/spend.ts';

const spend = (today: number, month = today) => ({ day: '2026-12-06', today, month });

describe('the top bar spend meter', () => {
  it('reads "Today $1.38 / $5 cap" against a daily cap', () => {
    expect(spendMeter(spend(1.38), { daily: 5, monthly: null })).toMatchObject({
      text: 'Today $1.38 / $5 cap',
      tone: 'ok',
    });
  });
  it('shows today alone without a cap, and $0 rather than "Free"', () => {
    expect(spendMeter(spend(0), null).text).toBe('Today $0');
    expect(spendMeter(spend(0.5), { daily: null, monthly: null })).toMatchObject({ text: 'Today $0.500', tone: 'ok' });
  });
  it('turns amber from 80 % of the daily cap, red at the cap', () => {
    expect(spendMeter(spend(3.99), { daily: 5, monthly: null }).tone).toBe('ok');
    expect(spendMeter(spend(4), { daily: 5, monthly: null }).tone).toBe('near');
    expect(spendMeter(spend(5), { daily: 5, monthly: null }).tone).toBe('over');
  });
  it('turns amber near the monthly cap too, and says so in its detail', () => {
    const m = spendMeter(spend(0.2, 45), { daily: 5, monthly: 50 });
    expect(m.tone).toBe('near');
    expect(m.detail).toBe('Spent today $0.200 of $5 cap · This month $45 of $50 cap · close to a cap');
  });
  it('writes whole caps without cents', () => {
    expect(meterUsd(5)).toBe('$5');
    expect(meterUsd(12.5)).toBe('$12.50');
  });
});
