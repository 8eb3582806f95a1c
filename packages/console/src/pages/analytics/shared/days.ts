/**
 * Day ranges for the daily answers (analytics, cohorts, cost): `[from, to)` in UTC days, `to`
 * the day after today so today's facts are in. Kept in the address as `?days=30`.
 */
export const DAY_RANGES = [7, 30, 90, 365] as const;
export type DayRange = (typeof DAY_RANGES)[number];

export function dayRangeOf(value: string, fallback: DayRange = 30): DayRange {
  const n = Number(value);
  return (DAY_RANGES as readonly number[]).includes(n) ? (n as DayRange) : fallback;
}

const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The last `days` UTC days up to and including today. */
export function dayBounds(days: number, now = Date.now()): { from: string; to: string } {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return { from: isoDay(today - (days - 1) * DAY_MS), to: isoDay(today + DAY_MS) };
}

/** A UTC day (YYYY-MM-DD) as the epoch ms of its start, for the charts' time axis. */
export const dayStart = (day: string): number => Date.parse(`${day}T00:00:00Z`);
