import type { FastifyBaseLogger } from 'fastify';
import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import { createEd25519Verifier } from '../../platform/ed25519-pool.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import { provenanceEndpoints } from '../provenance/endpoints.ts';
import { createProvenanceService, type ProvenanceService } from '../provenance/service.ts';
import { empireIngestEndpoints } from './endpoints.ts';
import { createForecaster, empireJobs, type Forecaster } from './forecast.ts';
import { empireForecastEndpoints } from './forecast.endpoints.ts';
import { createIncidentService } from './incidents.ts';
import { createEmpireIngest, type EmpireIngest } from './ingest.ts';
import { createNoteService } from './notes.ts';
import { empireReadEndpoints } from './reads.endpoints.ts';

export interface EmpireDomain {
  provenance: ProvenanceService;
  ingest: EmpireIngest;
  forecaster: Forecaster;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
  /** Writes buffered ingest samples; after HTTP has drained. */
  close(): Promise<void>;
}

/** Builds the empire layer (toolset ingest, spec D4) and provenance (spec B group 5) it verifies with. */
export function createEmpireDomain(deps: { db: Db; clock: Clock; audit: AuditLog; config: Config; log: FastifyBaseLogger }): EmpireDomain {
  const provenance = createProvenanceService({ db: deps.db, clock: deps.clock, audit: deps.audit });
  const forecaster = createForecaster({ db: deps.db, clock: deps.clock });
  const incidents = createIncidentService({ db: deps.db });
  const notes = createNoteService({ db: deps.db, clock: deps.clock, audit: deps.audit });
  const verifier = createEd25519Verifier({ threads: deps.config.empire.verifyThreads });
  const ingest = createEmpireIngest({ db: deps.db, clock: deps.clock, provenance, verifier, requireSigned: deps.config.empire.requireSignedEvents, log: deps.log });
  return {
    provenance,
    ingest,
    forecaster,
    jobs: () => empireJobs(forecaster),
    endpoints: () => [
      ...empireIngestEndpoints({ ingest, clock: deps.clock }),
      ...empireReadEndpoints({ db: deps.db, notes }),
      ...empireForecastEndpoints({ forecaster, incidents, clock: deps.clock }),
      ...provenanceEndpoints(provenance),
    ],
    async close() {
      await ingest.close();
      await verifier.close();
    },
  };
}
