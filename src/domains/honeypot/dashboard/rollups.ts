/**
 * The windows of the honeypot rollups (docs/honeypot/dashboard.md, "Rollups"). Pure: no I/O, no
 * clock. What each rollup counts is defined once, in SQL (repository.ts): the applier
 * of pending events and the rebuild share those statements, and dashboard.test.ts checks both
 * against the events table.
 */

import { EVENT_TS_MAX_FUTURE_MS } from '../../../platform/event-time.ts';

export const HOUR_MS = 3_600_000;

/** The dashboard windows and how many hour buckets each spans (the current hour included). */
export const WINDOWS = ['24h', '7d', '30d'] as const;
export type Window = (typeof WINDOWS)[number];
export const WINDOW_HOURS: Record<Window, number> = { '24h': 24, '7d': 7 * 24, '30d': 30 * 24 };

/** Start of the oldest hour bucket of each window. */
export type WindowStarts = Record<Window, Date>;

/** How far ahead of its receive time an event's `ts` may be (spec D3). */
export const MAX_TS_AHEAD_MS = EVENT_TS_MAX_FUTURE_MS;

/** Stand-ins for "none" in rollup keys (primary-key columns cannot be null). */
export const NO_ASN = -1;
export const NO_JA4 = '';

export function hourStart(at: Date): Date {
  return new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
}

/** The first hour bucket of `window` at `now`: the current hour and the N-1 before it. */
export function windowStart(window: Window, now: Date): Date {
  return new Date(hourStart(now).getTime() - (WINDOW_HOURS[window] - 1) * HOUR_MS);
}

export function windowStarts(now: Date): WindowStarts {
  return { '24h': windowStart('24h', now), '7d': windowStart('7d', now), '30d': windowStart('30d', now) };
}
