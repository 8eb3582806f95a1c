import {
  CHAIN_VERIFY_MAX_AGE_DAYS,
  CHAOS_RECOVERY_MAX_AGE_DAYS,
  DRILL_MAX_AGE_DAYS,
  LISTED_MAX,
  type PredicateKey,
  RESTORE_MAX_AGE_DAYS,
  SUBPROCESSOR_REVIEW_MAX_AGE_DAYS,
  TOKEN_MAX_IDLE_DAYS,
  TRIAGE_DECISION_MAX_HOURS,
} from './predicates.ts';

/**
 * What the predicates read from the live system, through the owning domains' services (wired in
 * ../wiring.ts). Every read is an index probe, a head or a count over a small table: an evaluation
 * costs the same on a database holding a million honeypot events as on an empty one (bench
 * `compliance-evaluate`). The one exception is region parity: one fan-out to the active regions
 * through the bridge, bounded by its timeout and concurrency (federation).
 */
export interface ComplianceSources {
  adminTokenConfigured: boolean;
  allowPrivateOutbound: boolean;
  tokenHygiene(idleBefore: Date, listedMax: number): Promise<{
    liveTokens: number;
    idleCount: number;
    idle: { prefix: string; name: string; createdAt: string; lastUsedAt: string | null }[];
    firstStart: { prefix: string; name: string; createdAt: string; lastUsedAt: string | null }[];
  }>;
  /** The newest `audit.verify-chain` operator record: when, and what it found (its `after`). */
  latestChainVerification(): Promise<{ at: Date; after: unknown } | null>;
  chainHeadSeqNo(): Promise<number>;
  pendingIncidentAges(overdueBefore: Date): Promise<{ pending: number; overdue: number; oldestAt: string | null }>;
  subprocessorReviewState(now: Date, maxAgeDays: number, listedMax: number): Promise<{ inUse: number; unreviewedCount: number; unreviewed: { name: string; lastReviewedAt: string | null }[] }>;
  openCostOverruns(minThresholdPct: number, listedMax: number): Promise<{
    count: number;
    rows: { alertId: string; scope: string; scopeKey: string; monthBucket: string; thresholdPct: number; firedAt: string }[];
  }>;
  latestRestoreVerifications(): Promise<{ latest: RecordRow | null; lastOk: RecordRow | null }>;
  latestFailoverDrills(): Promise<{ latest: RecordRow | null; lastOk: RecordRow | null }>;
  signingCoverage(listedMax: number): Promise<{ requireSignedGlobally: boolean; withKeys: number; admittingUnsigned: number; listed: string[] }>;
  /**
   * Open and acknowledged critical drift events (the trust drift inbox): counts and the oldest
   * `listedMax`; null when the deployment has no drift inbox.
   */
  criticalDrift(listedMax: number): Promise<{
    open: number;
    acknowledged: number;
    listed: { id: string; kind: string; source: string; sourceId: string; status: string; openedAt: string }[];
  } | null>;
  /**
   * Chaos runs that measured their recovery (ended ok or sla-breach) at or after `since`: counts and
   * the last of them, with OBSERVATORY_CHAOS_ALLOW; null when the deployment has no chaos domain.
   */
  chaosRecovery(since: Date): Promise<{
    allowedBlastRadii: readonly string[];
    ok: number;
    slaBreach: number;
    latest: { id: string; experimentSlug: string | null; outcome: 'ok' | 'sla-breach'; observedRecoverySec: number | null; recoverySloSec: number; endedAt: string } | null;
  } | null>;
  /** One fan-out of the regions' digest tuples (federation); null when the deployment has no federation. */
  regionDigests(): Promise<{
    currentRegion: string;
    participating: string[];
    failed: { region: string; reason: string }[];
    migrationParity: 'drifted' | 'matched';
    migrationDriftDetails: { migrationDigest: string; regionKey: string }[];
  } | null>;
}

/** A dated record with an outcome (a restore verification, a failover drill), as the recency predicates see it. */
export interface RecordRow {
  id: string;
  at: Date;
  outcome: string;
  subject: string;
}

/**
 * Inputs a deployment may lack (a domain not part of it): their predicates observe
 * `available: false` with why and answer `n/a`, never a pass.
 */
const NO_CHAOS = 'chaos experiments are not part of this deployment, so no recovery has been measured.';
const NO_DRIFT_INBOX = 'the trust drift inbox is not part of this deployment, so open drift events cannot be read.';
const NO_FEDERATION = 'federation across regions is not part of this deployment, so region digests cannot be compared.';

const DAY_MS = 86_400_000;
const record = (r: RecordRow | null) => (r === null ? null : { id: r.id, at: r.at.toISOString(), outcome: r.outcome, subject: r.subject });

/** The observed payload of one predicate at `now`: its whole input, the evaluation time included. */
export async function observe(key: PredicateKey, sources: ComplianceSources, now: Date): Promise<Record<string, unknown>> {
  const asOf = now.toISOString();
  switch (key) {
    case 'admin-token-not-first-start': {
      const { firstStart } = await sources.tokenHygiene(now, LISTED_MAX);
      return {
        asOf,
        adminTokenConfigured: sources.adminTokenConfigured,
        firstStartTokens: firstStart.map((t) => ({ prefix: t.prefix, createdAt: t.createdAt, lastUsedAt: t.lastUsedAt })),
      };
    }
    case 'tokens-expire-or-recently-used': {
      const hygiene = await sources.tokenHygiene(new Date(now.getTime() - TOKEN_MAX_IDLE_DAYS * DAY_MS), LISTED_MAX);
      return { asOf, maxIdleDays: TOKEN_MAX_IDLE_DAYS, liveTokens: hygiene.liveTokens, idleCount: hygiene.idleCount, idle: hygiene.idle };
    }
    case 'outbound-private-addresses-blocked':
      return { asOf, allowPrivateOutbound: sources.allowPrivateOutbound };
    case 'audit-chain-verified': {
      const [last, head] = await Promise.all([sources.latestChainVerification(), sources.chainHeadSeqNo()]);
      const after = (last?.after ?? {}) as { intact?: unknown; walkedCount?: unknown; headSeqNo?: unknown; divergence?: unknown };
      return {
        asOf,
        maxAgeDays: CHAIN_VERIFY_MAX_AGE_DAYS,
        headSeqNo: head > 0 ? String(head) : null,
        lastVerification:
          last === null
            ? null
            : {
                at: last.at.toISOString(),
                intact: after.intact === true,
                walkedCount: Number.isInteger(after.walkedCount) ? after.walkedCount : 0,
                headSeqNo: after.headSeqNo === null || after.headSeqNo === undefined ? null : String(after.headSeqNo),
                divergence: after.divergence ?? null,
              },
      };
    }
    case 'triage-incidents-decided': {
      const ages = await sources.pendingIncidentAges(new Date(now.getTime() - TRIAGE_DECISION_MAX_HOURS * 3_600_000));
      return { asOf, maxWaitHours: TRIAGE_DECISION_MAX_HOURS, pendingIncidents: ages.pending, overdueCount: ages.overdue, oldestPendingAt: ages.oldestAt };
    }
    case 'subprocessors-reviewed': {
      const state = await sources.subprocessorReviewState(now, SUBPROCESSOR_REVIEW_MAX_AGE_DAYS, LISTED_MAX);
      return { asOf, maxAgeDays: SUBPROCESSOR_REVIEW_MAX_AGE_DAYS, inUse: state.inUse, unreviewedCount: state.unreviewedCount, unreviewed: state.unreviewed };
    }
    case 'cost-overruns-acknowledged': {
      const overruns = await sources.openCostOverruns(100, LISTED_MAX);
      return { asOf, openCount: overruns.count, open: overruns.rows };
    }
    case 'restore-verified-7d': {
      const { latest, lastOk } = await sources.latestRestoreVerifications();
      return { asOf, maxAgeDays: RESTORE_MAX_AGE_DAYS, lastOk: record(lastOk), latest: record(latest) };
    }
    case 'failover-drill-90d': {
      const { latest, lastOk } = await sources.latestFailoverDrills();
      return { asOf, maxAgeDays: DRILL_MAX_AGE_DAYS, lastOk: record(lastOk), latest: record(latest) };
    }
    case 'signed-events-required': {
      const coverage = await sources.signingCoverage(LISTED_MAX);
      return {
        asOf,
        requireSignedGlobally: coverage.requireSignedGlobally,
        toolsetsWithKeys: coverage.withKeys,
        admittingUnsigned: coverage.admittingUnsigned,
        admittingUnsignedListed: coverage.listed,
      };
    }
    case 'no-open-critical-drift': {
      const drift = await sources.criticalDrift(LISTED_MAX);
      if (drift === null) return { asOf, available: false, reason: NO_DRIFT_INBOX };
      return { asOf, openCritical: drift.open, acknowledgedCritical: drift.acknowledged, listed: drift.listed };
    }
    case 'federation-region-parity': {
      const fan = await sources.regionDigests();
      if (fan === null) return { asOf, available: false, reason: NO_FEDERATION };
      return {
        asOf,
        currentRegion: fan.currentRegion,
        migrationParity: fan.migrationParity,
        participating: [...fan.participating].sort().slice(0, LISTED_MAX),
        participatingCount: fan.participating.length,
        failed: [...fan.failed].sort((a, b) => (a.region < b.region ? -1 : 1)).slice(0, LISTED_MAX),
        failedCount: fan.failed.length,
        drifted: fan.migrationDriftDetails.slice(0, LISTED_MAX),
      };
    }
    case 'chaos-recovery-within-slo': {
      const record = await sources.chaosRecovery(new Date(now.getTime() - CHAOS_RECOVERY_MAX_AGE_DAYS * DAY_MS));
      if (record === null) return { asOf, available: false, reason: NO_CHAOS };
      return {
        asOf,
        maxAgeDays: CHAOS_RECOVERY_MAX_AGE_DAYS,
        allowedBlastRadii: [...record.allowedBlastRadii],
        okCount: record.ok,
        slaBreachCount: record.slaBreach,
        latest: record.latest,
      };
    }
  }
}
