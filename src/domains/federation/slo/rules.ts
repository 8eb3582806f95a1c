import { type Badge, sloBadge } from '../../empire/index.ts';

/**
 * The region SLO's pure rules (docs/federation/README.md, "Region SLO"): the worst lag and the badge.
 */

/** A region's lag is `yellow` up to this many times its latency tier, `red` beyond. */
export const LAG_YELLOW_TIER_FACTOR = 4;

export type ReplayParity = 'drifted' | 'matched' | 'unknown';

/** The worst of the lags that are known (seconds); null when none is. */
export function worstLagOf(lags: readonly (number | null)[]): number | null {
  const known = lags.filter((l): l is number => l !== null);
  return known.length === 0 ? null : Math.max(...known);
}

/** The lag badge against the region's latency tier: green within it, yellow within 4×, red beyond, unknown when no lag is known. */
export function lagBadgeOf(worstLagSec: number | null, latencyTierSec: number): Badge {
  if (worstLagSec === null) return 'unknown';
  if (worstLagSec <= latencyTierSec) return 'green';
  if (worstLagSec <= LAG_YELLOW_TIER_FACTOR * latencyTierSec) return 'yellow';
  return 'red';
}

const RANK: Record<Badge, number> = { unknown: 0, green: 1, yellow: 2, red: 3 };

/**
 * The region's badge: the worst of its lag badge and its ingest badge (the empire ingest SLO's
 * thresholds over every toolset pooled; `unknown` under its minimum samples, then left out), at
 * least `yellow` while its migrations differ from the caller's; `unknown` when nothing is known.
 */
export function regionBadgeOf(row: {
  worstLagSec: number | null;
  latencyTierSec: number;
  ingestSamples24h: number;
  okRatePct: number | null;
  p95LatencyMs: number | null;
  replayParity: ReplayParity;
}): Badge {
  const parts: Badge[] = [
    lagBadgeOf(row.worstLagSec, row.latencyTierSec),
    sloBadge({ totalSamples: row.ingestSamples24h, okRatePct: row.okRatePct, p95Ms: row.p95LatencyMs }),
    row.replayParity === 'drifted' ? 'yellow' : 'unknown',
  ];
  return parts.reduce((worst, b) => (RANK[b] > RANK[worst] ? b : worst), 'unknown' as Badge);
}
