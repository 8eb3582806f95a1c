import type { AuditLog } from '../../platform/audit/service.ts';
import { chainHeadSeqNo, latestOperatorRecord, operatorRecordsSince } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import type { AnalyticsDomain } from '../analytics/index.ts';
import type { BackupsDomain } from '../backups/index.ts';
import type { ComplianceDomain } from '../compliance/index.ts';
import type { EmpireDomain } from '../empire/index.ts';
import type { FederationReads } from '../federation/index.ts';
import type { GraphDomain } from '../graph/index.ts';
import type { ProvenanceService } from '../provenance/index.ts';
import { complianceFailDetector } from './drift/detectors/compliance-fail.ts';
import { graphDriftDetector } from './drift/detectors/graph-drift.ts';
import { integrityMismatchDetector } from './drift/detectors/integrity-mismatch.ts';
import { regionParityDetector } from './drift/detectors/region-parity.ts';
import { replayDriftDetector } from './drift/detectors/replay-drift.ts';
import { driftEndpoints } from './drift/endpoints.ts';
import { driftJobs } from './drift/jobs.ts';
import type { Detector } from './drift/kinds.ts';
import { createDriftService, type DriftService } from './drift/service.ts';
import { trustSnapshotEndpoints } from './snapshot/endpoints.ts';
import { createTrustSnapshotService, type SnapshotSources, type TrustSnapshotService } from './snapshot/service.ts';

/** How many toolsets the snapshot's signing sentence names at most. */
const SIGNING_LISTED_MAX = 5;

/** The domains whose state the drift detectors and the snapshot read, through their services (docs/federation/README.md, docs/trust/README.md). */
export interface TrustInputs {
  graph: Pick<GraphDomain, 'materialiser'>;
  empire: Pick<EmpireDomain, 'replay' | 'incidents'>;
  provenance: Pick<ProvenanceService, 'signingCoverage'>;
  compliance: Pick<ComplianceDomain, 'catalogue' | 'reads' | 'evaluations'>;
  backups: Pick<BackupsDomain, 'service' | 'crossToolset'>;
  analytics: Pick<AnalyticsDomain, 'rollup'>;
  /** Late bound: federation may be built after trust, or not be part of the deployment (null). */
  federation: () => FederationReads | null;
}

/** The snapshot's sources over the other domains' services. */
export function snapshotSources(db: Db, inputs: TrustInputs): SnapshotSources {
  return {
    async posture() {
      return (await inputs.compliance.reads.posture()).map((p) => ({ framework: p.framework, passing: p.passing, failing: p.failing, badge: p.badge, asOf: p.asOf }));
    },
    graphLagSec: () => inputs.graph.materialiser.lagSec(),
    rollupLagSec: (now) => inputs.analytics.rollup.lagSec(now),
    async restoreVerifications() {
      const { latest, lastOk } = await inputs.backups.service.latestVerifications();
      const record = (v: typeof latest) => (v === null ? null : { at: v.verifiedAt, outcome: v.outcome, subject: `${v.database}, snapshot ${v.snapshotId}` });
      return { latest: record(latest), lastOk: record(lastOk) };
    },
    signingCoverage: () => inputs.provenance.signingCoverage(SIGNING_LISTED_MAX),
    async latestChainVerification() {
      const row = await latestOperatorRecord(db, 'audit.verify-chain');
      if (row === null) return null;
      const after = (row.after ?? {}) as { intact?: unknown; walkedCount?: unknown; headSeqNo?: unknown };
      return {
        at: row.ts,
        intact: after.intact === true,
        walkedCount: Number(after.walkedCount ?? 0),
        headSeqNo: after.headSeqNo === null || after.headSeqNo === undefined ? null : Number(after.headSeqNo),
      };
    },
    chainHeadSeqNo: () => chainHeadSeqNo(db),
    operatorRecordsSince: (since) => operatorRecordsSince(db, since),
    unresolvedIncidents: () => inputs.empire.incidents.unresolvedCounts(),
  };
}

export interface TrustDomain {
  drift: DriftService;
  snapshot: TrustSnapshotService;
  /** What the snapshot reads of the other domains. */
  sources: SnapshotSources;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
}

/** The trust domain: the drift inbox with its detectors (./drift) and the trust snapshot (./snapshot). */
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
  const sources = snapshotSources(db, inputs);
  const snapshot = createTrustSnapshotService({ clock: deps.clock, sources, drift, federation: inputs.federation() });
  return {
    drift,
    snapshot,
    sources,
    endpoints: () => [...driftEndpoints(drift), ...trustSnapshotEndpoints(snapshot)],
    jobs: () => driftJobs(drift),
  };
}
