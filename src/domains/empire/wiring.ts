import type { FastifyBaseLogger } from 'fastify';
import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import { createEd25519Verifier } from '../../platform/ed25519-pool.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import type { DomainMetrics } from '../../platform/metrics.ts';
import type { Outbound } from '../../platform/outbound/service.ts';
import type { ProvenanceService } from '../provenance/index.ts';
import { createEmpireAlertService, empireAlertJobs, type EmpireAlertService, type GraphLagProvider, unknownGraphLag } from './alerts/service.ts';
import { empireAlertEndpoints } from './alerts/endpoints.ts';
import { empireEventEndpoints } from './events/endpoints.ts';
import { createEventService, type EventService } from './events/service.ts';
import { empireForecastEndpoints } from './forecast/endpoints.ts';
import { createForecaster, type Forecaster, forecastJobs, type ModelBudget } from './forecast/service.ts';
import { empireIncidentEndpoints } from './incidents/endpoints.ts';
import { createIncidentService, type IncidentService } from './incidents/service.ts';
import { empireIngestEndpoints } from './ingest/endpoints.ts';
import { ingestJobs } from './ingest/jobs.ts';
import { createEmpireIngest, type EmpireIngest } from './ingest/service.ts';
import { createDashboardService, type DashboardService } from './insights/dashboard.ts';
import { empireInsightEndpoints, type FederatedOverviewProvider } from './insights/endpoints.ts';
import { createReplayService, type ReplayService } from './insights/replay.ts';
import { createSloService, type SloService } from './insights/slo.ts';

export interface EmpireDomain {
  ingest: EmpireIngest;
  /** Lineage and notes of stored events; triage's agents walk lineage (`lineage`). */
  events: EventService;
  forecaster: Forecaster;
  /** Empire alert rules; `createWithin` is also how triage turns an accepted proposal into a rule. */
  alerts: EmpireAlertService;
  /** Empire incidents; triage opens one from an accepted proposal (`openWithin`). */
  incidents: IncidentService;
  /** The dashboard and overview reads (the federated overview merges every region's overview). */
  dashboards: DashboardService;
  /** The ingest SLO (the federation's region SLO pools it over every toolset). */
  slo: SloService;
  /** Replay of stored events; the drift inbox's replay-drift detector reads `mismatches`. */
  replay: ReplayService;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
  /** Writes buffered ingest samples; after HTTP has drained. */
  close(): Promise<void>;
}

/** Builds the empire layer (toolset ingest, spec D4) over the provenance it admits and attests with. */
export function createEmpireDomain(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Config;
  log: FastifyBaseLogger;
  outbound: Outbound;
  /** Keys, policies and attestations (the provenance domain's service). */
  provenance: ProvenanceService;
  /** The knowledge-graph lag graph_lag_gte rules read (the graph materialiser's lagSec); unknown, so they never fire, without it. */
  graphLag?: GraphLagProvider;
  /**
   * The model budget scheduled forecaster runs wait on (triage's budget, spec A "Triage budget");
   * never deferred without it. On-demand runs are not deferred by it.
   */
  modelBudget?: ModelBudget;
  /** Counts stored and rejected toolset events; none when absent. */
  metrics?: DomainMetrics;
  /** The federation's merged overview, which `GET {v1}/empire/overview?federated=1` answers (late-bound: federation is built on the empire). */
  federatedOverview?: FederatedOverviewProvider;
}): EmpireDomain {
  const { db, clock, audit, provenance } = deps;
  const forecaster = createForecaster({ db, clock });
  const incidents = createIncidentService({ db, clock, audit });
  const events = createEventService({ db, clock, audit, incidents });
  const verifier = createEd25519Verifier({ threads: deps.config.empire.verifyThreads });
  const alerts = createEmpireAlertService({ db, clock, audit, outbound: deps.outbound, config: deps.config, log: deps.log, graphLag: deps.graphLag ?? unknownGraphLag });
  const ingest = createEmpireIngest({ db, clock, provenance, verifier, log: deps.log, ...(deps.metrics ? { metrics: deps.metrics } : {}) });
  const dashboards = createDashboardService({ db, clock, forecaster });
  const slo = createSloService({ db, clock, flushSamples: ingest.flushSamples });
  const replay = createReplayService({ db, provenance });
  return {
    ingest,
    events,
    forecaster,
    alerts,
    incidents,
    dashboards,
    slo,
    replay,
    jobs: () => [...forecastJobs(forecaster, deps.modelBudget), ...ingestJobs(ingest), ...empireAlertJobs(alerts)],
    // In the order the manifest has always listed them.
    endpoints: () => [
      ...empireIngestEndpoints({ ingest, clock }),
      ...empireEventEndpoints({ events }),
      ...empireForecastEndpoints({ forecaster, clock }),
      ...empireIncidentEndpoints({ incidents }),
      ...empireInsightEndpoints({ dashboards, slo, replay, ...(deps.federatedOverview ? { federatedOverview: deps.federatedOverview } : {}) }),
      ...empireAlertEndpoints({ alerts }),
    ],
    async close() {
      await ingest.close();
      await verifier.close();
    },
  };
}
