import { describe, expect, it } from 'vitest';
import {
  checkPredicate,
  DEFAULT_CLUSTER_MIN_EVENTS,
  DEFAULT_LIAR_MIN_EVENTS,
  EventCountAbove,
  LiarRateAbove,
  NewFingerprintCluster,
  normalizePredicate,
  parseStoredPredicate,
  type Predicate,
  PREDICATE_KINDS,
  windowMsOf,
} from './alerts.predicates.ts';

// The honeypot alert predicates' allowed values and defaults (docs/honeypot-alerts.md).

const liar = (over: Partial<Extract<Predicate, { kind: 'liar_rate_above' }>> = {}): Predicate => ({ kind: 'liar_rate_above', pct: 50, windowMinutes: 15, ...over });
const count = (over: Partial<Extract<Predicate, { kind: 'event_count_above' }>> = {}): Predicate => ({ kind: 'event_count_above', count: 100, windowMinutes: 15, ...over });
const field = (p: Predicate) => checkPredicate(p)?.field ?? null;

describe('checkPredicate', () => {
  it('allows a liar share from 0 up to, not including, 100 percent', () => {
    expect(checkPredicate(liar({ pct: 0 }))).toBeNull();
    expect(checkPredicate(liar({ pct: 99.9 }))).toBeNull();
    expect(checkPredicate(liar({ pct: 100 }))).toEqual({
      field: 'predicate.pct',
      human: 'predicate.pct must be at least 0 and below 100 (got 100): a liar share cannot be above 100%.',
    });
    expect(field(liar({ pct: -0.1 }))).toBe('predicate.pct');
    expect(field(liar({ pct: Number.NaN }))).toBe('predicate.pct');
    expect(field(liar({ pct: Number.POSITIVE_INFINITY }))).toBe('predicate.pct');
  });

  it('checks the liar rule\'s window and its optional minEvents (1 to 100,000)', () => {
    expect(field(liar({ windowMinutes: 4 }))).toBe('predicate.windowMinutes');
    expect(checkPredicate(liar({ minEvents: 1 }))).toBeNull();
    expect(checkPredicate(liar({ minEvents: 100_000 }))).toBeNull();
    expect(field(liar({ minEvents: 0 }))).toBe('predicate.minEvents');
    expect(field(liar({ minEvents: 100_001 }))).toBe('predicate.minEvents');
  });

  it('checks the count rule\'s count (0 to 100,000,000), window and class', () => {
    expect(checkPredicate(count({ count: 0 }))).toBeNull();
    expect(checkPredicate(count({ count: 100_000_000 }))).toBeNull();
    expect(field(count({ count: -1 }))).toBe('predicate.count');
    expect(field(count({ count: 100_000_001 }))).toBe('predicate.count');
    expect(field(count({ windowMinutes: 1441 }))).toBe('predicate.windowMinutes');
    expect(checkPredicate(count({ uaClass: 'LIAR' }))).toBeNull();
    expect(checkPredicate(count({ uaClass: 'NOPE' }))).toMatchObject({ field: 'predicate.uaClass', human: expect.stringMatching(/^predicate\.uaClass must be one of: .*LIAR.* \(got NOPE\)\.$/) });
  });

  it('checks the cluster rule\'s optional minEvents (1 to 1,000); a tarpit rule has nothing to check', () => {
    expect(checkPredicate({ kind: 'new_fingerprint_cluster' })).toBeNull();
    expect(checkPredicate({ kind: 'new_fingerprint_cluster', minEvents: 1000 })).toBeNull();
    expect(field({ kind: 'new_fingerprint_cluster', minEvents: 1001 })).toBe('predicate.minEvents');
    expect(field({ kind: 'new_fingerprint_cluster', minEvents: 0 })).toBe('predicate.minEvents');
    expect(checkPredicate({ kind: 'tarpit_triggered' })).toBeNull();
  });
});

describe('normalizePredicate', () => {
  it('fills in the defaults and keeps what was given', () => {
    expect(normalizePredicate(liar())).toEqual({ kind: 'liar_rate_above', pct: 50, windowMinutes: 15, minEvents: DEFAULT_LIAR_MIN_EVENTS });
    expect(DEFAULT_LIAR_MIN_EVENTS).toBe(20);
    expect(normalizePredicate(liar({ minEvents: 3 }))).toMatchObject({ minEvents: 3 });
    expect(normalizePredicate(count())).toEqual({ kind: 'event_count_above', count: 100, windowMinutes: 15 });
    expect(normalizePredicate(count({ uaClass: 'LIAR' }))).toEqual({ kind: 'event_count_above', count: 100, windowMinutes: 15, uaClass: 'LIAR' });
    expect(normalizePredicate({ kind: 'new_fingerprint_cluster' })).toEqual({ kind: 'new_fingerprint_cluster', minEvents: DEFAULT_CLUSTER_MIN_EVENTS });
    expect(DEFAULT_CLUSTER_MIN_EVENTS).toBe(1);
    expect(normalizePredicate({ kind: 'new_fingerprint_cluster', minEvents: 4 })).toEqual({ kind: 'new_fingerprint_cluster', minEvents: 4 });
    expect(normalizePredicate({ kind: 'tarpit_triggered' })).toEqual({ kind: 'tarpit_triggered' });
  });

  it('drops fields that are not part of the kind', () => {
    const extra = { ...liar(), uaClass: 'LIAR' } as unknown as Predicate;
    expect(normalizePredicate(extra)).not.toHaveProperty('uaClass');
    expect(normalizePredicate({ kind: 'tarpit_triggered', pct: 3 } as unknown as Predicate)).toEqual({ kind: 'tarpit_triggered' });
  });
});

describe('parseStoredPredicate', () => {
  it('reads back a stored predicate normalised, and refuses one that no longer fits', () => {
    expect(parseStoredPredicate({ kind: 'liar_rate_above', pct: 10, windowMinutes: 30 })).toEqual({ kind: 'liar_rate_above', pct: 10, windowMinutes: 30, minEvents: 20 });
    expect(parseStoredPredicate({ kind: 'liar_rate_above', pct: 100, windowMinutes: 30 })).toBeNull();
    expect(parseStoredPredicate({ kind: 'liar_rate_above', pct: 10 })).toBeNull();
    expect(parseStoredPredicate({ kind: 'gone' })).toBeNull();
    expect(parseStoredPredicate({ kind: 'tarpit_triggered', extra: 1 })).toBeNull();
  });
});

describe('windowMsOf', () => {
  it('is the window in milliseconds for the windowed kinds and null for the incremental ones', () => {
    expect(windowMsOf(liar({ windowMinutes: 15 }))).toBe(900_000);
    expect(windowMsOf(count({ windowMinutes: 5 }))).toBe(300_000);
    expect(windowMsOf({ kind: 'new_fingerprint_cluster', minEvents: 1 })).toBeNull();
    expect(windowMsOf({ kind: 'tarpit_triggered' })).toBeNull();
  });
});

describe('the schemas', () => {
  it('list every kind', () => {
    expect(PREDICATE_KINDS).toEqual(['liar_rate_above', 'event_count_above', 'new_fingerprint_cluster', 'tarpit_triggered']);
  });

  it('document the same bounds and defaults the checks enforce', () => {
    expect(LiarRateAbove.properties.minEvents.description).toContain('1 to 100000; default 20');
    expect(EventCountAbove.properties.count.description).toContain('0 to 100000000');
    expect(NewFingerprintCluster.properties.minEvents.description).toContain('1 to 1000; default 1');
  });
});
