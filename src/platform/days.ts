import { badRequest } from './errors.ts';

/**
 * UTC calendar days as the API carries them (`YYYY-MM-DD`) and as day numbers (days since
 * 1970-01-01), for the reads that take a `from`..`to` range of days (cost, analytics); and UTC
 * months `YYYY-MM`, the buckets of the budgets (cost, triage).
 */

/** Earliest and latest accepted day. */
export const DAY_MIN = '1970-01-01';
export const DAY_MAX = '9999-12-31';

const DAY_MS = 86_400_000;
const DAY_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Pure: a `YYYY-MM-DD` calendar date from DAY_MIN to DAY_MAX → days since 1970-01-01, else null. */
export function dayNumber(text: string): number | null {
  const match = DAY_TEXT.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1970) return null;
  const ms = Date.UTC(year, month - 1, day);
  const back = new Date(ms);
  // Date.UTC rolls 2026-02-30 over to 2 March; a real date comes back as written.
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day) return null;
  return ms / DAY_MS;
}

/** Pure: days since 1970-01-01 → `YYYY-MM-DD`. */
export function dayText(days: number): string {
  return new Date(days * DAY_MS).toISOString().slice(0, 10);
}

/** Pure: the UTC day of an instant, as a day number. */
export function dayOf(at: Date): number {
  return Math.floor(at.getTime() / DAY_MS);
}

/** `YYYY-MM` of an instant, in UTC. */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** Pure: a `YYYY-MM` month → its first instant (`from`) and the next month's (`to`, exclusive), in UTC. */
export function monthRange(month: string): { from: Date; to: Date } {
  const [year, mm] = month.split('-').map(Number) as [number, number];
  return { from: new Date(Date.UTC(year, mm - 1, 1)), to: new Date(Date.UTC(year, mm, 1)) };
}

/** The month after `month`. */
export function nextMonth(month: string): string {
  return monthOf(monthRange(month).to);
}

/** The month before `month`. */
export function previousMonth(month: string): string {
  const { from } = monthRange(month);
  return monthOf(new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() - 1, 1)));
}

/** A day of a query, or 400 `invalid-date`. */
export function checkDay(text: string, field: string): number {
  const days = dayNumber(text);
  if (days === null) throw badRequest('invalid-date', `${field} must be a calendar date YYYY-MM-DD from ${DAY_MIN} to ${DAY_MAX} (got ${JSON.stringify(text.slice(0, 40))}).`, { field });
  return days;
}

/** `from` inclusive, `to` exclusive: at least one day and at most `maxDays`, or 400 `invalid-date` / `invalid-range`. */
export function checkDayRange(from: string, to: string, maxDays: number): { from: number; to: number } {
  const range = { from: checkDay(from, 'query.from'), to: checkDay(to, 'query.to') };
  if (range.from >= range.to) {
    throw badRequest('invalid-range', `to is exclusive and must be after from (got from ${from}, to ${to}); one day is from=D&to=D+1.`, { field: 'query.to' });
  }
  if (range.to - range.from > maxDays) {
    throw badRequest('invalid-range', `from..to covers ${range.to - range.from} days; at most ${maxDays} are read at once.`, { field: 'query.to' });
  }
  return range;
}
