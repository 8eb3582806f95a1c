import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import { experimentEndpoints } from './experiments/endpoints.ts';
import { createExperimentService, type ExperimentService, type TargetProblem } from './experiments/service.ts';
import { type TargetCatalogue, targetProblem } from './experiments/targets.ts';
import { freezeEndpoints } from './freeze/endpoints.ts';
import { createFreezeService, type FreezeService } from './freeze/service.ts';
import type { ChaosReads } from './index.ts';
import { createRecoveryService, type RecoveryService } from './recovery/service.ts';

export interface ChaosDomain {
  experiments: ExperimentService;
  freeze: FreezeService;
  recovery: RecoveryService;
  /** What other domains read of chaos (compliance: the recovery record). */
  reads: ChaosReads;
  endpoints(): Endpoint[];
}

export interface ChaosDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Config;
  /**
   * What experiment targets may name in this deployment, read at each registration (late bound:
   * the registry's endpoints and the scheduler's jobs are assembled after the domains).
   */
  targets: { [K in keyof TargetCatalogue]: () => TargetCatalogue[K] };
  /** Overrides the target check built from `targets` (targets.ts). */
  targetProblem?: TargetProblem;
  /** Ends the run in progress as aborted, undoing it (the freeze calls it before it writes). */
  abortOpenRun(reason: string): Promise<void>;
}

/** The chaos domain (docs/chaos.md): the experiment registry, the freeze switch and the recovery record. */
export function createChaosDomain(deps: ChaosDeps): ChaosDomain {
  const { db, clock, audit } = deps;
  const checkTarget: TargetProblem =
    deps.targetProblem ??
    ((kind, target) => targetProblem(kind, target, { endpointIds: deps.targets.endpointIds(), jobs: deps.targets.jobs(), flagNames: deps.targets.flagNames() }));
  const experiments = createExperimentService({ db, clock, audit, targetProblem: checkTarget });
  const freeze = createFreezeService({ db, clock, audit, abortOpenRun: deps.abortOpenRun });
  const recovery = createRecoveryService({ db });
  return {
    experiments,
    freeze,
    recovery,
    reads: {
      recoveryRecord: (since) => recovery.recoveryRecord(since),
      allowedBlastRadii: () => deps.config.chaos.allow,
    },
    endpoints: () => [...experimentEndpoints(experiments), ...freezeEndpoints(freeze)],
  };
}
