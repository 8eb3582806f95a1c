import type { FastifyBaseLogger } from 'fastify';
import type { AuditLog } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import type { BridgeTokens, LatencyFaults, RuntimeFlags } from '../../../platform/faults/index.ts';
import type { Endpoint } from '../../../platform/http/registry.ts';
import { firstOkRunAfter } from '../../../platform/jobs/repository.ts';
import type { EffectLevers } from './effects.ts';
import { runEndpoints } from './endpoints.ts';
import { probeUrlFor } from './probe-url.ts';
import * as repo from './repository.ts';
import { createChaosRunner, type RunGates } from './runner.ts';
import { createRunService } from './service.ts';

/** What the runs need from the rest of the service (built in app.ts; the late-bound ones as functions). */
export interface RunsDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  log: FastifyBaseLogger;
  latencyMs: number;
  faults: { latency: LatencyFaults; flags: RuntimeFlags; bridgeTokens: BridgeTokens };
  database: { setReadOnly(on: boolean): Promise<void> };
  request: EffectLevers['request'];
  /** The registry's endpoints (late bound): a latency probe asks the path of the endpoint its target names. */
  endpoints: () => readonly Endpoint[];
  askPeers: EffectLevers['askPeers'];
  gates: RunGates;
  experimentById(id: string): Promise<repo.ExperimentRow | null>;
  /**
   * Step an open run every second. Always in a deployment, scheduler or not: a run started by hand
   * on an instance without the scheduler must still end its window. Tests step by hand.
   */
  autoStep: boolean;
}

export function createChaosRuns(deps: RunsDeps) {
  const { db, clock } = deps;
  const levers: EffectLevers = {
    latency: deps.faults.latency,
    latencyMs: deps.latencyMs,
    flags: deps.faults.flags,
    bridgeTokens: deps.faults.bridgeTokens,
    database: deps.database,
    request: deps.request,
    probeUrlFor: (target) => probeUrlFor(deps.endpoints(), target),
    askPeers: deps.askPeers,
    async okJobRunAfter(job, after) {
      const row = await firstOkRunAfter(db, job, after);
      return row?.finishedAt ? { finishedAt: row.finishedAt } : null;
    },
    probeWrite: (run) => repo.probeWrite(db, run.id, clock.now()),
  };
  const runner = createChaosRunner({ db, clock, log: deps.log.child({ domain: 'chaos' }), levers, gates: deps.gates, autoStep: deps.autoStep });
  const service = createRunService({ db, clock, audit: deps.audit, runner, experimentById: deps.experimentById });
  return {
    runner,
    service,
    endpoints: () => runEndpoints(service),
    jobs: () => [service.scheduleJob],
  };
}

export type ChaosRuns = ReturnType<typeof createChaosRuns>;
