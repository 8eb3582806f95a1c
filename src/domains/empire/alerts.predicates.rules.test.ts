import { describe, expect, it } from 'vitest';
import {
  checkPredicate,
  CrossToolsetJoin,
  EMPIRE_PREDICATE_KINDS,
  EmpireCountGte,
  type EmpirePredicate,
  GRAPH_LAG_RENOTIFY_MINUTES,
  GraphLagGte,
  normalizePredicate,
  parseStoredPredicate,
  windowMsOf,
} from './alerts.predicates.ts';

// The empire alert predicates' allowed values and defaults (docs/empire-alerts.md).

type Of<K extends EmpirePredicate['kind']> = Extract<EmpirePredicate, { kind: K }>;
const countGte = (over: Partial<Of<'empire_count_gte'>> = {}): EmpirePredicate => ({ kind: 'empire_count_gte', count: 10, windowMinutes: 15, ...over });
const join = (over: Partial<Of<'cross_toolset_join'>> = {}): EmpirePredicate => ({ kind: 'cross_toolset_join', otherToolset: 'other-lab', windowMinutes: 15, ...over });
const lag = (over: Partial<Of<'graph_lag_gte'>> = {}): EmpirePredicate => ({ kind: 'graph_lag_gte', lagSec: 60, ...over });
const RULE = { toolset: 'own-lab' };
const field = (p: EmpirePredicate, rule: { toolset: string | null } = RULE) => checkPredicate(p, rule)?.field ?? null;

describe('checkPredicate', () => {
  it('checks a count rule: count 1 to 100,000,000, the window, eventType 1 to 128 characters', () => {
    expect(checkPredicate(countGte({ count: 1 }), RULE)).toBeNull();
    expect(checkPredicate(countGte({ count: 100_000_000, eventType: 'x'.repeat(128) }), RULE)).toBeNull();
    expect(field(countGte({ count: 0 }))).toBe('predicate.count');
    expect(field(countGte({ count: 100_000_001 }))).toBe('predicate.count');
    expect(field(countGte({ windowMinutes: 4 }))).toBe('predicate.windowMinutes');
    expect(checkPredicate(countGte({ eventType: '' }), RULE)).toEqual({ field: 'predicate.eventType', human: 'predicate.eventType must be 1 to 128 characters long (got 0).' });
    expect(field(countGte({ eventType: 'x'.repeat(129) }))).toBe('predicate.eventType');
    expect(checkPredicate(countGte({ eventType: 'x' }), RULE)).toBeNull();
  });

  it('checks a join rule: another toolset by a valid name, the window, both event types and minTenants 1 to 10,000', () => {
    expect(checkPredicate(join(), RULE)).toBeNull();
    expect(checkPredicate(join({ eventType: 'a', otherEventType: 'b', minTenants: 10_000 }), RULE)).toBeNull();
    expect(checkPredicate(join({ otherToolset: '9lab' }), RULE)).toEqual({
      field: 'predicate.otherToolset',
      human: 'predicate.otherToolset must be a toolset name: 3 to 128 characters, a letter, then letters, digits or - (got "9lab").',
    });
    expect(checkPredicate(join({ otherToolset: `a${'b'.repeat(200)}!` }), RULE)?.human).toContain(`(got "a${'b'.repeat(139)}").`);
    expect(checkPredicate(join({ otherToolset: 'own-lab' }), RULE)).toEqual({
      field: 'predicate.otherToolset',
      human: "predicate.otherToolset must name another toolset than the rule's own (own-lab): a join of a toolset with itself is just a count.",
    });
    // A rule without a toolset has no "own" to compare with.
    expect(checkPredicate(join({ otherToolset: 'own-lab' }), { toolset: null })).toBeNull();
    expect(field(join({ windowMinutes: 1441 }))).toBe('predicate.windowMinutes');
    expect(field(join({ eventType: '' }))).toBe('predicate.eventType');
    expect(field(join({ otherEventType: 'x'.repeat(129) }))).toBe('predicate.otherEventType');
    expect(field(join({ minTenants: 0 }))).toBe('predicate.minTenants');
    expect(field(join({ minTenants: 10_001 }))).toBe('predicate.minTenants');
  });

  it('checks a lag rule: lagSec 1 to 604,800 seconds, nodeKind 1 to 64 characters', () => {
    expect(checkPredicate(lag({ lagSec: 1 }), RULE)).toBeNull();
    expect(checkPredicate(lag({ lagSec: 604_800, nodeKind: 'n'.repeat(64) }), RULE)).toBeNull();
    expect(checkPredicate(lag({ lagSec: 0 }), RULE)?.human).toBe('predicate.lagSec must be a whole number from 1 to 604800 seconds (got 0).');
    expect(field(lag({ lagSec: 604_801 }))).toBe('predicate.lagSec');
    expect(field(lag({ nodeKind: 'n'.repeat(65) }))).toBe('predicate.nodeKind');
  });
});

describe('normalizePredicate', () => {
  it('fills in minTenants and keeps only the optional fields that were given', () => {
    expect(normalizePredicate(countGte())).toEqual({ kind: 'empire_count_gte', count: 10, windowMinutes: 15 });
    expect(normalizePredicate(countGte({ eventType: 'tick' }))).toEqual({ kind: 'empire_count_gte', count: 10, windowMinutes: 15, eventType: 'tick' });
    expect(normalizePredicate(join())).toEqual({ kind: 'cross_toolset_join', otherToolset: 'other-lab', windowMinutes: 15, minTenants: 1 });
    expect(normalizePredicate(join({ eventType: 'a', otherEventType: 'b', minTenants: 3 }))).toEqual({
      kind: 'cross_toolset_join',
      otherToolset: 'other-lab',
      windowMinutes: 15,
      eventType: 'a',
      otherEventType: 'b',
      minTenants: 3,
    });
    expect(normalizePredicate(lag())).toEqual({ kind: 'graph_lag_gte', lagSec: 60 });
    expect(normalizePredicate(lag({ nodeKind: 'topic' }))).toEqual({ kind: 'graph_lag_gte', lagSec: 60, nodeKind: 'topic' });
    expect(Object.keys(normalizePredicate(countGte()))).not.toContain('eventType');
  });
});

describe('parseStoredPredicate', () => {
  it('reads back a stored predicate normalised, and refuses one that no longer fits the rule or the union', () => {
    expect(parseStoredPredicate({ kind: 'cross_toolset_join', otherToolset: 'other-lab', windowMinutes: 30 }, RULE)).toEqual({
      kind: 'cross_toolset_join',
      otherToolset: 'other-lab',
      windowMinutes: 30,
      minTenants: 1,
    });
    expect(parseStoredPredicate({ kind: 'cross_toolset_join', otherToolset: 'own-lab', windowMinutes: 30 }, RULE)).toBeNull();
    expect(parseStoredPredicate({ kind: 'empire_count_gte', count: 1 }, RULE)).toBeNull();
    expect(parseStoredPredicate({ kind: 'gone' }, RULE)).toBeNull();
  });
});

describe('windowMsOf', () => {
  it('is the window for event predicates and the re-notification interval (60 minutes) for the lag', () => {
    expect(windowMsOf(countGte({ windowMinutes: 20 }))).toBe(1_200_000);
    expect(windowMsOf(join({ windowMinutes: 5 }))).toBe(300_000);
    expect(GRAPH_LAG_RENOTIFY_MINUTES).toBe(60);
    expect(windowMsOf(lag())).toBe(3_600_000);
  });
});

describe('the schemas', () => {
  it('list every kind', () => {
    expect(EMPIRE_PREDICATE_KINDS).toEqual(['empire_count_gte', 'cross_toolset_join', 'graph_lag_gte']);
  });

  it('document the same bounds and defaults the checks enforce', () => {
    expect(EmpireCountGte.properties.count.description).toContain('1 to 100000000');
    expect(EmpireCountGte.properties.eventType.description).toContain('1 to 128 characters');
    expect(CrossToolsetJoin.properties.minTenants.description).toContain('1 to 10000; default 1');
    expect(GraphLagGte.properties.lagSec.description).toContain('1 to 604800');
    expect(GraphLagGte.properties.nodeKind.description).toContain('1 to 64 characters');
  });
});
