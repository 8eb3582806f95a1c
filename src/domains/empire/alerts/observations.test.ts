import { describe, expect, it } from 'vitest';
import { countOutcome, emptyStats, isSilenced, planEvaluation as planGeneric, SETTLE_MS } from '../../../platform/alerting/plan.ts';
import { describeFiring, matches } from './observations.ts';
import { checkPredicate, type EmpirePredicate, GRAPH_LAG_RENOTIFY_MINUTES, normalizePredicate, parseStoredPredicate, windowMsOf } from './predicates.ts';

// Empire predicates as the engine plans and matches them, and how a firing is worded
// (docs/empire/alerts.md): every kind is windowed, thresholds are inclusive, an unknown lag never
// matches.

const MINUTE = 60_000;
/** The plan of an empire rule: its predicate's window (graph_lag_gte: the re-notification interval). */
const planEvaluation = (rule: { predicate: EmpirePredicate; createdAt: Date; evaluatedUntil: Date | null; lastFiredAt: Date | null }, now: Date) =>
  planGeneric(rule, windowMsOf(rule.predicate), now);

describe('predicates and plans (pure)', () => {
  const at = (iso: string) => new Date(iso);
  const rule = { toolset: 'crawler-lab' };
  const count: EmpirePredicate = { kind: 'empire_count_gte', count: 10, windowMinutes: 15 };
  const join: EmpirePredicate = { kind: 'cross_toolset_join', otherToolset: 'probe-kit', windowMinutes: 30 };
  const lag: EmpirePredicate = { kind: 'graph_lag_gte', lagSec: 600 };

  it('fills defaults and keeps what was given', () => {
    expect(normalizePredicate(join)).toEqual({ ...join, minTenants: 1 });
    expect(normalizePredicate({ ...join, eventType: 'crawl.page', minTenants: 3 })).toEqual({ ...join, eventType: 'crawl.page', minTenants: 3 });
    expect(normalizePredicate(count)).toEqual(count);
    expect(normalizePredicate({ ...lag, nodeKind: 'Fingerprint' })).toEqual({ ...lag, nodeKind: 'Fingerprint' });
  });

  it('checks allowed values with a sentence naming the field', () => {
    for (const p of [count, join, lag]) expect(checkPredicate(p, rule)).toBeNull();
    const refused: [EmpirePredicate, string][] = [
      [{ ...count, count: 0 }, 'predicate.count'],
      [{ ...count, count: 100_000_001 }, 'predicate.count'],
      [{ ...count, count: 2.5 }, 'predicate.count'],
      [{ ...count, windowMinutes: 4 }, 'predicate.windowMinutes'],
      [{ ...count, windowMinutes: 1441 }, 'predicate.windowMinutes'],
      [{ ...count, eventType: '' }, 'predicate.eventType'],
      [{ ...count, eventType: 'x'.repeat(129) }, 'predicate.eventType'],
      [{ ...join, otherToolset: 'crawler-lab' }, 'predicate.otherToolset'],
      [{ ...join, otherToolset: '9lives' }, 'predicate.otherToolset'],
      [{ ...join, otherToolset: 'ab' }, 'predicate.otherToolset'],
      [{ ...join, windowMinutes: 1441 }, 'predicate.windowMinutes'],
      [{ ...join, otherEventType: '' }, 'predicate.otherEventType'],
      [{ ...join, minTenants: 0 }, 'predicate.minTenants'],
      [{ ...join, minTenants: 10_001 }, 'predicate.minTenants'],
      [{ ...lag, lagSec: 0 }, 'predicate.lagSec'],
      [{ ...lag, lagSec: 604_801 }, 'predicate.lagSec'],
      [{ ...lag, nodeKind: 'page' }, 'predicate.nodeKind'],
    ];
    for (const [p, field] of refused) expect(checkPredicate(p, rule), JSON.stringify(p)).toMatchObject({ field });
    expect(checkPredicate({ ...count, count: 100_000_000 }, rule)).toBeNull();
    expect(checkPredicate({ ...join, minTenants: 10_000 }, rule)).toBeNull();
    expect(checkPredicate({ ...lag, lagSec: 604_800 }, rule)).toBeNull();
    expect(checkPredicate({ ...count, windowMinutes: 4 }, rule)?.human).toBe('predicate.windowMinutes must be a whole number from 5 to 1440 minutes (got 4).');
    expect(checkPredicate({ ...join, otherToolset: 'crawler-lab' }, rule)?.human).toContain('another toolset than the rule\'s own (crawler-lab)');
    expect(checkPredicate({ ...lag, lagSec: 0 }, rule)?.human).toBe('predicate.lagSec must be a whole number from 1 to 604800 seconds (got 0).');
  });

  it('reads stored predicates back only when they still fit', () => {
    expect(parseStoredPredicate({ ...join }, rule)).toEqual({ ...join, minTenants: 1 });
    expect(parseStoredPredicate({ ...join }, { toolset: 'probe-kit' })).toBeNull();
    expect(parseStoredPredicate({ kind: 'liar_rate_above', pct: 3, windowMinutes: 5 }, rule)).toBeNull();
    expect(parseStoredPredicate({ ...count, extra: 1 }, rule)).toBeNull();
  });

  it('plans generically: settle margin, sliding window, cooldown of one window, incremental periods', () => {
    const createdAt = at('2026-11-24T10:00:00Z');
    const fresh = { createdAt, evaluatedUntil: null, lastFiredAt: null };
    expect(SETTLE_MS).toBe(MINUTE);
    expect(planGeneric(fresh, 15 * MINUTE, at('2026-11-24T10:00:59Z'))).toEqual({ action: 'skip' });
    expect(planGeneric(fresh, 15 * MINUTE, at('2026-11-24T10:05:00Z'))).toEqual({
      action: 'evaluate',
      period: { from: createdAt, to: at('2026-11-24T10:04:00Z') },
      scope: { from: at('2026-11-24T09:49:00Z'), to: at('2026-11-24T10:04:00Z') },
    });
    const fired = { createdAt, evaluatedUntil: at('2026-11-24T10:04:00Z'), lastFiredAt: at('2026-11-24T10:05:00Z') };
    expect(planGeneric(fired, 15 * MINUTE, at('2026-11-24T10:19:59Z'))).toEqual({
      action: 'cooldown',
      period: { from: at('2026-11-24T10:04:00Z'), to: at('2026-11-24T10:18:59Z') },
    });
    expect(planGeneric(fired, 15 * MINUTE, at('2026-11-24T10:20:00Z')).action).toBe('evaluate');
    // Without a window: exactly the period since the last evaluation, never cooling.
    expect(planGeneric(fired, null, at('2026-11-24T10:06:00Z'))).toEqual({
      action: 'evaluate',
      period: { from: at('2026-11-24T10:04:00Z'), to: at('2026-11-24T10:05:00Z') },
      scope: { from: at('2026-11-24T10:04:00Z'), to: at('2026-11-24T10:05:00Z') },
    });
    // Empire kinds: the event kinds cool down for their window, graph_lag_gte for its re-notification interval.
    expect(planEvaluation({ predicate: join, ...fired }, at('2026-11-24T10:34:59Z')).action).toBe('cooldown');
    expect(planEvaluation({ predicate: join, ...fired }, at('2026-11-24T10:35:00Z')).action).toBe('evaluate');
    expect(planEvaluation({ predicate: lag, ...fired }, new Date(fired.lastFiredAt.getTime() + GRAPH_LAG_RENOTIFY_MINUTES * MINUTE - 1)).action).toBe('cooldown');
    expect(planEvaluation({ predicate: lag, ...fired }, new Date(fired.lastFiredAt.getTime() + GRAPH_LAG_RENOTIFY_MINUTES * MINUTE)).action).toBe('evaluate');
  });

  it('matches at the threshold and not below; an unknown lag never matches', () => {
    expect(matches(count, { kind: 'empire_count_gte', events: 10 })).toBe(true);
    expect(matches(count, { kind: 'empire_count_gte', events: 9 })).toBe(false);
    expect(matches({ ...join, minTenants: 2 }, { kind: 'cross_toolset_join', total: 2, tenants: [] })).toBe(true);
    expect(matches({ ...join, minTenants: 2 }, { kind: 'cross_toolset_join', total: 1, tenants: [] })).toBe(false);
    expect(matches(join, { kind: 'cross_toolset_join', total: 0, tenants: [] })).toBe(false);
    expect(matches(lag, { kind: 'graph_lag_gte', lagSec: 600 })).toBe(true);
    expect(matches(lag, { kind: 'graph_lag_gte', lagSec: 599 })).toBe(false);
    expect(matches(lag, { kind: 'graph_lag_gte', lagSec: null })).toBe(false);
    expect(matches(count, { kind: 'graph_lag_gte', lagSec: 10_000 })).toBe(false);
    expect(isSilenced(at('2026-11-24T10:00:00Z'), at('2026-11-24T09:59:59Z'))).toBe(true);
    expect(isSilenced(at('2026-11-24T10:00:00Z'), at('2026-11-24T10:00:00Z'))).toBe(false);
    expect(isSilenced(null, at('2026-11-24T10:00:00Z'))).toBe(false);
    const stats = emptyStats();
    for (const outcome of ['not-due', 'skipped', 'cooling', 'quiet', 'silenced', 'fired'] as const) countOutcome(stats, outcome);
    expect(stats).toEqual({ evaluated: 4, fired: 1, silenced: 1, cooling: 1, skipped: 1, failed: 0 });
  });

  it('words a firing with the numbers and lists at most 20 tenants in details', () => {
    const scope = { from: at('2026-11-24T09:30:00Z'), to: at('2026-11-24T10:00:00Z') };
    const tenants = Array.from({ length: 25 }, (_, i) => ({ tenant: `t-${i}`, events: 2, otherEvents: 1 }));
    const message = describeFiring({ id: 'r1', name: 'Both', toolset: 'crawler-lab', tenant: null }, { ...join, minTenants: 1 }, { kind: 'cross_toolset_join', total: 30, tenants }, scope, at('2026-11-24T10:01:00Z'));
    expect(message.title).toBe('Both: 30 tenants in both crawler-lab and probe-kit');
    expect(message.text).toContain('t-0 (2 + 1), t-1 (2 + 1), t-2 (2 + 1), t-3 (2 + 1), t-4 (2 + 1) and 25 more.');
    expect((message.details.observed as { tenants: unknown[] }).tenants).toHaveLength(20);
    const counted = describeFiring({ id: 'r2', name: 'Pages', toolset: 'crawler-lab', tenant: 'docs' }, { ...count, eventType: 'crawl.page' }, { kind: 'empire_count_gte', events: 12 }, scope, at('2026-11-24T10:01:00Z'));
    expect(counted.title).toBe('Pages: 12 crawl.page events on crawler-lab for tenant docs');
  });
});
