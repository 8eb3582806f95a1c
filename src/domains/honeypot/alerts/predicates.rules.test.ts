import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { buildValidatorFactory } from '../../../platform/http/validation.ts';
import {
  checkPredicate,
  DEFAULT_CLUSTER_MIN_EVENTS,
  DEFAULT_LIAR_MIN_EVENTS,
  EventCountAbove,
  LiarRateAbove,
  NewFingerprintCluster,
  normalizePredicate,
  parseStoredPredicate,
  Predicate,
  PredicateBody,
  PREDICATE_KINDS,
  TarpitTriggered,
  windowMsOf,
} from './predicates.ts';
import { UA_CLASS_VALUES } from '../vendors/classify.ts';

// The honeypot alert predicates' allowed values and defaults (docs/honeypot/alerts.md).

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

// What the server's own request validator (src/platform/http/validation.ts) accepts in a rule's
// `predicate` before checkPredicate runs: the schemas' shapes, enums and closed objects.
describe('the request validator on PredicateBody', () => {
  const validate = buildValidatorFactory()({}, {})({ schema: PredicateBody, method: 'POST', url: '/predicate', httpPart: 'body' }) as (data: unknown) => boolean;
  const accepts = (body: unknown) => validate(structuredClone(body));

  it('accepts each kind with its required fields, and its optional ones', () => {
    expect(accepts({ kind: 'liar_rate_above', pct: 12.5, windowMinutes: 15 })).toBe(true);
    expect(accepts({ kind: 'liar_rate_above', pct: 12.5, windowMinutes: 15, minEvents: 3 })).toBe(true);
    expect(accepts({ kind: 'event_count_above', count: 10, windowMinutes: 15 })).toBe(true);
    expect(accepts({ kind: 'new_fingerprint_cluster' })).toBe(true);
    expect(accepts({ kind: 'new_fingerprint_cluster', minEvents: 2 })).toBe(true);
    expect(accepts({ kind: 'tarpit_triggered' })).toBe(true);
  });

  it('takes only the documented user-agent classes in uaClass', () => {
    for (const uaClass of UA_CLASS_VALUES) expect(accepts({ kind: 'event_count_above', count: 10, windowMinutes: 15, uaClass })).toBe(true);
    expect(accepts({ kind: 'event_count_above', count: 10, windowMinutes: 15, uaClass: 'NOPE' })).toBe(false);
    expect(accepts({ kind: 'event_count_above', count: 10, windowMinutes: 15, uaClass: 'liar' })).toBe(false);
  });

  it('refuses a missing required field, a wrong type and an unknown kind', () => {
    expect(accepts({ kind: 'liar_rate_above', windowMinutes: 15 })).toBe(false);
    expect(accepts({ kind: 'liar_rate_above', pct: '12', windowMinutes: 15 })).toBe(false);
    expect(accepts({ kind: 'liar_rate_above', pct: 12, windowMinutes: 15, minEvents: 2.5 })).toBe(false);
    expect(accepts({ kind: 'event_count_above', windowMinutes: 15 })).toBe(false);
    expect(accepts({ kind: 'event_count_above', count: 1.5, windowMinutes: 15 })).toBe(false);
    expect(accepts({ kind: 'new_fingerprint_cluster', minEvents: 1.5 })).toBe(false);
    expect(accepts({ kind: 'gone' })).toBe(false);
    expect(accepts({ pct: 12 })).toBe(false);
  });

  it('refuses a field that is not part of the kind, for every kind', () => {
    expect(accepts({ kind: 'liar_rate_above', pct: 12, windowMinutes: 15, uaClass: 'LIAR' })).toBe(false);
    expect(accepts({ kind: 'event_count_above', count: 10, windowMinutes: 15, minEvents: 2 })).toBe(false);
    expect(accepts({ kind: 'new_fingerprint_cluster', minEvents: 2, windowMinutes: 15 })).toBe(false);
    expect(accepts({ kind: 'tarpit_triggered', minEvents: 2 })).toBe(false);
  });

  it('closes the stored form (Predicate) as well', () => {
    expect(Value.Check(Predicate, { kind: 'liar_rate_above', pct: 12, windowMinutes: 15, uaClass: 'LIAR' })).toBe(false);
    expect(Value.Check(Predicate, { kind: 'event_count_above', count: 10, windowMinutes: 15, extra: 1 })).toBe(false);
    expect(Value.Check(Predicate, { kind: 'new_fingerprint_cluster', minEvents: 2, extra: 1 })).toBe(false);
  });
});

describe('checkPredicate and normalizePredicate, exactly', () => {
  it('names every allowed class in the uaClass sentence', () => {
    expect(checkPredicate(count({ uaClass: 'NOPE' }))?.human).toBe(`predicate.uaClass must be one of: ${UA_CLASS_VALUES.join(', ')} (got NOPE).`);
  });

  it('adds no uaClass field at all when none was given', () => {
    expect(normalizePredicate(count())).toStrictEqual({ kind: 'event_count_above', count: 100, windowMinutes: 15 });
    expect(Object.keys(normalizePredicate(count()))).not.toContain('uaClass');
  });
});

// The manifest and OpenAPI serve these descriptions to clients: each states a rule, and must keep
// stating it (docs/honeypot/alerts.md).
describe('the rules the served schemas state', () => {
  it('for each field', () => {
    expect(LiarRateAbove.properties.pct.description).toBe("Fires when the LIAR share of the window's events is above this percentage: 0 ≤ pct < 100.");
    expect(LiarRateAbove.properties.minEvents.description).toBe('The window must hold at least this many events (of any class) before the rate counts: 1 to 100000; default 20.');
    expect(EventCountAbove.properties.count.description).toBe('Fires when more than this many events arrive in the window: 0 to 100000000.');
    expect(EventCountAbove.properties.uaClass.description).toBe('Count only events of this user-agent class (docs/honeypot/vendors.md).');
    expect(NewFingerprintCluster.properties.minEvents.description).toBe('A fingerprint counts as new when its minEvents-th event ever arrives: 1 to 1000; default 1 (its first event).');
  });

  it('for each kind, and for the union', () => {
    expect(LiarRateAbove.description).toBe('The share of LIAR events among the events received in the window is above `pct`.');
    expect(EventCountAbove.description).toBe('More than `count` events (only those of `uaClass` when it is given) were received in the window.');
    expect(NewFingerprintCluster.description).toBe('A client fingerprint (JA4 + normalised user agent) new to the tenant reached `minEvents` events since the last evaluation.');
    expect(TarpitTriggered.description).toBe("A tarpit was opened for one of the tenant's fingerprints since the last evaluation.");
    expect(Predicate.description).toBe('An alert predicate, discriminated by `kind` (docs/honeypot/alerts.md).');
    expect((PredicateBody as { description?: string }).description).toBe(
      'One of `liar_rate_above` {pct, windowMinutes, minEvents?}, `event_count_above` {count, windowMinutes, uaClass?}, `new_fingerprint_cluster` {minEvents?}, `tarpit_triggered` {} (docs/honeypot/alerts.md).',
    );
  });
});
