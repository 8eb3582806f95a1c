import type { FastifyBaseLogger } from 'fastify';
import { afterDispatch, fanOut, type FanOutPolicy } from '../../../platform/bridge/fanout.ts';
import { type ToolsetCaller, toolsetReach } from '../../../platform/http/auth.ts';
import { V1 } from '../../../platform/http/registry.ts';
import type { DashboardService } from '../../empire/index.ts';
import type { RegionService } from '../regions/service.ts';
import { mergeOverviews, readOverviewAnswer } from './rules.ts';

/** The bridge route a fan-out reads each peer's overview at (never `federated=1`). */
export const OVERVIEW_PATH = `${V1}/empire/overview`;
/** A peer's overview answer is read up to this size (one row per toolset, about 300 bytes each). */
export const OVERVIEW_ANSWER_MAX_BYTES = 4 * 1024 * 1024;

export function createFederatedOverviewService(deps: { regions: RegionService; dashboards: DashboardService; policy: FanOutPolicy; log: FastifyBaseLogger }) {
  const { regions, dashboards, policy, log } = deps;
  return {
    /**
     * Every active region's overview merged by toolset. Peers answer every toolset over the
     * bridge; the merged rows are narrowed here to the caller's toolsets when it is bound.
     */
    async federated(caller: ToolsetCaller) {
      const { peers } = await regions.fanOutTargets();
      const asking = fanOut(peers, { path: OVERVIEW_PATH, policy, log, what: 'overview', read: readOverviewAnswer, maxAnswerBytes: OVERVIEW_ANSWER_MAX_BYTES });
      if (peers.length > 0) await afterDispatch();
      const [own, asked] = await Promise.all([dashboards.overview(null), asking]);
      const answered = [...asked.answered].sort((a, b) => (a.region < b.region ? -1 : 1));
      const merged = mergeOverviews([{ region: regions.currentRegion, toolsets: own.toolsets }, ...answered.map((a) => ({ region: a.region, toolsets: a.value }))]);
      const reach = toolsetReach(caller);
      return {
        windowEndIso: own.windowEndIso,
        participatingRegions: [regions.currentRegion, ...answered.map((a) => a.region)],
        failedRegions: asked.failed,
        toolsets: reach === null ? merged : merged.filter((row) => reach.includes(row.toolset)),
      };
    },
  };
}

export type FederatedOverviewService = ReturnType<typeof createFederatedOverviewService>;
