import { api, unwrap } from '../../../api/client';

/** The trust reads and writes, typed from the served OpenAPI document. */
export const DRIFT_KINDS = ['graph-drift', 'replay-drift', 'region-parity', 'compliance-fail', 'integrity-mismatch'] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];
export const LIST_STATUSES = ['open', 'acknowledged', 'resolved', 'auto-resolved', 'wont-fix', 'all'] as const;
export type ListStatus = (typeof LIST_STATUSES)[number];
export const RESOLVE_STATUSES = ['resolved', 'auto-resolved', 'wont-fix'] as const;
export type ResolveStatus = (typeof RESOLVE_STATUSES)[number];

export const loadDrift = (filter: { status: ListStatus; kind: DriftKind | null; sinceHours: string | null }) =>
  unwrap(
    api.GET('/api/observatory/v1/trust/drift', {
      params: { query: { status: filter.status, ...(filter.kind ? { kind: filter.kind } : {}), ...(filter.sinceHours ? { sinceHours: filter.sinceHours } : {}), limit: '500' } },
    }),
  );
export type DriftEvent = Awaited<ReturnType<typeof loadDrift>>['events'][number];
export const scanDrift = () => unwrap(api.POST('/api/observatory/v1/trust/drift', { body: { action: 'auto-open' } }));
export type Scan = Awaited<ReturnType<typeof scanDrift>>;
export const ackDrift = (id: string, notes: string) =>
  unwrap(api.POST('/api/observatory/v1/trust/drift/{id}/ack', { params: { path: { id } }, body: notes ? { notes } : {} }));
export const resolveDrift = (id: string, status: ResolveStatus, notes: string) =>
  unwrap(api.POST('/api/observatory/v1/trust/drift/{id}/resolve', { params: { path: { id } }, body: { status, ...(notes ? { notes } : {}) } }));

/** Fails the console's build when the service's list of choices and the page's differ. */
type SameChoices<Listed extends string, Served extends string> = [Exclude<Served, Listed>, Exclude<Listed, Served>] extends [never, never] ? true : never;
export const kindsAreTheServices: SameChoices<DriftKind, DriftEvent['kind']> = true;
export const statusesAreTheServices: SameChoices<Exclude<ListStatus, 'all'>, DriftEvent['status']> = true;

export const loadSnapshot = () => unwrap(api.GET('/api/observatory/v1/trust/snapshot'));
export type Snapshot = Awaited<ReturnType<typeof loadSnapshot>>;
export type Dimension = Snapshot['dimensions'][number];
