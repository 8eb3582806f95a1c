import { type FiringMessage, type Period, plural } from '../../../platform/alerting/plan.ts';
import { DEFAULT_MIN_TENANTS, type EmpirePredicate } from './predicates.ts';
import type { JoinedTenant } from './repository.ts';

/**
 * What an empire rule observed over its window, whether its predicate holds, and how a firing is
 * worded (docs/empire/alerts.md, "Predicates" and "Notifications"). Pure: the service reads the
 * observation (repository.ts, the graph lag) and the engine (platform/alerting/engine.ts) runs the
 * rest.
 */

/** Tenants listed in one cross-toolset notification (the count covers all of them). */
export const DETAIL_LIMIT = 20;

/** What was observed for a rule's scope. */
export type Observation =
  | { kind: 'empire_count_gte'; events: number }
  | { kind: 'cross_toolset_join'; total: number; tenants: JoinedTenant[] }
  /** `lagSec` null: the lag is not known (no materialiser). */
  | { kind: 'graph_lag_gte'; lagSec: number | null };

/** Whether the predicate holds for what was observed (an unknown lag never holds). */
export function matches(predicate: EmpirePredicate, observation: Observation): boolean {
  switch (predicate.kind) {
    case 'empire_count_gte':
      return observation.kind === predicate.kind && observation.events >= predicate.count;
    case 'cross_toolset_join':
      return observation.kind === predicate.kind && observation.total > 0 && observation.total >= (predicate.minTenants ?? DEFAULT_MIN_TENANTS);
    case 'graph_lag_gte':
      return observation.kind === predicate.kind && observation.lagSec !== null && observation.lagSec >= predicate.lagSec;
  }
}

/** The notification of a firing: a title and sentence for people, `details` for machines. */
export function describeFiring(
  rule: { id: string; name: string; toolset: string | null; tenant: string | null },
  predicate: EmpirePredicate,
  observation: Observation,
  scope: Period,
  now: Date,
): FiringMessage {
  const from = scope.from.toISOString();
  const to = scope.to.toISOString();
  const toolset = rule.toolset ?? 'every toolset';
  const forTenant = rule.tenant === null ? '' : ` for tenant ${rule.tenant}`;
  const base = { toolset: rule.toolset, tenant: rule.tenant, rule: { id: rule.id, name: rule.name }, predicate };
  if (observation.kind === 'empire_count_gte' && predicate.kind === 'empire_count_gte') {
    const what = predicate.eventType === undefined ? 'event' : `${predicate.eventType} event`;
    return {
      title: `${rule.name}: ${plural(observation.events, what)} on ${toolset}${forTenant}`,
      text: `${plural(observation.events, what)} of ${toolset}${forTenant} ${observation.events === 1 ? 'was' : 'were'} received in the ${predicate.windowMinutes} minutes to ${to}, at least the rule's ${predicate.count}.`,
      severity: 'warning',
      details: { ...base, scope: { from, to }, observed: { events: observation.events } },
    };
  }
  if (observation.kind === 'cross_toolset_join' && predicate.kind === 'cross_toolset_join') {
    const mine = predicate.eventType === undefined ? toolset : `${toolset} (${predicate.eventType})`;
    const other = predicate.otherEventType === undefined ? predicate.otherToolset : `${predicate.otherToolset} (${predicate.otherEventType})`;
    const listed = observation.tenants.slice(0, 5).map((t) => `${t.tenant} (${t.events} + ${t.otherEvents})`);
    const more = observation.total > listed.length ? ` and ${observation.total - listed.length} more` : '';
    return {
      title: `${rule.name}: ${plural(observation.total, 'tenant')} in both ${toolset} and ${predicate.otherToolset}`,
      text: `${plural(observation.total, 'tenant')} sent events to both ${mine} and ${other} in the ${predicate.windowMinutes} minutes to ${to} (the rule needs ${predicate.minTenants ?? DEFAULT_MIN_TENANTS}): ${listed.join(', ')}${more}.`,
      severity: 'warning',
      details: { ...base, scope: { from, to }, observed: { total: observation.total, tenants: observation.tenants.slice(0, DETAIL_LIMIT) } },
    };
  }
  if (observation.kind === 'graph_lag_gte' && predicate.kind === 'graph_lag_gte' && observation.lagSec !== null) {
    const of = predicate.nodeKind === undefined ? '' : ` for ${predicate.nodeKind} nodes`;
    return {
      title: `${rule.name}: knowledge graph ${observation.lagSec} s behind${of}`,
      text: `The knowledge-graph materialiser was ${plural(observation.lagSec, 'second')} behind${of} at ${now.toISOString()}, at least the rule's ${predicate.lagSec}.`,
      severity: 'warning',
      details: { ...base, observed: { lagSec: observation.lagSec, at: now.toISOString() } },
    };
  }
  throw new Error(`observation ${observation.kind} does not belong to predicate ${predicate.kind}`);
}
