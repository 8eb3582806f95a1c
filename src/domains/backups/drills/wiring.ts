import type { AuditLog } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Config } from '../../../platform/config.ts';
import type { Db } from '../../../platform/db/client.ts';
import type { BridgeTokens } from '../../../platform/faults/index.ts';
import type { Endpoint } from '../../../platform/http/registry.ts';
import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import type { FastifyBaseLogger } from 'fastify';
import { crossToolsetEndpoints } from '../cross-toolset/endpoints.ts';
import { crossToolsetJobs } from '../cross-toolset/jobs.ts';
import { createCrossToolsetService, type CrossToolsetService } from '../cross-toolset/service.ts';
import type { BackupService } from '../service.ts';
import { drillEndpoints } from './endpoints.ts';
import { drillJobs } from './jobs.ts';
import { rehearsalOf } from './rehearsal.ts';
import { createDrillService, type DrillService } from './service.ts';

/**
 * Failover drills and the cross-toolset restore view, built on the backups service: what the
 * backups domain's wiring adds to its own endpoints and jobs.
 */
export interface DrillsAndCrossToolset {
  drills: DrillService;
  crossToolset: CrossToolsetService;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
}

export function createDrillsAndCrossToolset(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Config;
  log: FastifyBaseLogger;
  backups: BackupService;
  /** What the cross-toolset check sends to peers is read at each check (a rotation rehearsal switches it). */
  bridgeTokens: BridgeTokens;
}): DrillsAndCrossToolset {
  const rehearsal = rehearsalOf(deps.backups);
  const drills = createDrillService({
    db: deps.db,
    clock: deps.clock,
    audit: deps.audit,
    rehearsal,
    region: deps.config.region,
    dataLossTargetSec: deps.config.drills.dataLossTargetSec,
  });
  const crossToolset = createCrossToolsetService({
    db: deps.db,
    clock: deps.clock,
    audit: deps.audit,
    log: deps.log,
    rehearsal,
    bridgeToken: () => deps.bridgeTokens.outgoing(),
    timeoutMs: deps.config.crossToolset.timeoutMs,
    peerHosts: deps.config.crossToolset.peerHosts,
    minIntervalSec: deps.config.crossToolset.minIntervalSec,
    policy: { allowPrivate: deps.config.outbound.allowPrivate, allowedPorts: deps.config.outbound.allowedPorts },
  });
  return {
    drills,
    crossToolset,
    endpoints: () => [...drillEndpoints(drills), ...crossToolsetEndpoints(crossToolset)],
    jobs: () => [...drillJobs(drills), ...crossToolsetJobs(crossToolset)],
  };
}
