/**
 * The trust snapshot's rules (docs/trust/README.md, "Trust snapshot"): every cut-off in one constant, and
 * pure functions from observed inputs to badges and the weighted score. The service gathers the
 * inputs; nothing here reads the database or the clock.
 */

export const DIMENSION_KEYS = ['audit', 'drift', 'freshness', 'incidents', 'integrity', 'posture'] as const;
export type DimensionKey = (typeof DIMENSION_KEYS)[number];

export const SNAPSHOT_BADGES = ['green', 'yellow', 'red', 'unknown'] as const;
export type SnapshotBadge = (typeof SNAPSHOT_BADGES)[number];

/** A check inside a dimension; `n/a` does not apply here (no toolset has a key, no federation) and is left out. */
export type CheckBadge = SnapshotBadge | 'n/a';

export const SNAPSHOT_RULES = {
  /** Score weights (they sum to 100). */
  weights: { integrity: 30, posture: 25, freshness: 15, incidents: 15, audit: 10, drift: 5 } satisfies Record<DimensionKey, number>,
  /** Points a badge earns out of 100 in the score; unknown earns none and its weight is left out. */
  points: { green: 100, yellow: 50, red: 0 },
  /** Score badge: green at or above `green`, yellow at or above `yellow`, red below. */
  scoreBadge: { green: 90, yellow: 70 },
  /** Below this share (percent) of the weight carried by known dimensions, the score's badge (and the overall badge) is unknown. */
  minCoveragePct: 60,
  freshness: {
    /** Graph lag (worst node kind), as the graph SLO: green up to 300 s, yellow up to 1800 s. */
    graphLagSec: { green: 300, yellow: 1800 },
    /** Analytics warehouse lag (oldest source watermark; the rollup runs every 15 minutes). */
    rollupLagSec: { green: 1800, yellow: 7200 },
    /** Age of the newest restore verification that ended ok (the backup-verify job runs nightly). */
    backupVerifiedAgeSec: { green: 2 * 86_400, yellow: 7 * 86_400 },
  },
  audit: {
    /** Age of the latest audit chain verification: green up to 7 days (as the compliance control), yellow up to 30. */
    chainVerifiedAgeSec: { green: 7 * 86_400, yellow: 30 * 86_400 },
  },
  /** Window of `recentAudits24h` and `driftEvents24h`. */
  recentWindowSec: 86_400,
  /** The fan-out of federation digests is given up after this long (parity then unknown). */
  federationTimeoutMs: 10_000,
} as const;

type Widen<T> = T extends number ? number : { readonly [K in keyof T]: Widen<T[K]> };
/** The shape of SNAPSHOT_RULES with plain numbers (tests pass other cut-offs). */
export type SnapshotRules = Widen<typeof SNAPSHOT_RULES>;

export type Severities = Record<'critical' | 'major' | 'minor', number>;

const RANK: Record<SnapshotBadge, number> = { green: 0, unknown: 1, yellow: 2, red: 3 };

/** Green, yellow or red for a value against {green, yellow} upper bounds; unknown for null. */
export function thresholdBadge(value: number | null, cut: { green: number; yellow: number }): SnapshotBadge {
  if (value === null) return 'unknown';
  if (value <= cut.green) return 'green';
  if (value <= cut.yellow) return 'yellow';
  return 'red';
}

/**
 * A dimension's badge from its checks: `n/a` checks are left out; unknown when no check has
 * evidence; else the worst known check, and a green over partial evidence (some check unknown)
 * is only yellow.
 */
export function combine(checks: readonly CheckBadge[]): SnapshotBadge {
  const applicable = checks.filter((c): c is SnapshotBadge => c !== 'n/a');
  const known = applicable.filter((c) => c !== 'unknown');
  if (known.length === 0) return 'unknown';
  const worst = known.reduce((a, b) => (RANK[b] > RANK[a] ? b : a));
  if (worst === 'green' && applicable.length > known.length) return 'yellow';
  return worst;
}

/** Red with any critical, yellow with any major or minor, green with none (open and acknowledged drift events; unresolved incidents). */
export function severityBadge(counts: Severities): SnapshotBadge {
  if (counts.critical > 0) return 'red';
  if (counts.major + counts.minor > 0) return 'yellow';
  return 'green';
}

/** A compliance framework's posture badge as a check: manual-review is yellow. */
export function postureCheck(badge: string): SnapshotBadge {
  if (badge === 'green' || badge === 'yellow' || badge === 'red') return badge;
  if (badge === 'manual-review') return 'yellow';
  return 'unknown';
}

export interface ScoreRow {
  dimension: DimensionKey;
  weight: number;
  badge: SnapshotBadge;
  /** Points this dimension adds to the score (weights renormalised over known dimensions), one decimal. */
  contribution: number;
}

export interface Score {
  score: number;
  badge: SnapshotBadge;
  breakdown: ScoreRow[];
  /** Share of the weight carried by known dimensions, percent. */
  coveragePct: number;
}

/**
 * The weighted score, 0–100: each known dimension earns weight × points(badge) / 100; unknown
 * dimensions are left out and the weights of the others renormalised to 100. No known dimension:
 * score 0. The badge follows scoreBadge, and is unknown below minCoveragePct of known weight.
 */
export function scoreOf(badges: Record<DimensionKey, SnapshotBadge>, rules: SnapshotRules = SNAPSHOT_RULES): Score {
  const keys = (Object.keys(rules.weights) as DimensionKey[]).sort((a, b) => rules.weights[b] - rules.weights[a]);
  const knownWeight = keys.filter((k) => badges[k] !== 'unknown').reduce((s, k) => s + rules.weights[k], 0);
  const raw = keys.map((k) => {
    const badge = badges[k];
    const value = badge === 'unknown' || knownWeight === 0 ? 0 : (rules.weights[k] * rules.points[badge]) / knownWeight;
    return { dimension: k, weight: rules.weights[k], badge, value };
  });
  const total = raw.reduce((s, r) => s + r.value, 0);
  const score = Math.round(total);
  const coveragePct = knownWeight;
  const badge: SnapshotBadge =
    coveragePct < rules.minCoveragePct ? 'unknown' : score >= rules.scoreBadge.green ? 'green' : score >= rules.scoreBadge.yellow ? 'yellow' : 'red';
  return {
    score,
    badge,
    coveragePct,
    breakdown: raw.map(({ value, ...r }) => ({ ...r, contribution: Math.round(value * 10) / 10 })),
  };
}

/**
 * The overall badge: red when any dimension is red; unknown when the known dimensions carry less
 * than minCoveragePct of the weight; yellow when any dimension is yellow or unknown; green only
 * when all six are green.
 */
export function overallBadgeOf(badges: Record<DimensionKey, SnapshotBadge>, coveragePct: number, rules: SnapshotRules = SNAPSHOT_RULES): SnapshotBadge {
  const all = Object.values(badges);
  if (all.includes('red')) return 'red';
  if (coveragePct < rules.minCoveragePct) return 'unknown';
  if (all.includes('yellow') || all.includes('unknown')) return 'yellow';
  return 'green';
}
