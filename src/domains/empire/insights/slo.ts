import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { toolsetReach, type ToolsetCaller } from '../../../platform/http/auth.ts';
import { HOUR_MS } from './dashboard.ts';
import * as repo from './repository.ts';

/**
 * The empire ingest SLO (spec B group 2, `{v1}/empire/slo`): per toolset, the outcomes and latency
 * of its ingest requests in the window, and a badge (docs/empire/README.md, "Ingest SLO").
 */

export const EMPIRE_SLO_WINDOWS = { '1h': HOUR_MS, '24h': 24 * HOUR_MS, '7d': 168 * HOUR_MS } as const;
export type EmpireSloWindow = keyof typeof EMPIRE_SLO_WINDOWS;

/**
 * The badge thresholds. A toolset is judged only on at least `minSamples` requests: fewer say too
 * little (one refused request of three would be red). `green` needs both the ok rate and the p95
 * latency inside the first bounds, `yellow` inside the second; anything worse is `red`.
 */
export const SLO_BADGE_THRESHOLDS = {
  minSamples: 10,
  green: { okRatePct: 99, p95Ms: 250 },
  yellow: { okRatePct: 95, p95Ms: 1000 },
} as const;

export type Badge = 'green' | 'yellow' | 'red' | 'unknown';

export function sloBadge(row: { totalSamples: number; okRatePct: number | null; p95Ms: number | null }): Badge {
  if (row.totalSamples < SLO_BADGE_THRESHOLDS.minSamples || row.okRatePct === null || row.p95Ms === null) return 'unknown';
  const within = (bound: { okRatePct: number; p95Ms: number }) => row.okRatePct! >= bound.okRatePct && row.p95Ms! <= bound.p95Ms;
  if (within(SLO_BADGE_THRESHOLDS.green)) return 'green';
  if (within(SLO_BADGE_THRESHOLDS.yellow)) return 'yellow';
  return 'red';
}

export interface SloRow {
  toolset: string;
  badge: Badge;
  totalSamples: number;
  okCount: number;
  okRatePct: number | null;
  outcomeBreakdown: { outcome: string; count: number }[];
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export function createSloService(deps: { db: Db; clock: Clock; flushSamples: () => Promise<void> }) {
  const { db, clock } = deps;
  return {
    /**
     * One row per toolset sampled in the last 7 days (of the caller's toolsets when it is bound),
     * sorted by name: a toolset that sent nothing in a shorter window is listed with no samples and
     * the badge `unknown`.
     */
    async slo(requestedWindow: EmpireSloWindow | undefined, caller: ToolsetCaller) {
      const windowName = requestedWindow ?? '24h';
      // This instance's samples are buffered; write them first so the read counts every request answered here.
      await deps.flushSamples();
      const now = clock.now();
      const from = new Date(now.getTime() - EMPIRE_SLO_WINDOWS[windowName]);
      const reach = toolsetReach(caller);
      const [summaries, known] = await Promise.all([
        repo.samplesByToolset(db, from, now, reach),
        repo.sampledToolsets(db, new Date(now.getTime() - EMPIRE_SLO_WINDOWS['7d']), now, reach),
      ]);
      const summaryOf = new Map(summaries.map((s) => [s.toolset, s]));
      const toolsets = [...new Set([...known, ...summaryOf.keys()])].sort();
      const rows = toolsets.map((toolset): SloRow => {
        const s = summaryOf.get(toolset);
        const total = s?.totalSamples ?? 0;
        const okCount = s?.okCount ?? 0;
        const okRatePct = total === 0 ? null : round2((okCount * 100) / total);
        const p = { p50Ms: s?.p50Ms ?? null, p95Ms: s?.p95Ms ?? null, p99Ms: s?.p99Ms ?? null };
        return {
          toolset,
          badge: sloBadge({ totalSamples: total, okRatePct, p95Ms: p.p95Ms }),
          totalSamples: total,
          okCount,
          okRatePct,
          outcomeBreakdown: [...(s?.outcomes ?? [])].sort((a, b) => b.count - a.count || (a.outcome < b.outcome ? -1 : 1)),
          ...p,
        };
      });
      return { window: windowName, windowStartIso: from.toISOString(), thresholds: SLO_BADGE_THRESHOLDS, rows };
    },

    /**
     * Every toolset's ingest requests of the window pooled (the federation's region SLO): the
     * count, the ok rate in percent (two decimals; null without samples) and the exact p95 latency.
     */
    async overall(windowName: EmpireSloWindow) {
      await deps.flushSamples();
      const now = clock.now();
      const s = await repo.samplesOverall(db, new Date(now.getTime() - EMPIRE_SLO_WINDOWS[windowName]), now);
      return { totalSamples: s.totalSamples, okRatePct: s.totalSamples === 0 ? null : round2((s.okCount * 100) / s.totalSamples), p95Ms: s.p95Ms };
    },
  };
}

export type SloService = ReturnType<typeof createSloService>;
