import type { FastifyBaseLogger } from 'fastify';
import type { AuditLog } from '../../platform/audit/service.ts';
import type { FanOutPolicy } from '../../platform/bridge/fanout.ts';
import type { BridgeTokens } from '../../platform/faults/index.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { Resolver } from '../../platform/outbound/safe-fetch.ts';
import type { ComplianceReads } from '../compliance/index.ts';
import type { DashboardService } from '../empire/index.ts';
import type { GraphMaterialiser } from '../graph/index.ts';
import { digestEndpoints } from './digests/endpoints.ts';
import { createDigestService, type DigestService } from './digests/service.ts';
import type { FederationReads } from './index.ts';
import { federatedOverviewEndpoints } from './overview/endpoints.ts';
import { createFederatedOverviewService, type FederatedOverviewService } from './overview/service.ts';
import { regionEndpoints } from './regions/endpoints.ts';
import { createRegionService, type RegionService } from './regions/service.ts';
import { regionSloEndpoints } from './slo/endpoints.ts';
import { createRegionSloService, type RegionFigures, type RegionSloService } from './slo/service.ts';

export interface FederationDomain {
  /** What other domains read (index.ts): the current region, the local tuple, the fan-out. */
  reads: FederationReads;
  regions: RegionService;
  digests: DigestService;
  slo: RegionSloService;
  overview: FederatedOverviewService;
  endpoints(): Endpoint[];
}

/**
 * Federation (docs/federation/README.md): the regions registry, digest tuples and their fan-out through
 * the bridge, federation replay, the region SLO and the federated overview. Built after the graph
 * and compliance, whose latest digest and evaluations it reads.
 */
export function createFederationDomain(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Config;
  log: FastifyBaseLogger;
  graph: Pick<GraphMaterialiser, 'latestDigest' | 'lagSec'>;
  compliance: Pick<ComplianceReads, 'outcomesInForce'>;
  dashboards: DashboardService;
  /** The measured figures of this deployment's region SLO row, besides the graph lag. */
  figures: Omit<RegionFigures, 'graphLagSec'>;
  /** The bridge tokens (platform/faults/bridge-tokens.ts): what fan-outs send is read at each call. */
  bridgeTokens: BridgeTokens;
  /** Replaces DNS in fan-out calls (tests). */
  resolve?: Resolver;
}): FederationDomain {
  const { db, clock, audit, config, log } = deps;
  const policy: FanOutPolicy = {
    token: () => deps.bridgeTokens.outgoing(),
    peerHosts: config.crossToolset.peerHosts,
    allowPrivate: config.outbound.allowPrivate,
    allowedPorts: config.outbound.allowedPorts,
    timeoutMs: config.federation.timeoutMs,
    concurrency: config.federation.concurrency,
    ...(deps.resolve ? { resolve: deps.resolve } : {}),
  };
  const regions = createRegionService({ db, clock, audit, currentRegion: config.region, publicUrl: config.publicUrl, policy });
  const digests = createDigestService({
    db,
    regions,
    graphDigest: () => deps.graph.latestDigest(),
    complianceOutcomes: () => deps.compliance.outcomesInForce(),
    policy,
    log,
  });
  const slo = createRegionSloService({ regions, digests, figures: { ...deps.figures, graphLagSec: () => deps.graph.lagSec() }, policy, log });
  const overview = createFederatedOverviewService({ regions, dashboards: deps.dashboards, policy, log });
  const reads: FederationReads = {
    currentRegion: config.region,
    localTuple: async () => (await digests.local()).tuple,
    async fanOutDigest() {
      const { own, ...answer } = await digests.fanOutDigest();
      void own;
      return answer;
    },
  };
  return {
    reads,
    regions,
    digests,
    slo,
    overview,
    endpoints: () => [...regionEndpoints(regions), ...digestEndpoints(digests), ...regionSloEndpoints(slo), ...federatedOverviewEndpoints(overview)],
  };
}
