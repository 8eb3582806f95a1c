import { api, unwrap } from '../../../api/client';

/** The federation reads and writes, typed from the served OpenAPI document. */
export const loadRegions = () => unwrap(api.GET('/api/observatory/v1/empire/regions'));
export type RegionRow = Awaited<ReturnType<typeof loadRegions>>['rows'][number];
export const REGION_STATUSES = ['active', 'standby', 'retired'] as const;
export type RegionStatus = (typeof REGION_STATUSES)[number];
/** Fails the console's build when the service's statuses and the form's differ. */
type SameChoices<Listed extends string, Served extends string> = [Exclude<Served, Listed>, Exclude<Listed, Served>] extends [never, never] ? true : never;
export const statusesAreTheServices: SameChoices<RegionStatus, RegionRow['status']> = true;

export type RegionBody = {
  key: string;
  baseUrl: string;
  displayName?: string;
  hostProjectSlug?: string | null;
  databaseHost?: string | null;
  latencyTierSec?: number;
  status?: RegionStatus;
  isPrimary?: boolean;
};
export const upsertRegion = (body: RegionBody) => unwrap(api.POST('/api/observatory/v1/empire/regions', { body }));

export const loadLocalDigest = () => unwrap(api.GET('/api/observatory/v1/empire/region-digest'));
export const checkParity = () => unwrap(api.POST('/api/observatory/v1/empire/region-digest'));
export type Parity = Awaited<ReturnType<typeof checkParity>>;
export type DigestTuple = Parity['tuples'][number];

export type ReplayBody = { pinnedDigest: string; pinnedTuples?: DigestTuple[] };
export const replayFederation = (body: ReplayBody) => unwrap(api.POST('/api/observatory/v1/empire/federation-replay', { body }));
export type FederationReplay = Awaited<ReturnType<typeof replayFederation>>;

export const loadRegionSlo = (local: boolean) =>
  unwrap(api.GET('/api/observatory/v1/empire/region-slo', { params: { query: local ? { local: '1' } : {} } }));
export type RegionSloRow = Awaited<ReturnType<typeof loadRegionSlo>>['rows'][number];

export const loadFederatedOverview = () => unwrap(api.GET('/api/observatory/v1/empire/overview/federated'));
export type FederatedToolset = Awaited<ReturnType<typeof loadFederatedOverview>>['toolsets'][number];
