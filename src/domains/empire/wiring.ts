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
import { provenanceEndpoints } from '../provenance/endpoints.ts';
import { createProvenanceService, type ProvenanceService } from '../provenance/service.ts';
import { createEmpireAlertService, empireAlertJobs, type EmpireAlertService, type GraphLagProvider, unknownGraphLag } from './alerts/service.ts';
import { empireAlertEndpoints } from './alerts/endpoints.ts';
import { createDashboardService, type DashboardService } from './dashboard.ts';
import { empireIngestEndpoints } from './endpoints.ts';
import { createForecaster, empireJobs, type ForecastDeferral, type Forecaster } from './forecast.ts';
import { empireForecastEndpoints } from './forecast.endpoints.ts';
import { createIncidentService, type IncidentService } from './incidents.ts';
import { createEmpireIngest, type EmpireIngest } from './ingest.ts';
import { createNoteService } from './notes.ts';
import { empireInsightEndpoints } from './insights.endpoints.ts';
import { empireReadEndpoints } from './reads.endpoints.ts';
import { createReplayService, type ReplayService } from './replay.ts';
import { createSloService, type SloService } from './slo.ts';
import type { FederatedOverviewProvider } from './insights.endpoints.ts';

export interface EmpireDomain {
  provenance: ProvenanceService;
  ingest: EmpireIngest;
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

/** Builds the empire layer (toolset ingest, spec D4) and provenance (spec B group 5) it verifies with. */
export function createEmpireDomain(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Config;
  log: FastifyBaseLogger;
  outbound: Outbound;
  /** The knowledge-graph lag graph_lag_gte rules read (the graph materialiser's lagSec); unknown, so they never fire, without it. */
  graphLag?: GraphLagProvider;
  /**
   * Why the scheduled forecaster run is deferred now (the triage budget, spec A "Triage budget"),
   * or null; never deferred without it. On-demand runs are not deferred by it.
   */
  forecastDeferral?: ForecastDeferral;
  /** Counts stored and rejected toolset events; none when absent. */
  metrics?: DomainMetrics;
  /** The federation's merged overview, which `GET {v1}/empire/overview?federated=1` answers (late-bound: federation is built on the empire). */
  federatedOverview?: FederatedOverviewProvider;
}): EmpireDomain {
  const provenance = createProvenanceService({ db: deps.db, clock: deps.clock, audit: deps.audit, requireSignedGlobally: deps.config.empire.requireSignedEvents });
  const forecaster = createForecaster({ db: deps.db, clock: deps.clock });
  const incidents = createIncidentService({ db: deps.db, clock: deps.clock, audit: deps.audit });
  const notes = createNoteService({ db: deps.db, clock: deps.clock, audit: deps.audit });
  const verifier = createEd25519Verifier({ threads: deps.config.empire.verifyThreads });
  const alerts = createEmpireAlertService({ db: deps.db, clock: deps.clock, audit: deps.audit, outbound: deps.outbound, config: deps.config, log: deps.log, graphLag: deps.graphLag ?? unknownGraphLag });
  const ingest = createEmpireIngest({ db: deps.db, clock: deps.clock, provenance, verifier, log: deps.log, ...(deps.metrics ? { metrics: deps.metrics } : {}) });
  const dashboards = createDashboardService({ db: deps.db, clock: deps.clock });
  const slo = createSloService({ db: deps.db, clock: deps.clock, flushSamples: ingest.flushSamples });
  const replay = createReplayService({ db: deps.db, provenance });
  return {
    provenance,
    ingest,
    forecaster,
    alerts,
    incidents,
    dashboards,
    slo,
    replay,
    jobs: () => [...empireJobs(forecaster, ingest, deps.forecastDeferral), ...empireAlertJobs(alerts)],
    endpoints: () => [
      ...empireIngestEndpoints({ ingest, clock: deps.clock }),
      ...empireReadEndpoints({ db: deps.db, notes }),
      ...empireForecastEndpoints({ forecaster, incidents, clock: deps.clock }),
      ...empireInsightEndpoints({ dashboards, slo, replay, ...(deps.federatedOverview ? { federatedOverview: deps.federatedOverview } : {}) }),
      ...empireAlertEndpoints({ alerts }),
      ...provenanceEndpoints(provenance),
    ],
    async close() {
      await ingest.close();
      await verifier.close();
    },
  };
}
