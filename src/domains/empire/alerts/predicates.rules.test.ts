import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { buildValidatorFactory } from '../../../platform/http/validation.ts';
import { NODE_KINDS } from '../../graph/kinds.ts';
import {
  checkPredicate,
  CrossToolsetJoin,
  EMPIRE_PREDICATE_KINDS,
  EmpireCountGte,
  EmpirePredicate,
  EmpirePredicateBody,
  GRAPH_LAG_RENOTIFY_MINUTES,
  GraphLagGte,
  normalizePredicate,
  parseStoredPredicate,
  windowMsOf,
} from './predicates.ts';

// The empire alert predicates' allowed values and defaults (docs/empire/alerts.md).

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

  it('checks a lag rule: lagSec 1 to 604,800 seconds, nodeKind one of the graph\'s node kinds', () => {
    expect(checkPredicate(lag({ lagSec: 1 }), RULE)).toBeNull();
    expect(checkPredicate(lag({ lagSec: 604_800, nodeKind: 'EmpireEvent' }), RULE)).toBeNull();
    for (const nodeKind of NODE_KINDS) expect(checkPredicate(lag({ nodeKind }), RULE)).toBeNull();
    expect(checkPredicate(lag({ nodeKind: 'page' }), RULE)).toEqual({
      field: 'predicate.nodeKind',
      human: `predicate.nodeKind must be one of: ${NODE_KINDS.join(', ')} (got "page").`,
    });
    expect(checkPredicate(lag({ nodeKind: 'n'.repeat(100) }), RULE)?.human).toContain(`(got "${'n'.repeat(70)}").`);
    expect(field(lag({ nodeKind: 'empireevent' }))).toBe('predicate.nodeKind');
    expect(checkPredicate(lag({ lagSec: 0 }), RULE)?.human).toBe('predicate.lagSec must be a whole number from 1 to 604800 seconds (got 0).');
    expect(field(lag({ lagSec: 604_801 }))).toBe('predicate.lagSec');
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
    expect(normalizePredicate(lag({ nodeKind: 'Tenant' }))).toEqual({ kind: 'graph_lag_gte', lagSec: 60, nodeKind: 'Tenant' });
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
    expect(GraphLagGte.properties.nodeKind.description).toBe(`The lag of this node kind only, one of ${NODE_KINDS.join(', ')}; the worst kind's when absent.`);
  });
});

describe('the request validator on EmpirePredicateBody', () => {
  const validate = buildValidatorFactory()({}, {})({ schema: EmpirePredicateBody, method: 'POST', url: '/predicate', httpPart: 'body' }) as (data: unknown) => boolean;
  const accepts = (body: unknown) => validate(structuredClone(body));

  it('accepts each kind with its required fields, and its optional ones', () => {
    expect(accepts({ kind: 'empire_count_gte', count: 10, windowMinutes: 15 })).toBe(true);
    expect(accepts({ kind: 'empire_count_gte', count: 10, windowMinutes: 15, eventType: 'tick' })).toBe(true);
    expect(accepts({ kind: 'cross_toolset_join', otherToolset: 'other-lab', windowMinutes: 15 })).toBe(true);
    expect(accepts({ kind: 'cross_toolset_join', otherToolset: 'other-lab', windowMinutes: 15, eventType: 'a', otherEventType: 'b', minTenants: 2 })).toBe(true);
    expect(accepts({ kind: 'graph_lag_gte', lagSec: 60 })).toBe(true);
    expect(accepts({ kind: 'graph_lag_gte', lagSec: 60, nodeKind: 'Tenant' })).toBe(true);
  });

  it('refuses a missing required field, a wrong type and an unknown kind', () => {
    expect(accepts({ kind: 'empire_count_gte', windowMinutes: 15 })).toBe(false);
    expect(accepts({ kind: 'empire_count_gte', count: 10 })).toBe(false);
    expect(accepts({ kind: 'empire_count_gte', count: 1.5, windowMinutes: 15 })).toBe(false);
    expect(accepts({ kind: 'empire_count_gte', count: '10', windowMinutes: 15 })).toBe(false);
    expect(accepts({ kind: 'empire_count_gte', count: 10, windowMinutes: 15, eventType: 5 })).toBe(false);
    expect(accepts({ kind: 'cross_toolset_join', windowMinutes: 15 })).toBe(false);
    expect(accepts({ kind: 'cross_toolset_join', otherToolset: 'other-lab' })).toBe(false);
    expect(accepts({ kind: 'cross_toolset_join', otherToolset: 'other-lab', windowMinutes: 15, minTenants: 1.5 })).toBe(false);
    expect(accepts({ kind: 'cross_toolset_join', otherToolset: 'other-lab', windowMinutes: 15, otherEventType: 1 })).toBe(false);
    expect(accepts({ kind: 'graph_lag_gte' })).toBe(false);
    expect(accepts({ kind: 'graph_lag_gte', lagSec: 1.5 })).toBe(false);
    expect(accepts({ kind: 'graph_lag_gte', lagSec: 60, nodeKind: 3 })).toBe(false);
    expect(accepts({ kind: 'gone' })).toBe(false);
    expect(accepts({ count: 10 })).toBe(false);
  });

  it('refuses a field that is not part of the kind, for every kind', () => {
    expect(accepts({ kind: 'empire_count_gte', count: 10, windowMinutes: 15, minTenants: 1 })).toBe(false);
    expect(accepts({ kind: 'cross_toolset_join', otherToolset: 'other-lab', windowMinutes: 15, count: 1 })).toBe(false);
    expect(accepts({ kind: 'graph_lag_gte', lagSec: 60, windowMinutes: 15 })).toBe(false);
  });

  it('closes the stored form (EmpirePredicate) as well', () => {
    expect(Value.Check(EmpirePredicate, { kind: 'empire_count_gte', count: 10, windowMinutes: 15, extra: 1 })).toBe(false);
    expect(Value.Check(EmpirePredicate, { kind: 'cross_toolset_join', otherToolset: 'other-lab', windowMinutes: 15, minTenants: 1, extra: 1 })).toBe(false);
    expect(Value.Check(EmpirePredicate, { kind: 'graph_lag_gte', lagSec: 60, extra: 1 })).toBe(false);
  });
});

// The manifest and OpenAPI serve these descriptions to clients: each states a rule, and must keep
// stating it (docs/empire/alerts.md).
describe('the rules the served schemas state, exactly', () => {
  it('for each field', () => {
    expect(EmpireCountGte.properties.count.description).toBe('Fires when at least this many events arrive in the window: 1 to 100000000.');
    expect(EmpireCountGte.properties.eventType.description).toBe("Count only events of this eventType of the rule's toolset: 1 to 128 characters.");
    expect(CrossToolsetJoin.properties.otherToolset.description).toContain("The toolset joined with the rule's own (");
    expect(CrossToolsetJoin.properties.otherToolset.description).toContain('it must be another toolset.');
    expect(CrossToolsetJoin.properties.eventType.description).toBe("Count only events of this eventType in the rule's toolset: 1 to 128 characters.");
    expect(CrossToolsetJoin.properties.otherEventType.description).toBe('Count only events of this eventType in otherToolset: 1 to 128 characters.');
    expect(CrossToolsetJoin.properties.minTenants.description).toBe('Fires when at least this many tenants appear on both sides: 1 to 10000; default 1.');
    expect(GraphLagGte.properties.lagSec.description).toBe('Fires when the knowledge-graph materialiser lags by at least this many seconds: 1 to 604800.');
  });

  it('for each kind, and for the union', () => {
    expect(EmpireCountGte.description).toBe("At least `count` events of the rule's toolset (only of `eventType` when given; only of the rule's tenant when it has one) were received in the window.");
    expect(CrossToolsetJoin.description).toContain('At least `minTenants` source tenants');
    expect(GraphLagGte.description).toContain('The knowledge-graph materialiser lags by at least `lagSec` seconds');
    expect(EmpirePredicate.description).toBe('An empire alert predicate, discriminated by `kind` (docs/empire/alerts.md).');
    expect((EmpirePredicateBody as { description?: string }).description).toBe(
      'One of `empire_count_gte` {count, windowMinutes, eventType?}, `cross_toolset_join` {otherToolset, windowMinutes, eventType?, otherEventType?, minTenants?}, `graph_lag_gte` {lagSec, nodeKind?} (docs/empire/alerts.md).',
    );
  });
});
