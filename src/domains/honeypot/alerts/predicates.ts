import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { integerIn, type PredicateProblem, windowIn, WindowMinutes } from '../../../platform/alerting/checks.ts';
import { KindUnionBody } from '../../../platform/http/registry.ts';
import { UA_CLASS_VALUES } from '../vendors/classify.ts';

/**
 * The honeypot alert predicate union (spec D6 `predicate`), discriminated by `kind`. The exact
 * semantics are in docs/honeypot/alerts.md; in short, at an evaluation that covers events received
 * up to `to`:
 *
 * - `liar_rate_above`: of the events received in (to − windowMinutes, to], at least `minEvents`,
 *   and more than `pct` percent of them are `LIAR`;
 * - `event_count_above`: more than `count` events (of class `uaClass` when given) were received in
 *   (to − windowMinutes, to];
 * - `new_fingerprint_cluster`: some fingerprint of the tenant reached its `minEvents`-th event in
 *   this evaluation's period (with the default 1: a fingerprint seen for the first time);
 * - `tarpit_triggered`: a tarpit was opened for the tenant in this evaluation's period.
 *
 * The schemas give the shape (wrong shapes are 400 `invalid-body`); `checkPredicate` gives the
 * allowed values (400 `invalid-predicate` with a sentence). Defaults are filled in by
 * `normalizePredicate`, so a stored predicate always carries every field.
 */

export const DEFAULT_LIAR_MIN_EVENTS = 20;
export const DEFAULT_CLUSTER_MIN_EVENTS = 1;
const LIAR_MIN_EVENTS_MAX = 100_000;
const CLUSTER_MIN_EVENTS_MAX = 1_000;
const COUNT_MAX = 100_000_000;

// `enum` is enforced by the request validator (Ajv); TypeBox's own checks ignore it, so
// `checkPredicate` tests membership again for stored values and direct callers.
const uaClassSchema = Type.String({ enum: [...UA_CLASS_VALUES], description: 'Count only events of this user-agent class (docs/honeypot/vendors.md).' });

export const LiarRateAbove = Type.Object(
  {
    kind: Type.Literal('liar_rate_above'),
    pct: Type.Number({ description: 'Fires when the LIAR share of the window\'s events is above this percentage: 0 ≤ pct < 100.' }),
    windowMinutes: WindowMinutes,
    minEvents: Type.Optional(
      Type.Integer({
        description: `The window must hold at least this many events (of any class) before the rate counts: 1 to ${LIAR_MIN_EVENTS_MAX}; default ${DEFAULT_LIAR_MIN_EVENTS}.`,
      }),
    ),
  },
  { additionalProperties: false, description: 'The share of LIAR events among the events received in the window is above `pct`.' },
);

export const EventCountAbove = Type.Object(
  {
    kind: Type.Literal('event_count_above'),
    count: Type.Integer({ description: `Fires when more than this many events arrive in the window: 0 to ${COUNT_MAX}.` }),
    windowMinutes: WindowMinutes,
    uaClass: Type.Optional(uaClassSchema),
  },
  { additionalProperties: false, description: 'More than `count` events (only those of `uaClass` when it is given) were received in the window.' },
);

export const NewFingerprintCluster = Type.Object(
  {
    kind: Type.Literal('new_fingerprint_cluster'),
    minEvents: Type.Optional(
      Type.Integer({
        description: `A fingerprint counts as new when its minEvents-th event ever arrives: 1 to ${CLUSTER_MIN_EVENTS_MAX}; default ${DEFAULT_CLUSTER_MIN_EVENTS} (its first event).`,
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'A client fingerprint (JA4 + normalised user agent) new to the tenant reached `minEvents` events since the last evaluation.',
  },
);

export const TarpitTriggered = Type.Object(
  { kind: Type.Literal('tarpit_triggered') },
  { additionalProperties: false, description: 'A tarpit was opened for one of the tenant\'s fingerprints since the last evaluation.' },
);

const VARIANTS = [LiarRateAbove, EventCountAbove, NewFingerprintCluster, TarpitTriggered] as const;

/** The stored and returned form (after `normalizePredicate`, every optional field is present). */
export const Predicate = Type.Union([...VARIANTS], { description: 'An alert predicate, discriminated by `kind` (docs/honeypot/alerts.md).' });
export type Predicate = Static<typeof Predicate>;
export type PredicateKind = Predicate['kind'];
export const PREDICATE_KINDS: readonly PredicateKind[] = ['liar_rate_above', 'event_count_above', 'new_fingerprint_cluster', 'tarpit_triggered'];

/** The request form of the same union: the 400 for a wrong shape names the field of the variant `kind` names. */
export const PredicateBody = KindUnionBody<Predicate>(VARIANTS, 'One of `liar_rate_above` {pct, windowMinutes, minEvents?}, `event_count_above` {count, windowMinutes, uaClass?}, `new_fingerprint_cluster` {minEvents?}, `tarpit_triggered` {} (docs/honeypot/alerts.md).');

/** Fills in the defaults, so stored predicates are explicit. */
export function normalizePredicate(p: Predicate): Predicate {
  switch (p.kind) {
    case 'liar_rate_above':
      return { kind: p.kind, pct: p.pct, windowMinutes: p.windowMinutes, minEvents: p.minEvents ?? DEFAULT_LIAR_MIN_EVENTS };
    case 'event_count_above':
      return { kind: p.kind, count: p.count, windowMinutes: p.windowMinutes, ...(p.uaClass === undefined ? {} : { uaClass: p.uaClass }) };
    case 'new_fingerprint_cluster':
      return { kind: p.kind, minEvents: p.minEvents ?? DEFAULT_CLUSTER_MIN_EVENTS };
    case 'tarpit_triggered':
      return { kind: p.kind };
  }
}

/** Why a schema-valid predicate is not allowed, or null. Rule creation answers 400 invalid-predicate. */
export function checkPredicate(p: Predicate): PredicateProblem | null {
  switch (p.kind) {
    case 'liar_rate_above':
      if (!(Number.isFinite(p.pct) && p.pct >= 0 && p.pct < 100)) {
        return {
          field: 'predicate.pct',
          human: `predicate.pct must be at least 0 and below 100 (got ${p.pct}): a liar share cannot be above 100%.`,
        };
      }
      return (
        windowIn(p) ??
        (p.minEvents === undefined ? null : integerIn('minEvents', p.minEvents, 1, LIAR_MIN_EVENTS_MAX))
      );
    case 'event_count_above':
      if (p.uaClass !== undefined && !(UA_CLASS_VALUES as readonly string[]).includes(p.uaClass)) {
        return { field: 'predicate.uaClass', human: `predicate.uaClass must be one of: ${UA_CLASS_VALUES.join(', ')} (got ${p.uaClass}).` };
      }
      return (
        integerIn('count', p.count, 0, COUNT_MAX) ?? windowIn(p)
      );
    case 'new_fingerprint_cluster':
      return p.minEvents === undefined ? null : integerIn('minEvents', p.minEvents, 1, CLUSTER_MIN_EVENTS_MAX);
    case 'tarpit_triggered':
      return null;
  }
}

/** A stored predicate read back; null when it no longer fits the union (it is then skipped and logged). */
export function parseStoredPredicate(value: unknown): Predicate | null {
  return Value.Check(Predicate, value) && checkPredicate(value) === null ? normalizePredicate(value) : null;
}

/** The sliding window of a windowed predicate in milliseconds; null for the incremental kinds. */
export function windowMsOf(p: Predicate): number | null {
  return p.kind === 'liar_rate_above' || p.kind === 'event_count_above' ? p.windowMinutes * 60_000 : null;
}
