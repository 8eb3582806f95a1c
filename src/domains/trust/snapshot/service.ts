import type { Clock } from '../../../platform/clock.ts';
import { V1 } from '../../../platform/http/registry.ts';
import type { FederationReads } from '../../federation/index.ts';
import {
  type CheckBadge,
  combine,
  type DimensionKey,
  overallBadgeOf,
  postureCheck,
  type ScoreRow,
  scoreOf,
  type Severities,
  severityBadge,
  SNAPSHOT_RULES,
  type SnapshotBadge,
  type SnapshotRules,
  thresholdBadge,
} from './score.ts';

/**
 * The trust snapshot (docs/trust/README.md, "Trust snapshot"): six dimensions read from the other
 * domains' services, each with a badge, a summary and where to look, the headline numbers and the
 * weighted score. It writes nothing.
 */

/** The drift inbox's counts (the drift service satisfies it). */
export interface DriftReads {
  /** Open and acknowledged events by severity. */
  openDriftCounts(): Promise<{ open: Severities; acknowledged: Severities }>;
  /** Events opened at or after `since`, whatever their status now. */
  openedSince(since: Date): Promise<number>;
}

interface Verified {
  at: Date;
  outcome: string;
  subject: string;
}

/** What the snapshot reads of the other domains, through their services (trust/wiring.ts builds it). */
export interface SnapshotSources {
  /** Compliance posture per framework. */
  posture(): Promise<{ framework: string; passing: number; failing: number; badge: string; asOf: string | null }[]>;
  /** The knowledge graph's worst lag over node kinds; null before the first materialisation. */
  graphLagSec(): Promise<number | null>;
  /** The analytics warehouse's lag; null until every source was rolled once. */
  rollupLagSec(now: Date): Promise<number | null>;
  /** The newest restore verification and the newest that ended ok. */
  restoreVerifications(): Promise<{ latest: Verified | null; lastOk: Verified | null }>;
  /** Toolsets with an active signing key, and those of them still admitting unsigned events. */
  signingCoverage(): Promise<{ requireSignedGlobally: boolean; withKeys: number; admittingUnsigned: number; listed: string[] }>;
  /** The latest audit chain verification. */
  latestChainVerification(): Promise<{ at: Date; intact: boolean; walkedCount: number; headSeqNo: number | null } | null>;
  chainHeadSeqNo(): Promise<number>;
  operatorRecordsSince(since: Date): Promise<number>;
  /** Empire incidents open or acknowledged, by severity. */
  unresolvedIncidents(): Promise<Severities>;
}

export interface DimensionView {
  key: DimensionKey;
  title: string;
  badge: SnapshotBadge;
  summary: string;
  drillIn: string;
  apiDrillIn: string;
}

export interface TrustSnapshot {
  overallBadge: SnapshotBadge;
  dimensions: DimensionView[];
  numbers: {
    postureGreen: number;
    postureFailing: number;
    federationDigest: string | null;
    migrationParity: 'drifted' | 'matched' | 'unknown';
    graphLagSec: number | null;
    openIncidents: number;
    recentAudits24h: number;
    driftEvents24h: number;
  };
  score: { score: number; badge: SnapshotBadge; breakdown: ScoreRow[] };
}

interface Check {
  badge: CheckBadge;
  text: string;
  drillIn: string;
  apiDrillIn: string;
}

const TITLES: Record<DimensionKey, string> = {
  integrity: 'Integrity',
  posture: 'Compliance posture',
  freshness: 'Freshness',
  incidents: 'Incidents',
  audit: 'Audit trail',
  drift: 'Drift',
};

const PLACES: Record<DimensionKey, { drillIn: string; apiDrillIn: string }> = {
  integrity: { drillIn: '/audit', apiDrillIn: `${V1}/audit/chain` },
  posture: { drillIn: '/compliance', apiDrillIn: `${V1}/compliance/posture` },
  freshness: { drillIn: '/empire/graph', apiDrillIn: `${V1}/empire/graph/slo` },
  incidents: { drillIn: '/empire/incidents', apiDrillIn: `${V1}/empire/incidents` },
  audit: { drillIn: '/audit', apiDrillIn: `${V1}/audit/chain` },
  drift: { drillIn: '/trust/drift', apiDrillIn: `${V1}/trust/drift` },
};

const RANK: Record<CheckBadge, number> = { 'n/a': -1, green: 0, unknown: 1, yellow: 2, red: 3 };
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const ageSec = (now: Date, at: Date) => Math.max(0, Math.floor((now.getTime() - at.getTime()) / 1000));
const duration = (sec: number) => (sec < 120 ? `${sec} s` : sec < 7200 ? `${Math.round(sec / 60)} min` : sec < 172_800 ? `${Math.round(sec / 3600)} h` : `${Math.round(sec / 86_400)} days`);
const bySeverity = (c: Severities) => `${c.critical} critical, ${c.major} major, ${c.minor} minor`;

/** A dimension from its checks: the badge by `combine`, the summary their sentences, the drill-in that of the worst check. */
function dimension(key: DimensionKey, checks: Check[]): DimensionView {
  const badge = combine(checks.map((c) => c.badge));
  const worst = checks.reduce<Check | null>((w, c) => (w === null || RANK[c.badge] > RANK[w.badge] ? c : w), null);
  const place = badge === 'green' || worst === null ? PLACES[key] : worst;
  return { key, title: TITLES[key], badge, summary: checks.map((c) => c.text).join(' '), drillIn: place.drillIn, apiDrillIn: place.apiDrillIn };
}

/** The input of a dimension whose domain is not part of this deployment (or failed to answer). */
function missing(key: DimensionKey, what: string): DimensionView {
  return { key, title: TITLES[key], badge: 'unknown', summary: what, ...PLACES[key] };
}

type Fanned = { federationDigest: string; migrationParity: 'drifted' | 'matched'; failed: number; participating: number } | { error: string } | null;

async function fanOut(federation: FederationReads | null, timeoutMs: number): Promise<Fanned> {
  if (federation === null) return null;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    const r = await Promise.race([federation.fanOutDigest(), timeout]);
    return { federationDigest: r.federationDigest, migrationParity: r.migrationParity, failed: r.failed.length, participating: r.participating.length };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

export function createTrustSnapshotService(deps: { clock: Clock; sources: SnapshotSources; drift: DriftReads | null; federation: FederationReads | null; rules?: SnapshotRules }) {
  const { clock, sources, drift, federation } = deps;
  const rules: SnapshotRules = deps.rules ?? SNAPSHOT_RULES;

  return {
    async snapshot(): Promise<TrustSnapshot> {
      const now = clock.now();
      const since = new Date(now.getTime() - rules.recentWindowSec * 1000);
      const [posture, graphLag, rollupLag, restores, signing, chain, head, recentAudits, incidents, driftCounts, driftRecent, fanned] = await Promise.all([
        sources.posture(),
        sources.graphLagSec(),
        sources.rollupLagSec(now),
        sources.restoreVerifications(),
        sources.signingCoverage(),
        sources.latestChainVerification(),
        sources.chainHeadSeqNo(),
        sources.operatorRecordsSince(since),
        sources.unresolvedIncidents(),
        drift?.openDriftCounts() ?? Promise.resolve(null),
        drift?.openedSince(since) ?? Promise.resolve(null),
        fanOut(federation, rules.federationTimeoutMs),
      ]);

      // Integrity: the chain's latest verification, the latest restore verification, signing coverage, migration parity.
      const chainCheck: Check =
        chain === null
          ? { badge: 'unknown', text: 'The audit chain was never verified (POST {v1}/audit/chain/verify).', ...PLACES.audit }
          : chain.intact
            ? { badge: 'green', text: `The audit chain was verified intact at ${chain.at.toISOString()} (${plural(chain.walkedCount, 'fact')}).`, ...PLACES.audit }
            : { badge: 'red', text: `The last verification of the audit chain (${chain.at.toISOString()}) found it broken after ${plural(chain.walkedCount, 'fact')}.`, ...PLACES.audit };
      const restorePlace = { drillIn: '/backups', apiDrillIn: `${V1}/backups/ladder` };
      const restoreCheck: Check =
        restores.latest === null
          ? { badge: 'unknown', text: 'No restore verification is recorded.', ...restorePlace }
          : restores.latest.outcome === 'ok'
            ? { badge: 'green', text: `The latest restore verification (${restores.latest.subject}) ended ok.`, ...restorePlace }
            : { badge: 'red', text: `The latest restore verification (${restores.latest.subject}) at ${restores.latest.at.toISOString()} ended ${restores.latest.outcome}.`, ...restorePlace };
      const signingPlace = { drillIn: '/provenance', apiDrillIn: `${V1}/provenance/keys` };
      const signingCheck: Check =
        signing.withKeys === 0
          ? { badge: 'n/a', text: 'No toolset has an active signing key.', ...signingPlace }
          : signing.requireSignedGlobally || signing.admittingUnsigned === 0
            ? { badge: 'green', text: `${plural(signing.withKeys, 'toolset')} with signing keys refuse unsigned events.`, ...signingPlace }
            : { badge: 'yellow', text: `${plural(signing.admittingUnsigned, 'toolset')} of ${signing.withKeys} with signing keys still admit unsigned events (${signing.listed.join(', ')}).`, ...signingPlace };
      const parityPlace = { drillIn: '/federation/regions', apiDrillIn: `${V1}/empire/regions` };
      const parityCheck: Check =
        fanned === null
          ? { badge: 'n/a', text: 'Federation is not part of this deployment: migration parity is not checked.', ...parityPlace }
          : 'error' in fanned
            ? { badge: 'unknown', text: `The federation digest fan-out failed (${fanned.error}): migration parity is unknown.`, ...parityPlace }
            : fanned.migrationParity === 'matched'
              ? { badge: 'green', text: `Migration digests match across ${plural(fanned.participating, 'region')}${fanned.failed > 0 ? ` (${fanned.failed} did not answer)` : ''}.`, ...parityPlace }
              : { badge: 'red', text: `Migration digests differ between the ${plural(fanned.participating, 'region')} that answered.`, ...parityPlace };
      const integrityChecks = [chainCheck, restoreCheck, signingCheck, parityCheck];
      const integrity =
        integrityChecks.every((c) => c.badge === 'unknown' || c.badge === 'n/a')
          ? missing('integrity', `No integrity evidence yet: ${integrityChecks.map((c) => c.text).join(' ')}`)
          : dimension('integrity', integrityChecks);

      // Posture: every framework's posture badge.
      const postureDim =
        posture.length === 0 || posture.every((f) => postureCheck(f.badge) === 'unknown')
          ? missing('posture', 'Compliance was never evaluated: the hourly compliance-evaluate job has not run yet.')
          : dimension(
              'posture',
              posture.map((f) => ({ badge: postureCheck(f.badge), text: `${f.framework}: ${f.badge}, ${f.passing} passing, ${f.failing} failing${f.asOf ? ` as of ${f.asOf}` : ''}.`, ...PLACES.posture })),
            );

      // Freshness: graph lag, analytics rollup lag, age of the newest ok restore verification.
      const f = rules.freshness;
      const backupAge = restores.lastOk === null ? null : ageSec(now, restores.lastOk.at);
      const freshnessChecks: Check[] = [
        {
          badge: thresholdBadge(graphLag, f.graphLagSec),
          text: graphLag === null ? 'The knowledge graph was never materialised.' : `Graph lag ${duration(graphLag)}.`,
          ...PLACES.freshness,
        },
        {
          badge: thresholdBadge(rollupLag, f.rollupLagSec),
          text: rollupLag === null ? 'The analytics warehouse has not rolled every source yet.' : `Analytics rollup lag ${duration(rollupLag)}.`,
          drillIn: '/analytics',
          apiDrillIn: `${V1}/analytics/metrics`,
        },
        {
          badge: backupAge === null ? (restores.latest === null ? 'unknown' : 'red') : thresholdBadge(backupAge, f.backupVerifiedAgeSec),
          text:
            backupAge === null
              ? restores.latest === null
                ? 'No backup was ever restored and verified.'
                : 'No restore verification ever ended ok.'
              : `The newest verified backup restore is ${duration(backupAge)} old.`,
          ...restorePlace,
        },
      ];
      const freshness = freshnessChecks.every((c) => c.badge === 'unknown')
        ? missing('freshness', `No freshness evidence yet: ${freshnessChecks.map((c) => c.text).join(' ')}`)
        : dimension('freshness', freshnessChecks);

      // Incidents: empire incidents open or acknowledged.
      const openIncidents = incidents.critical + incidents.major + incidents.minor;
      const incidentsDim = dimension('incidents', [
        {
          badge: severityBadge(incidents),
          text: openIncidents === 0 ? 'No empire incident is open or acknowledged.' : `${plural(openIncidents, 'empire incident')} open or acknowledged (${bySeverity(incidents)}).`,
          ...PLACES.incidents,
        },
      ]);

      // Audit: chain verification freshness; operator activity is shown, not graded.
      const chainAge = chain === null ? null : ageSec(now, chain.at);
      const tail = chain === null ? head : Math.max(0, head - (chain.headSeqNo ?? 0));
      const activity = `${plural(recentAudits, 'operator action')} recorded in the last 24 h; ${plural(tail, 'chain fact')} written since the last verification.`;
      const auditDim =
        chainAge === null
          ? missing('audit', `The audit chain was never verified, so its freshness is unknown. ${activity}`)
          : dimension('audit', [
              { badge: thresholdBadge(chainAge, rules.audit.chainVerifiedAgeSec), text: `The audit chain was last verified ${duration(chainAge)} ago. ${activity}`, ...PLACES.audit },
            ]);

      // Drift: open and acknowledged drift events.
      let driftDim: DimensionView;
      if (driftCounts === null) {
        driftDim = missing('drift', 'The drift inbox is not part of this deployment.');
      } else {
        const held = {
          critical: driftCounts.open.critical + driftCounts.acknowledged.critical,
          major: driftCounts.open.major + driftCounts.acknowledged.major,
          minor: driftCounts.open.minor + driftCounts.acknowledged.minor,
        };
        const total = held.critical + held.major + held.minor;
        driftDim = dimension('drift', [
          {
            badge: severityBadge(held),
            text: total === 0 ? 'No drift event is open or acknowledged.' : `${plural(total, 'drift event')} open or acknowledged (${bySeverity(held)}).`,
            ...PLACES.drift,
          },
        ]);
      }

      const dims: Record<DimensionKey, DimensionView> = { audit: auditDim, drift: driftDim, freshness, incidents: incidentsDim, integrity, posture: postureDim };
      const badges = Object.fromEntries(Object.entries(dims).map(([k, v]) => [k, v.badge])) as Record<DimensionKey, SnapshotBadge>;
      const { coveragePct, ...score } = scoreOf(badges, rules);
      const parity = fanned === null || 'error' in fanned ? null : fanned;
      return {
        overallBadge: overallBadgeOf(badges, coveragePct, rules),
        dimensions: (Object.keys(dims) as DimensionKey[]).sort().map((k) => dims[k]),
        numbers: {
          postureGreen: posture.reduce((s, p) => s + p.passing, 0),
          postureFailing: posture.reduce((s, p) => s + p.failing, 0),
          federationDigest: parity?.federationDigest ?? null,
          migrationParity: parity?.migrationParity ?? 'unknown',
          graphLagSec: graphLag,
          openIncidents,
          recentAudits24h: recentAudits,
          driftEvents24h: driftRecent ?? 0,
        },
        score,
      };
    },
  };
}

export type TrustSnapshotService = ReturnType<typeof createTrustSnapshotService>;
