import type { AuditLog } from '../../platform/audit/service.ts';
import { latestOperatorRecord } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import type { BackupsDomain } from '../backups/wiring.ts';
import type { ComplianceDomain } from '../compliance/wiring.ts';
import type { EmpireDomain } from '../empire/wiring.ts';
import type { FederationReads } from '../federation/index.ts';
import type { GraphDomain } from '../graph/wiring.ts';
import { complianceFailDetector } from './drift/detectors/compliance-fail.ts';
import { graphDriftDetector } from './drift/detectors/graph-drift.ts';
import { integrityMismatchDetector } from './drift/detectors/integrity-mismatch.ts';
import { regionParityDetector } from './drift/detectors/region-parity.ts';
import { replayDriftDetector } from './drift/detectors/replay-drift.ts';
import { driftEndpoints } from './drift/endpoints.ts';
import { driftJobs } from './drift/jobs.ts';
import type { Detector } from './drift/kinds.ts';
import { createDriftService, type DriftService } from './drift/service.ts';

export interface TrustDomain {
  drift: DriftService;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
}

/** The domains whose state the drift detectors read (docs/federation.md, "Drift inbox and detectors"). */
export interface TrustInputs {
  graph: Pick<GraphDomain, 'materialiser'>;
  empire: Pick<EmpireDomain, 'replay'>;
  compliance: Pick<ComplianceDomain, 'catalogue' | 'reads' | 'evaluations'>;
  backups: Pick<BackupsDomain, 'service' | 'crossToolset'>;
  /** Late bound: federation may be built after trust, or not be part of the deployment (null). */
  federation: () => FederationReads | null;
}

/** The trust domain: the drift inbox and its detectors (the trust snapshot lives in ./snapshot). */
export function createTrustDomain(deps: { db: Db; clock: Clock; audit: AuditLog; inputs: TrustInputs }): TrustDomain {
  const { db, inputs } = deps;
  const compliance = {
    frameworkKeys: () => inputs.compliance.catalogue.frameworks.map((f) => f.framework),
    framework: (key: string) => inputs.compliance.reads.framework(key),
    replay: (id: string) => inputs.compliance.evaluations.replay(id),
  };
  const detectors: Detector[] = [
    graphDriftDetector(inputs.graph.materialiser),
    replayDriftDetector({ empire: inputs.empire.replay, compliance }),
    regionParityDetector(inputs.federation),
    complianceFailDetector(compliance),
    integrityMismatchDetector({
      async latestChainVerification() {
        const row = await latestOperatorRecord(db, 'audit.verify-chain');
        return row === null ? null : { at: row.ts, after: row.after };
      },
      latestVerificationPerDatabase: (limit) => inputs.backups.service.latestVerificationPerDatabase(limit),
      crossToolsetRows: async () => (await inputs.backups.crossToolset.view(null)).rows,
    }),
  ];
  const drift = createDriftService({ db, clock: deps.clock, audit: deps.audit, detectors: () => detectors });
  return {
    drift,
    endpoints: () => driftEndpoints(drift),
    jobs: () => driftJobs(drift),
  };
}
