import { describe, expect, it } from 'vitest';
import { isSilenced, planEvaluation, SETTLE_MS } from '../../../platform/alerting/plan.ts';
import { describeFiring, matches } from './observations.ts';
import { checkPredicate, normalizePredicate, type Predicate, windowMsOf } from './predicates.ts';

// Honeypot predicates as the engine plans and matches them (docs/honeypot/alerts.md): windowed
// kinds read a sliding window and cool down, incremental kinds read their period; the thresholds
// are strict.

const MINUTE = 60_000;

describe('predicates (pure)', () => {
  const at = (iso: string) => new Date(iso);
  const liarRule: Predicate = { kind: 'liar_rate_above', pct: 30, windowMinutes: 15, minEvents: 20 };
  const plan = (rule: { predicate: Predicate; createdAt: Date; evaluatedUntil: Date | null; lastFiredAt: Date | null }, now: Date) =>
    planEvaluation(rule, windowMsOf(rule.predicate), now);

  it('fills defaults and checks allowed values with a sentence naming the field', () => {
    expect(normalizePredicate({ kind: 'liar_rate_above', pct: 30, windowMinutes: 15 })).toEqual(liarRule);
    expect(normalizePredicate({ kind: 'new_fingerprint_cluster' })).toEqual({ kind: 'new_fingerprint_cluster', minEvents: 1 });
    expect(checkPredicate(liarRule)).toBeNull();
    expect(checkPredicate({ ...liarRule, windowMinutes: 4 })).toMatchObject({ field: 'predicate.windowMinutes' });
    expect(checkPredicate({ ...liarRule, windowMinutes: 1441 })?.human).toContain('from 5 to 1440 minutes');
    expect(checkPredicate({ ...liarRule, pct: 100 })).toMatchObject({ field: 'predicate.pct' });
    expect(checkPredicate({ ...liarRule, pct: -1 })).toMatchObject({ field: 'predicate.pct' });
    expect(checkPredicate({ ...liarRule, minEvents: 0 })).toMatchObject({ field: 'predicate.minEvents' });
    expect(checkPredicate({ kind: 'event_count_above', count: -1, windowMinutes: 5 })).toMatchObject({ field: 'predicate.count' });
    expect(checkPredicate({ kind: 'event_count_above', count: 1, windowMinutes: 5, uaClass: 'ROBOT' })).toMatchObject({ field: 'predicate.uaClass' });
    expect(checkPredicate({ kind: 'new_fingerprint_cluster', minEvents: 1001 })).toMatchObject({ field: 'predicate.minEvents' });
    expect(checkPredicate({ kind: 'tarpit_triggered' })).toBeNull();
  });

  it('plans: nothing before the settle margin, sliding windows, cooldown of one window after a firing', () => {
    const createdAt = at('2026-11-23T10:00:00Z');
    expect(plan({ predicate: liarRule, createdAt, evaluatedUntil: null, lastFiredAt: null }, at('2026-11-23T10:00:59Z'))).toEqual({ action: 'skip' });
    expect(plan({ predicate: liarRule, createdAt, evaluatedUntil: null, lastFiredAt: null }, at('2026-11-23T10:05:00Z'))).toEqual({
      action: 'evaluate',
      period: { from: createdAt, to: at('2026-11-23T10:04:00Z') },
      scope: { from: at('2026-11-23T09:49:00Z'), to: at('2026-11-23T10:04:00Z') },
    });
    const fired = at('2026-11-23T10:05:00Z');
    expect(plan({ predicate: liarRule, createdAt, evaluatedUntil: at('2026-11-23T10:04:00Z'), lastFiredAt: fired }, at('2026-11-23T10:19:59Z')).action).toBe('cooldown');
    expect(plan({ predicate: liarRule, createdAt, evaluatedUntil: at('2026-11-23T10:18:00Z'), lastFiredAt: fired }, at('2026-11-23T10:20:00Z')).action).toBe('evaluate');
    // Incremental kinds read exactly the period since the last evaluation, and have no cooldown.
    const tarpit = plan({ predicate: { kind: 'tarpit_triggered' }, createdAt, evaluatedUntil: at('2026-11-23T10:04:00Z'), lastFiredAt: fired }, at('2026-11-23T10:06:00Z'));
    expect(tarpit).toEqual({ action: 'evaluate', period: { from: at('2026-11-23T10:04:00Z'), to: at('2026-11-23T10:05:00Z') }, scope: { from: at('2026-11-23T10:04:00Z'), to: at('2026-11-23T10:05:00Z') } });
    expect(SETTLE_MS).toBe(MINUTE);
  });

  it('matches strictly above the threshold and only with enough events', () => {
    expect(matches(liarRule, { kind: 'liar_rate_above', events: 20, liars: 7 })).toBe(true);
    expect(matches(liarRule, { kind: 'liar_rate_above', events: 20, liars: 6 })).toBe(false); // exactly 30%
    expect(matches(liarRule, { kind: 'liar_rate_above', events: 19, liars: 19 })).toBe(false); // below minEvents
    expect(matches({ kind: 'event_count_above', count: 0, windowMinutes: 5 }, { kind: 'event_count_above', events: 0 })).toBe(false);
    expect(matches({ kind: 'event_count_above', count: 0, windowMinutes: 5 }, { kind: 'event_count_above', events: 1 })).toBe(true);
    expect(matches({ kind: 'tarpit_triggered' }, { kind: 'tarpit_triggered', total: 0, tarpits: [] })).toBe(false);
    expect(isSilenced(at('2026-11-23T10:00:00Z'), at('2026-11-23T09:59:59Z'))).toBe(true);
    expect(isSilenced(at('2026-11-23T10:00:00Z'), at('2026-11-23T10:00:00Z'))).toBe(false);
    expect(isSilenced(null, at('2026-11-23T10:00:00Z'))).toBe(false);
  });

  it('refuses to word an observation of another kind than its predicate', () => {
    const scope = { from: at('2026-11-23T09:45:00Z'), to: at('2026-11-23T10:00:00Z') };
    expect(() => describeFiring({ id: 'r1', name: 'Mixed' }, 'docs', liarRule, { kind: 'event_count_above', events: 3 }, scope)).toThrow(
      'observation event_count_above does not belong to predicate liar_rate_above',
    );
  });
});
