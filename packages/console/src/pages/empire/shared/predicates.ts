/** An empire alert predicate as the service stores it (docs/empire/alerts.md). */
export type EmpirePredicate =
  | { kind: 'empire_count_gte'; count: number; windowMinutes: number; eventType?: string }
  | { kind: 'cross_toolset_join'; otherToolset: string; windowMinutes: number; eventType?: string; otherEventType?: string; minTenants?: number }
  | { kind: 'graph_lag_gte'; lagSec: number; nodeKind?: string };

export const PREDICATE_KINDS = [
  { kind: 'empire_count_gte', label: 'At least N events in a window' },
  { kind: 'cross_toolset_join', label: 'Tenants seen in this and another toolset' },
  { kind: 'graph_lag_gte', label: 'Knowledge graph lagging' },
] as const;

export const NODE_KINDS = ['Tenant', 'Fingerprint', 'Cluster', 'Vendor', 'Toolset', 'EmpireEvent', 'Incident', 'Key', 'Attestation'] as const;

/** The rule's condition in a sentence. */
export function describePredicate(p: { kind: string } & Record<string, unknown>): string {
  const of = (eventType: unknown) => (typeof eventType === 'string' ? ` of type ${eventType}` : '');
  switch (p.kind) {
    case 'empire_count_gte':
      return `≥ ${String(p.count)} events${of(p.eventType)} in ${String(p.windowMinutes)} min`;
    case 'cross_toolset_join':
      return `≥ ${String(p.minTenants ?? 1)} tenant(s) with events${of(p.eventType)} here and${of(p.otherEventType)} in ${String(p.otherToolset)} within ${String(p.windowMinutes)} min`;
    case 'graph_lag_gte':
      return `graph materialiser ${typeof p.nodeKind === 'string' ? `(${p.nodeKind}) ` : ''}behind by ≥ ${String(p.lagSec)} s`;
    default:
      return p.kind;
  }
}
