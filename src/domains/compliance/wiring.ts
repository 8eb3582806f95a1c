import type { AuditLog } from '../../platform/audit/service.ts';
import { chainHeadSeqNo, latestOperatorRecord } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import { createUrlSigner } from '../../platform/http/signed-url.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import type { FileStores } from '../../platform/storage/files.ts';
import type { BackupsDomain } from '../backups/index.ts';
import type { CostBudgetService } from '../cost/index.ts';
import type { IdentityService } from '../identity/index.ts';
import type { ProvenanceService } from '../provenance/index.ts';
import type { ProposalService, TriageDomain } from '../triage/index.ts';
import type { FederationReads } from '../federation/index.ts';
import type { TrustReads } from '../trust/index.ts';
import type { ChaosReads } from '../chaos/index.ts';
import { bundleEndpoints, evidenceLinks } from './bundles/endpoints.ts';
import { createBundleService, EVIDENCE_LINK_TTL_SEC } from './bundles/service.ts';
import { evaluationEndpoints } from './evaluation/endpoints.ts';
import { evaluationJobs } from './evaluation/jobs.ts';
import type { ComplianceSources } from './evaluation/observe.ts';
import { createEvaluationService, type EvaluationService } from './evaluation/service.ts';
import { type Catalogue, createCatalogue } from './frameworks/catalogue.ts';
import { frameworkEndpoints } from './frameworks/endpoints.ts';
import { createFrameworkService } from './frameworks/service.ts';
import type { ComplianceReads } from './frameworks/views.ts';
import { subprocessorEndpoints } from './subprocessors/endpoints.ts';
import { createSubprocessorService, type SubprocessorService } from './subprocessors/service.ts';
import { narratorEndpoints } from './narrator/endpoints.ts';
import { createNarratorService, type NarratorService } from './narrator/service.ts';

export interface ComplianceDomain {
  catalogue: Catalogue;
  /** Framework reads and posture (what a trust snapshot reads). */
  reads: ComplianceReads;
  evaluations: EvaluationService;
  subprocessors: SubprocessorService;
  narrator: NarratorService;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
}

/** The domains whose live state the predicates read (docs/compliance/README.md, "Controls and predicates"). */
export interface ComplianceInputs {
  identity: IdentityService;
  backups: BackupsDomain;
  costBudgets: CostBudgetService;
  provenance: ProvenanceService;
  triageProposals: ProposalService;
  /** Late bound (trust reads compliance too): the drift inbox, or null when the deployment has none. */
  trust?: () => Pick<TrustReads, 'criticalUnresolved'> | null;
  /** Late bound: the regions' digests, or null when the deployment has no federation. */
  federation?: () => FederationReads | null;
  /** Late bound (chaos is built after compliance): the recovery record, or null when the deployment has no chaos domain. */
  chaos?: () => ChaosReads | null;
}

/**
 * Compliance (docs/compliance/README.md): the shipped frameworks, their hourly evaluation over the live
 * system, overrides, replay and posture, evidence bundles, the narrator and subprocessors.
 */
export function createComplianceDomain(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Config;
  inputs: ComplianceInputs;
  /** The model layer's runs, agent versions and budget: the narrator is a triage agent. */
  triage: Pick<TriageDomain, 'runs' | 'agents' | 'budget'>;
  /** The service's file store, shared with backups: evidence bundles keep their files there. */
  files: FileStores;
  /** The key that signs evidence download links: the same on every instance and across restarts. */
  evidenceLinkKey: Buffer;
}): ComplianceDomain {
  const { db, clock, audit, config, inputs } = deps;
  const catalogue = createCatalogue();
  const subprocessors = createSubprocessorService({ db, clock, audit });
  const sources: ComplianceSources = {
    adminTokenConfigured: config.adminToken !== null,
    allowPrivateOutbound: config.outbound.allowPrivate,
    tokenHygiene: (idleBefore, listedMax) => inputs.identity.tokenHygiene(idleBefore, listedMax),
    async latestChainVerification() {
      const row = await latestOperatorRecord(db, 'audit.verify-chain');
      return row === null ? null : { at: row.ts, after: row.after };
    },
    chainHeadSeqNo: () => chainHeadSeqNo(db),
    pendingIncidentAges: (overdueBefore) => inputs.triageProposals.pendingIncidentAges(overdueBefore),
    subprocessorReviewState: (now, maxAgeDays, listedMax) => subprocessors.reviewState(now, maxAgeDays, listedMax),
    openCostOverruns: (minThresholdPct, listedMax) => inputs.costBudgets.openOverruns(minThresholdPct, listedMax),
    async latestRestoreVerifications() {
      const { latest, lastOk } = await inputs.backups.service.latestVerifications();
      const record = (v: typeof latest) => (v === null ? null : { id: v.id, at: v.verifiedAt, outcome: v.outcome, subject: `${v.database}, snapshot ${v.snapshotId}` });
      return { latest: record(latest), lastOk: record(lastOk) };
    },
    async latestFailoverDrills() {
      const { latest, lastOk } = await inputs.backups.drills.latestFinished();
      const record = (d: typeof latest) => (d === null ? null : { id: d.id, at: d.startedAt, outcome: d.outcome ?? 'running', subject: `region ${d.region}` });
      return { latest: record(latest), lastOk: record(lastOk) };
    },
    signingCoverage: (listedMax) => inputs.provenance.signingCoverage(listedMax),
    async criticalDrift(listedMax) {
      const trust = inputs.trust?.() ?? null;
      return trust === null ? null : trust.criticalUnresolved(listedMax);
    },
    async chaosRecovery(since) {
      const chaos = inputs.chaos?.() ?? null;
      if (chaos === null) return null;
      return { allowedBlastRadii: chaos.allowedBlastRadii(), ...(await chaos.recoveryRecord(since)) };
    },
    async regionDigests() {
      const federation = inputs.federation?.() ?? null;
      if (federation === null) return null;
      const fan = await federation.fanOutDigest();
      return { currentRegion: federation.currentRegion, ...fan };
    },
  };
  const evaluations = createEvaluationService({ db, clock, audit, catalogue, sources, publicUrl: config.publicUrl });
  const reads = createFrameworkService({ catalogue, evaluations });
  const narrator = createNarratorService({ db, clock, reads, triage: deps.triage, publicUrl: config.publicUrl });
  const signer = createUrlSigner({ key: deps.evidenceLinkKey, clock, ttlSec: EVIDENCE_LINK_TTL_SEC });
  const bundles = createBundleService({ db, clock, audit, reads, files: deps.files, link: evidenceLinks(signer, config.publicUrl) });
  return {
    catalogue,
    reads,
    evaluations,
    subprocessors,
    narrator,
    endpoints: () => [
      ...frameworkEndpoints(reads),
      ...evaluationEndpoints(evaluations),
      ...subprocessorEndpoints(subprocessors),
      ...narratorEndpoints(narrator),
      ...bundleEndpoints(bundles, signer),
    ],
    jobs: () => evaluationJobs(evaluations),
  };
}
