import { chainHeadSeqNo, latestOperatorRecord, operatorRecordsSince } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { AnalyticsDomain } from '../analytics/wiring.ts';
import type { BackupsDomain } from '../backups/wiring.ts';
import type { ComplianceDomain } from '../compliance/wiring.ts';
import type { EmpireDomain } from '../empire/wiring.ts';
import type { FederationReads } from '../federation/index.ts';
import type { GraphDomain } from '../graph/wiring.ts';
import { trustSnapshotEndpoints } from './snapshot/endpoints.ts';
import { driftCountsOver } from './snapshot/repository.ts';
import { createTrustSnapshotService, type DriftReads, type SnapshotSources, type TrustSnapshotService } from './snapshot/service.ts';

/** How many toolsets the snapshot's signing sentence names at most. */
const SIGNING_LISTED_MAX = 5;

/** The domains the trust snapshot reads, through their services (docs/trust.md, "Trust snapshot"). */
export interface TrustSnapshotInputs {
  compliance: Pick<ComplianceDomain, 'reads'>;
  graph: Pick<GraphDomain, 'materialiser'>;
  analytics: Pick<AnalyticsDomain, 'rollup'>;
  backups: Pick<BackupsDomain, 'service'>;
  empire: Pick<EmpireDomain, 'provenance' | 'incidents'>;
}

/** The snapshot's sources over the other domains' services. */
export function snapshotSources(db: Db, inputs: TrustSnapshotInputs): SnapshotSources {
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
    signingCoverage: () => inputs.empire.provenance.signingCoverage(SIGNING_LISTED_MAX),
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
  snapshot: TrustSnapshotService;
  /** What the snapshot reads of the other domains. */
  sources: SnapshotSources;
  endpoints(): Endpoint[];
}

/**
 * The trust domain (docs/trust.md). `drift`: the drift inbox's counts; until it is wired here the
 * snapshot counts trust_drift_events itself (snapshot/repository.ts). `federation`: null when this
 * deployment has no federation (migration parity then unknown).
 */
export function createTrustDomain(deps: { db: Db; clock: Clock; inputs: TrustSnapshotInputs; federation: FederationReads | null; drift?: DriftReads }): TrustDomain {
  const sources = snapshotSources(deps.db, deps.inputs);
  const snapshot = createTrustSnapshotService({
    clock: deps.clock,
    sources,
    drift: deps.drift ?? driftCountsOver(deps.db),
    federation: deps.federation,
  });
  return { snapshot, sources, endpoints: () => trustSnapshotEndpoints(snapshot) };
}
