import type { FastifyBaseLogger } from 'fastify';
import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import { experimentEndpoints } from './experiments/endpoints.ts';
import { createExperimentService, type ExperimentService, type TargetProblem } from './experiments/service.ts';
import { type TargetCatalogue, targetProblem } from './experiments/targets.ts';
import { freezeEndpoints } from './freeze/endpoints.ts';
import { createFreezeService, type FreezeService } from './freeze/service.ts';
import type { ChaosReads } from './reads.ts';
import { createRecoveryService, type RecoveryService } from './recovery/service.ts';
import { type ChaosRuns, createChaosRuns, type RunsDeps } from './runs/wiring.ts';

export interface ChaosDomain {
  experiments: ExperimentService;
  freeze: FreezeService;
  recovery: RecoveryService;
  /** The runs: the runner that injects and undoes, the list, the schedule's pick. */
  runs: ChaosRuns;
  jobs(): JobDefinition[];
  /** Start-up: nothing injected survives a restart; runs left open by a stopped instance are closed. */
  recoverAtStart(): Promise<void>;
  /** A run held by this instance is undone and ends aborted. */
  close(): Promise<void>;
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
  log: FastifyBaseLogger;
  /** What the runs act through: the fault levers, in-process requests, the peers, the gates' reads. */
  runs: Omit<RunsDeps, 'db' | 'clock' | 'audit' | 'log' | 'latencyMs' | 'gates' | 'experimentById'> & {
    /** Open or acknowledged critical drift events; null when the deployment has no drift inbox. */
    unresolvedCriticalDrift(): Promise<number | null>;
  };
}

/** The chaos domain (docs/chaos/README.md): the experiment registry, the freeze switch and the recovery record. */
export function createChaosDomain(deps: ChaosDeps): ChaosDomain {
  const { db, clock, audit } = deps;
  const checkTarget: TargetProblem =
    deps.targetProblem ??
    ((kind, target) => targetProblem(kind, target, { endpointIds: deps.targets.endpointIds(), jobs: deps.targets.jobs(), flagNames: deps.targets.flagNames() }));
  const experiments = createExperimentService({ db, clock, audit, targetProblem: checkTarget });
  // The freeze aborts through the runner, and the runner's gate reads the freeze: bound late.
  let runs: ChaosRuns | null = null;
  const freeze = createFreezeService({
    db,
    clock,
    audit,
    abortOpenRun: async (reason) => {
      await runs?.runner.abortOpen(reason);
    },
  });
  const recovery = createRecoveryService({ db });
  runs = createChaosRuns({
    experimentById: experiments.row,
    ...deps.runs,
    db,
    clock,
    audit,
    log: deps.log,
    latencyMs: deps.config.chaos.latencyMs,
    gates: {
      allow: deps.config.chaos.allow,
      frozen: async () => {
        const current = await freeze.current();
        return { frozen: current.frozen, reason: current.reason };
      },
      unresolvedCriticalDrift: deps.runs.unresolvedCriticalDrift,
    },
  });
  return {
    experiments,
    freeze,
    recovery,
    runs,
    jobs: () => runs.jobs(),
    recoverAtStart: () => runs.runner.recoverAtStart(),
    close: () => runs.runner.close(),
    reads: {
      recoveryRecord: (since) => recovery.recoveryRecord(since),
      allowedBlastRadii: () => deps.config.chaos.allow,
    },
    endpoints: () => [...experimentEndpoints(experiments), ...runs.endpoints(), ...freezeEndpoints(freeze)],
  };
}
