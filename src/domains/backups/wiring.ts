import type { FastifyBaseLogger } from 'fastify';
import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Database } from '../../platform/db/client.ts';
import type { BridgeTokens } from '../../platform/faults/index.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import { createFileStores, type FileStores } from '../../platform/storage/files.ts';
import type { CrossToolsetService } from './cross-toolset/service.ts';
import type { DrillService } from './drills/service.ts';
import { createDrillsAndCrossToolset } from './drills/wiring.ts';
import { createBackupEngine } from './engines.ts';
import { backupEndpoints } from './endpoints.ts';
import { backupJobs } from './jobs.ts';
import { type BackupService, createBackupService } from './service.ts';
import { createBackupTurn } from './turn.ts';

export interface BackupsDomain {
  /** takeSnapshot, verifySnapshot, latestSnapshot, listSnapshots, … (service.ts). */
  service: BackupService;
  /** Region failover drills (drills/service.ts). */
  drills: DrillService;
  /** The cross-toolset restore view; the drift inbox reads its stored rows (`view(null)` asks no toolset). */
  crossToolset: CrossToolsetService;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
}

/**
 * Builds the backups domain (docs/backups/README.md). It takes the Database, not only its Db: dumps need
 * the driver. `files`: the service's file store, shared with the compliance evidence bundles; made
 * from the configuration when not given.
 */
export function createBackupsDomain(deps: {
  database: Database;
  clock: Clock;
  audit: AuditLog;
  config: Config;
  log: FastifyBaseLogger;
  /** The bridge tokens the cross-toolset check sends (platform/faults/bridge-tokens.ts). */
  bridgeTokens: BridgeTokens;
  files?: FileStores;
}): BackupsDomain {
  const service = createBackupService({
    db: deps.database.db,
    clock: deps.clock,
    audit: deps.audit,
    config: deps.config.backups,
    engine: createBackupEngine(deps.database, deps.config.backups),
    stores: deps.files ?? createFileStores(deps.config.backups, deps.log),
    turn: createBackupTurn(deps.database),
  });
  // Failover drills and the cross-toolset view (drills/, cross-toolset/) restore through this service.
  const drills = createDrillsAndCrossToolset({ db: deps.database.db, clock: deps.clock, audit: deps.audit, config: deps.config, log: deps.log, backups: service, bridgeTokens: deps.bridgeTokens });
  return {
    service,
    drills: drills.drills,
    crossToolset: drills.crossToolset,
    endpoints: () => [...backupEndpoints(service), ...drills.endpoints()],
    jobs: () => [...backupJobs(service), ...drills.jobs()],
  };
}
