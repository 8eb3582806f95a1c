import { type FiringMessage, type Period, plural } from '../../../platform/alerting/plan.ts';
import type { Predicate } from './predicates.ts';
import type { NewFingerprint, OpenedTarpit } from './repository.ts';

/**
 * What a honeypot rule observed over its scope, whether its predicate holds, and how a firing is
 * worded (docs/honeypot/alerts.md, "Predicates" and "Notifications"). Pure: the service reads the
 * observation (repository.ts) and the engine (platform/alerting/engine.ts) runs the rest.
 */

/** Fingerprints or tarpits listed in one notification (the count covers all of them). */
export const DETAIL_LIMIT = 20;

/** What the database said about a rule's scope. */
export type Observation =
  | { kind: 'liar_rate_above'; events: number; liars: number }
  | { kind: 'event_count_above'; events: number }
  | { kind: 'new_fingerprint_cluster'; total: number; fingerprints: NewFingerprint[] }
  | { kind: 'tarpit_triggered'; total: number; tarpits: OpenedTarpit[] };

/** Whether the predicate holds for what was observed. */
export function matches(predicate: Predicate, observation: Observation): boolean {
  switch (predicate.kind) {
    case 'liar_rate_above': {
      if (observation.kind !== predicate.kind) return false;
      const { events, liars } = observation;
      return events > 0 && events >= (predicate.minEvents ?? 0) && (liars * 100) / events > predicate.pct;
    }
    case 'event_count_above':
      return observation.kind === predicate.kind && observation.events > predicate.count;
    case 'new_fingerprint_cluster':
      return observation.kind === predicate.kind && observation.total > 0;
    case 'tarpit_triggered':
      return observation.kind === predicate.kind && observation.total > 0;
  }
}

const pct1 = (part: number, whole: number) => Math.round((part * 1000) / whole) / 10;

/** The notification of a firing: a title and sentence for people, `details` for machines. */
export function describeFiring(
  rule: { id: string; name: string },
  tenant: string,
  predicate: Predicate,
  observation: Observation,
  scope: Period,
): FiringMessage {
  const from = scope.from.toISOString();
  const to = scope.to.toISOString();
  const base = { tenant, rule: { id: rule.id, name: rule.name }, predicate, scope: { from, to } };
  if (observation.kind === 'liar_rate_above' && predicate.kind === 'liar_rate_above') {
    const rate = pct1(observation.liars, observation.events);
    return {
      title: `${rule.name}: liar rate ${rate}% on ${tenant}`,
      text: `${observation.liars} of ${plural(observation.events, 'event')} received on ${tenant} in the ${predicate.windowMinutes} minutes to ${to} claimed a crawler identity they could not prove (LIAR): ${rate}%, above the rule's ${predicate.pct}%.`,
      severity: 'critical',
      details: { ...base, observed: { events: observation.events, liars: observation.liars, liarRatePct: rate } },
    };
  }
  if (observation.kind === 'event_count_above' && predicate.kind === 'event_count_above') {
    const what = predicate.uaClass === undefined ? 'event' : `${predicate.uaClass} event`;
    return {
      title: `${rule.name}: ${plural(observation.events, what)} on ${tenant}`,
      text: `${plural(observation.events, what)} were received on ${tenant} in the ${predicate.windowMinutes} minutes to ${to}, above the rule's ${predicate.count}.`,
      severity: 'warning',
      details: { ...base, observed: { events: observation.events } },
    };
  }
  if (observation.kind === 'new_fingerprint_cluster' && predicate.kind === 'new_fingerprint_cluster') {
    const listed = observation.fingerprints.slice(0, 5).map((f) => `${f.fingerprintId} (${f.uaClass}, JA4 ${f.ja4 ?? 'none'}, AS ${f.asn ?? 'unknown'})`);
    const more = observation.total > listed.length ? ` and ${observation.total - listed.length} more` : '';
    return {
      title: `${rule.name}: ${plural(observation.total, 'new fingerprint')} on ${tenant}`,
      text: `${plural(observation.total, 'fingerprint')} reached ${plural(predicate.minEvents ?? 1, 'event')} on ${tenant} between ${from} and ${to}: ${listed.join(', ')}${more}.`,
      severity: 'info',
      details: {
        ...base,
        observed: {
          total: observation.total,
          fingerprints: observation.fingerprints.slice(0, DETAIL_LIMIT).map((f) => ({ ...f, uaSample: f.uaSample.slice(0, 300) })),
        },
      },
    };
  }
  if (observation.kind === 'tarpit_triggered' && predicate.kind === 'tarpit_triggered') {
    const listed = observation.tarpits.slice(0, 5).map((t) => `${t.fingerprintId} (${t.reason})`);
    const more = observation.total > listed.length ? ` and ${observation.total - listed.length} more` : '';
    return {
      title: `${rule.name}: ${plural(observation.total, 'tarpit')} opened on ${tenant}`,
      text: `${plural(observation.total, 'fingerprint')} of ${tenant} ${observation.total === 1 ? 'was' : 'were'} tarpitted between ${from} and ${to}: ${listed.join(', ')}${more}.`,
      severity: 'warning',
      details: {
        ...base,
        observed: {
          total: observation.total,
          tarpits: observation.tarpits.slice(0, DETAIL_LIMIT).map((t) => ({
            ...t,
            triggeredAt: t.triggeredAt.toISOString(),
            expiresAt: t.expiresAt.toISOString(),
          })),
        },
      },
    };
  }
  throw new Error(`observation ${observation.kind} does not belong to predicate ${predicate.kind}`);
}
