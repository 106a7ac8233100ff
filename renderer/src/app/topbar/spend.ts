import type { Spend } from '../../../../shared/ipc/index.ts';
import { formatPrice } from '../../lib/format.ts';

/** The share of a cap from which the meter turns amber: a job or two more may pass it. */
export const NEAR_CAP = 0.8;

export type MeterTone = 'ok' | 'near' | 'over';

export interface SpendMeter {
  /** What the bar shows: "Today $1.38 / $5 cap". */
  text: string;
  /** The longer account for the tooltip and the accessible name, with the month. */
  detail: string;
  tone: MeterTone;
}

/** Money on the meter: "$0" rather than the price's "Free", whole caps without cents. */
export function meterUsd(usd: number): string {
  if (usd <= 0) return '$0';
  if (Number.isInteger(usd)) return `$${usd}`;
  return formatPrice(usd);
}

function toneOf(spent: number, cap: number | null): MeterTone {
  if (cap === null) return 'ok';
  if (spent >= cap) return 'over';
  return spent >= cap * NEAR_CAP ? 'near' : 'ok';
}

const WORSE: Readonly<Record<MeterTone, number>> = { ok: 0, near: 1, over: 2 };

/**
 * The top bar's spend meter (docs/workflows.md, "The ledger, reconciliation and budgets"): today's
 * charges against the daily cap, amber from 80 % of either cap, red at a cap. Pure.
 */
export function spendMeter(spend: Spend, budget: { daily: number | null; monthly: number | null } | null): SpendMeter {
  const daily = budget?.daily ?? null;
  const monthly = budget?.monthly ?? null;
  const dayTone = toneOf(spend.today, daily);
  const monthTone = toneOf(spend.month, monthly);
  const tone = WORSE[monthTone] > WORSE[dayTone] ? monthTone : dayTone;
  const text = `Today ${meterUsd(spend.today)}${daily !== null ? ` / ${meterUsd(daily)} cap` : ''}`;
  const month = `This month ${meterUsd(spend.month)}${monthly !== null ? ` of ${meterUsd(monthly)} cap` : ''}`;
  const warn = tone === 'over' ? ' · a cap is reached: new jobs wait' : tone === 'near' ? ' · close to a cap' : '';
  return {
    text,
    detail: `Spent today ${meterUsd(spend.today)}${daily !== null ? ` of ${meterUsd(daily)} cap` : ''} · ${month}${warn}`,
    tone,
  };
}
