import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { integerIn, type PredicateProblem, windowIn, WindowMinutes } from '../../../platform/alerting/checks.ts';
import { KindUnionBody } from '../../../platform/http/registry.ts';
import { isNodeKind, NODE_KINDS } from '../../graph/index.ts';
import { isToolsetName, TOOLSET_PATTERN } from '../../../platform/toolset-name.ts';

/**
 * The empire alert predicate union (spec A "Empire alert rule"), discriminated by `kind`. The exact
 * semantics are in docs/empire/alerts.md; in short, at an evaluation that covers events received up
 * to `to`, for a rule of toolset T (and of tenant N when the rule names one):
 *
 * - `empire_count_gte`: at least `count` events of T (of `eventType` when given; of N) were
 *   received in (to − windowMinutes, to];
 * - `cross_toolset_join`: at least `minTenants` distinct source tenants (only N when given) each
 *   have an event of T (of `eventType`) and an event of `otherToolset` (of `otherEventType`)
 *   received in (to − windowMinutes, to];
 * - `graph_lag_gte`: the knowledge-graph materialiser lags by at least `lagSec` seconds (for
 *   `nodeKind` when given, else the worst kind); while the lag is unknown (the graph was never
 *   materialised) the rule does not fire (docs/empire/alerts.md, docs/graph/materialiser.md).
 *
 * The schemas give the shape (wrong shapes are 400 `invalid-body`); `checkPredicate` gives the
 * allowed values (400 `invalid-predicate` with a sentence naming the field). Defaults are filled in
 * by `normalizePredicate`, so a stored predicate always carries every field.
 */

export const COUNT_MAX = 100_000_000;
export const MIN_TENANTS_MAX = 10_000;
export const DEFAULT_MIN_TENANTS = 1;
export const LAG_SEC_MAX = 604_800;
export const EVENT_TYPE_MAX = 128;
/**
 * A `graph_lag_gte` rule that fired stays quiet this long while the lag persists (it has no window
 * of events to cool down over).
 */
export const GRAPH_LAG_RENOTIFY_MINUTES = 60;

const eventType = (what: string) => Type.String({ description: `Count only events of this eventType ${what}: 1 to ${EVENT_TYPE_MAX} characters.` });

export const EmpireCountGte = Type.Object(
  {
    kind: Type.Literal('empire_count_gte'),
    count: Type.Integer({ description: `Fires when at least this many events arrive in the window: 1 to ${COUNT_MAX}.` }),
    windowMinutes: WindowMinutes,
    eventType: Type.Optional(eventType('of the rule\'s toolset')),
  },
  {
    additionalProperties: false,
    description: 'At least `count` events of the rule\'s toolset (only of `eventType` when given; only of the rule\'s tenant when it has one) were received in the window.',
  },
);

export const CrossToolsetJoin = Type.Object(
  {
    kind: Type.Literal('cross_toolset_join'),
    otherToolset: Type.String({ description: `The toolset joined with the rule's own (${TOOLSET_PATTERN}); it must be another toolset.` }),
    windowMinutes: WindowMinutes,
    eventType: Type.Optional(eventType('in the rule\'s toolset')),
    otherEventType: Type.Optional(eventType('in otherToolset')),
    minTenants: Type.Optional(
      Type.Integer({ description: `Fires when at least this many tenants appear on both sides: 1 to ${MIN_TENANTS_MAX}; default ${DEFAULT_MIN_TENANTS}.` }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'At least `minTenants` source tenants (only the rule\'s tenant when it has one) each have an event in the rule\'s toolset (of `eventType`) and an event in `otherToolset` (of `otherEventType`), both received in the window.',
  },
);

export const GraphLagGte = Type.Object(
  {
    kind: Type.Literal('graph_lag_gte'),
    lagSec: Type.Integer({ description: `Fires when the knowledge-graph materialiser lags by at least this many seconds: 1 to ${LAG_SEC_MAX}.` }),
    nodeKind: Type.Optional(Type.String({ description: `The lag of this node kind only, one of ${NODE_KINDS.join(', ')}; the worst kind's when absent.` })),
  },
  {
    additionalProperties: false,
    description:
      'The knowledge-graph materialiser lags by at least `lagSec` seconds (of `nodeKind`, else of the worst kind). While the graph has never been materialised the lag is unknown and the rule does not fire (docs/empire/alerts.md).',
  },
);

const VARIANTS = [EmpireCountGte, CrossToolsetJoin, GraphLagGte] as const;

/** The stored and returned form (after `normalizePredicate`, every defaulted field is present). */
export const EmpirePredicate = Type.Union([...VARIANTS], { description: 'An empire alert predicate, discriminated by `kind` (docs/empire/alerts.md).' });
export type EmpirePredicate = Static<typeof EmpirePredicate>;
export type EmpirePredicateKind = EmpirePredicate['kind'];
export const EMPIRE_PREDICATE_KINDS: readonly EmpirePredicateKind[] = ['empire_count_gte', 'cross_toolset_join', 'graph_lag_gte'];

/** The request form of the same union: the 400 for a wrong shape names the field of the variant `kind` names. */
export const EmpirePredicateBody = KindUnionBody<EmpirePredicate>(VARIANTS, 'One of `empire_count_gte` {count, windowMinutes, eventType?}, `cross_toolset_join` {otherToolset, windowMinutes, eventType?, otherEventType?, minTenants?}, `graph_lag_gte` {lagSec, nodeKind?} (docs/empire/alerts.md).');

const opt = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } => (value === undefined ? {} : ({ [key]: value } as { [P in K]: V }));

/** Fills in the defaults (and drops nothing else), so stored predicates are explicit. */
export function normalizePredicate(p: EmpirePredicate): EmpirePredicate {
  switch (p.kind) {
    case 'empire_count_gte':
      return { kind: p.kind, count: p.count, windowMinutes: p.windowMinutes, ...opt('eventType', p.eventType) };
    case 'cross_toolset_join':
      return {
        kind: p.kind,
        otherToolset: p.otherToolset,
        windowMinutes: p.windowMinutes,
        ...opt('eventType', p.eventType),
        ...opt('otherEventType', p.otherEventType),
        minTenants: p.minTenants ?? DEFAULT_MIN_TENANTS,
      };
    case 'graph_lag_gte':
      return { kind: p.kind, lagSec: p.lagSec, ...opt('nodeKind', p.nodeKind) };
  }
}

const lengthIn = (field: string, value: string | undefined, max: number): PredicateProblem | null =>
  value === undefined || (value.length >= 1 && value.length <= max)
    ? null
    : { field: `predicate.${field}`, human: `predicate.${field} must be 1 to ${max} characters long (got ${value.length}).` };

const nodeKindIn = (value: string | undefined): PredicateProblem | null =>
  value === undefined || isNodeKind(value)
    ? null
    : { field: 'predicate.nodeKind', human: `predicate.nodeKind must be one of: ${NODE_KINDS.join(', ')} (got ${JSON.stringify(value.slice(0, 70))}).` };

/**
 * Why a schema-valid predicate is not allowed for a rule of `toolset`, or null. Rule creation
 * answers 400 invalid-predicate with the sentence.
 */
export function checkPredicate(p: EmpirePredicate, rule: { toolset: string | null }): PredicateProblem | null {
  switch (p.kind) {
    case 'empire_count_gte':
      return integerIn('count', p.count, 1, COUNT_MAX) ?? windowIn(p) ?? lengthIn('eventType', p.eventType, EVENT_TYPE_MAX);
    case 'cross_toolset_join':
      if (!isToolsetName(p.otherToolset)) {
        return {
          field: 'predicate.otherToolset',
          human: `predicate.otherToolset must be a toolset name: 3 to 128 characters, a letter, then letters, digits or - (got ${JSON.stringify(p.otherToolset.slice(0, 140))}).`,
        };
      }
      if (rule.toolset !== null && p.otherToolset === rule.toolset) {
        return {
          field: 'predicate.otherToolset',
          human: `predicate.otherToolset must name another toolset than the rule's own (${rule.toolset}): a join of a toolset with itself is just a count.`,
        };
      }
      return (
        windowIn(p) ??
        lengthIn('eventType', p.eventType, EVENT_TYPE_MAX) ??
        lengthIn('otherEventType', p.otherEventType, EVENT_TYPE_MAX) ??
        (p.minTenants === undefined ? null : integerIn('minTenants', p.minTenants, 1, MIN_TENANTS_MAX))
      );
    case 'graph_lag_gte':
      return integerIn('lagSec', p.lagSec, 1, LAG_SEC_MAX, ' seconds') ?? nodeKindIn(p.nodeKind);
  }
}

/** A stored predicate read back; null when it no longer fits the union (the rule is then skipped and logged). */
export function parseStoredPredicate(value: unknown, rule: { toolset: string | null }): EmpirePredicate | null {
  return Value.Check(EmpirePredicate, value) && checkPredicate(value, rule) === null ? normalizePredicate(value) : null;
}

/**
 * What the shared plan needs (platform/alerting/plan.ts): the sliding window of an event-counting
 * predicate in milliseconds, which is also its cooldown after a firing. `graph_lag_gte` reads no
 * events; its "window" is only the re-notification interval while the lag persists.
 */
export function windowMsOf(p: EmpirePredicate): number {
  return (p.kind === 'graph_lag_gte' ? GRAPH_LAG_RENOTIFY_MINUTES : p.windowMinutes) * 60_000;
}
