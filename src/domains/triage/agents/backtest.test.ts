import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backtestCountRule, EARLY_WARNING_HORIZON_MS, replayFirings } from './backtest.ts';
import type { ResolvedIncident } from './types.ts';

const FROM = new Date('2024-01-01T00:00:00.000Z');
const H = 3_600_000;
const at = (hours: number) => new Date(FROM.getTime() + hours * H).toISOString();
const rule = (count: number, windowMinutes = 60, extra: Record<string, unknown> = {}) => ({ kind: 'empire_count_gte', count, windowMinutes, ...extra });
const incident = (id: string, openedH: number, resolvedH: number, toolset = 'web-a'): ResolvedIncident => ({ id, toolset, openedAt: at(openedH), resolvedAt: at(resolvedH), severity: 'minor' });

/** 48 hours of web-a: quiet except hours 5, 6 (10 each), 20 (30), 30 (5) and 40 (12). */
const hours = Array.from({ length: 48 }, () => 0);
hours[5] = 10;
hours[6] = 10;
hours[20] = 30;
hours[30] = 5;
hours[40] = 12;
const history = { toolset: 'web-a', hours };
const incidentA = incident('inc-a', 22, 23);

describe('backtestCountRule on a hand-computed history', () => {
  it('counts TP, FP, caught and lead time of a one-hour rule', () => {
    // Fires at the end of hours 5, 6, 20, 40 (06:00, 07:00, 21:00, next day 17:00). inc-a opened
    // 22:00, resolved 23:00: the first three fall in [opened − 24 h, resolved]; 17:00 the next day
    // is after it. Lead time: 22:00 − 06:00 = 16 h.
    expect(backtestCountRule(rule(10), history, FROM, [incidentA], 2)).toEqual({
      method: 'hourly-count',
      lookbackDays: 2,
      TP: 3,
      FP: 1,
      meanLeadTimeSec: 16 * 3600,
      incidents: 1,
      caught: 1,
      firings: 4,
    });
  });

  it('treats a window under an hour as one clock hour', () => {
    expect(backtestCountRule(rule(10, 5), history, FROM, [incidentA], 2)).toEqual(backtestCountRule(rule(10, 60), history, FROM, [incidentA], 2));
  });

  it('keeps quiet for one window after a firing (cooldown)', () => {
    // k = 2: sums over hours [i−1, i]. i=5 → 10 fires (end 06:00); i=6 (20) is in cooldown; i=7
    // (10) fires again (end 08:00); i=20 fires, i=21 (30) cools down; i=40 fires, i=41 cools down.
    expect(replayFirings(hours, FROM.getTime(), 10, 120).map((t) => new Date(t).toISOString())).toEqual([at(6), at(8), at(21), at(41)]);
    expect(backtestCountRule(rule(10, 120), history, FROM, [incidentA], 2)).toMatchObject({ TP: 3, FP: 1, firings: 4 });
    // Without the cooldown the same windows would have fired 7 times.
    const windows = hours.map((_, i) => (hours[i] ?? 0) + (hours[i - 1] ?? 0)).filter((s) => s >= 10);
    expect(windows).toHaveLength(7);
  });

  it('sums k = ceil(windowMinutes / 60) clock hours and counts hours before the history as 0', () => {
    expect(replayFirings([10, 0, 0, 0], FROM.getTime(), 10, 180)).toEqual([FROM.getTime() + H]);
    expect(replayFirings([4, 4, 4, 0], FROM.getTime(), 12, 121)).toEqual([FROM.getTime() + 3 * H]);
    expect(replayFirings([4, 4, 4, 0], FROM.getTime(), 12, 120)).toEqual([]);
  });

  it('puts the early-warning horizon at exactly 24 hours before the opening, both sides', () => {
    expect(EARLY_WARNING_HORIZON_MS).toBe(24 * H);
    // Firing at end of hour 5 = 06:00 on day 1. Opened 06:00 day 2: exactly 24 h → TP, lead 24 h.
    const only5 = Array.from({ length: 48 }, (_, i) => (i === 5 ? 10 : 0));
    expect(backtestCountRule(rule(10), { toolset: 'web-a', hours: only5 }, FROM, [incident('x', 30, 31)], 2)).toMatchObject({ TP: 1, FP: 0, caught: 1, meanLeadTimeSec: 24 * 3600 });
    // Opened 07:00 day 2: the firing is 25 h early → FP, nothing caught.
    expect(backtestCountRule(rule(10), { toolset: 'web-a', hours: only5 }, FROM, [incident('x', 31, 32)], 2)).toMatchObject({ TP: 0, FP: 1, caught: 0, meanLeadTimeSec: 0 });
  });

  it('counts a firing at the resolution as TP and one an hour later as FP, with lead time 0', () => {
    const only5 = Array.from({ length: 48 }, (_, i) => (i === 5 ? 10 : 0));
    // Firing at 06:00; incident open 02:00–06:00: inside, after the opening → caught, lead 0.
    expect(backtestCountRule(rule(10), { toolset: 'web-a', hours: only5 }, FROM, [incident('x', 2, 6)], 2)).toMatchObject({ TP: 1, FP: 0, caught: 1, meanLeadTimeSec: 0 });
    expect(backtestCountRule(rule(10), { toolset: 'web-a', hours: only5 }, FROM, [incident('x', 2, 5)], 2)).toMatchObject({ TP: 0, FP: 1, caught: 0 });
  });

  it('averages lead time over caught incidents and rounds it', () => {
    // Firings end of hour 5 (06:00) and 20 (21:00). inc-1 opened 22:00 → earliest match 06:00, lead
    // 16 h. inc-2 opened 03:00 resolved 06:00 → matched by 06:00 after opening, lead 0. Mean 8 h.
    const two = Array.from({ length: 48 }, (_, i) => (i === 5 || i === 20 ? 10 : 0));
    expect(backtestCountRule(rule(10), { toolset: 'web-a', hours: two }, FROM, [incident('inc-1', 22, 23), incident('inc-2', 3, 6)], 2)).toMatchObject({
      TP: 2,
      FP: 0,
      incidents: 2,
      caught: 2,
      meanLeadTimeSec: 8 * 3600,
    });
    // A history starting one second before the hour shifts every firing: lead 16 h 1 s.
    const odd = backtestCountRule(rule(10), { toolset: 'web-a', hours: two }, new Date(FROM.getTime() - 1000), [incident('inc-1', 22, 23)], 2);
    expect(odd.meanLeadTimeSec).toBe(16 * 3600 + 1);
  });

  it('considers only incidents of the toolset opened inside the history, each id once', () => {
    const result = backtestCountRule(rule(10), history, FROM, [incidentA, incidentA, incident('other', 22, 23, 'web-b'), incident('late', 48, 49), incident('early', -1, 30)], 2);
    expect(result).toMatchObject({ incidents: 1, caught: 1, TP: 3, FP: 1 });
  });

  it('answers unsupported with every count 0 for what the hourly totals cannot replay', () => {
    const zero = { method: 'unsupported', lookbackDays: 2, TP: 0, FP: 0, meanLeadTimeSec: 0, incidents: 0, caught: 0, firings: 0 };
    for (const predicate of [
      rule(10, 60, { eventType: 'login' }),
      { kind: 'cross_toolset_join', otherToolset: 'web-b', windowMinutes: 60, minTenants: 1 },
      { kind: 'graph_lag_gte', lagSec: 60 },
      rule(0),
      rule(10.5),
      rule(10, 4),
      rule(10, 1441),
      { kind: 'empire_count_gte', count: '10', windowMinutes: 60 },
    ]) {
      expect(backtestCountRule(predicate, history, FROM, [incidentA], 2)).toEqual(zero);
    }
  });
});

describe('backtestCountRule properties (fast-check)', () => {
  /** The rule as the doc states it, written the slow way. */
  function reference(series: number[], count: number, k: number): number[] {
    const out: number[] = [];
    let last = -Infinity;
    for (let i = 0; i < series.length; i++) {
      let sum = 0;
      for (let j = Math.max(0, i - k + 1); j <= i; j++) sum += series[j]!;
      if (sum >= count && i - last >= k) {
        out.push(i);
        last = i;
      }
    }
    return out;
  }

  it('agrees with a slow reference, TP + FP = firings, caught ≤ incidents, firings at least a window apart', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(30), { maxLength: 120 }),
        fc.integer({ min: 1, max: 80 }),
        fc.integer({ min: 5, max: 1440 }),
        fc.array(fc.tuple(fc.integer({ min: -30, max: 150 }), fc.nat(40), fc.constantFrom('web-a', 'web-b')), { maxLength: 6 }),
        (series, count, windowMinutes, raw) => {
          const incidents = raw.map(([o, d, t], i) => incident(`i${i}`, o, o + d, t));
          const r = backtestCountRule(rule(count, windowMinutes), { toolset: 'web-a', hours: series }, FROM, incidents, 5);
          const k = Math.ceil(windowMinutes / 60);
          const firings = replayFirings(series, FROM.getTime(), count, windowMinutes);
          expect(firings.map((t) => (t - FROM.getTime()) / H - 1)).toEqual(reference(series, count, k));
          expect(r.TP + r.FP).toBe(r.firings);
          expect(r.firings).toBe(firings.length);
          expect(r.caught).toBeLessThanOrEqual(r.incidents);
          expect(r.caught === 0 ? r.meanLeadTimeSec === 0 : r.meanLeadTimeSec >= 0).toBe(true);
          expect(r.meanLeadTimeSec).toBeLessThanOrEqual(EARLY_WARNING_HORIZON_MS / 1000);
          expect(backtestCountRule(rule(count, windowMinutes), { toolset: 'web-a', hours: series }, FROM, [...incidents].reverse(), 5)).toEqual(r);
        },
      ),
    );
  });
});
