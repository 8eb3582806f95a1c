import type { FastifyBaseLogger } from 'fastify';
import { afterDispatch, fanOut, type FanOutPolicy, type FailedPeer } from '../../../platform/bridge/fanout.ts';
import { V1 } from '../../../platform/http/registry.ts';
import type { Badge } from '../../empire/index.ts';
import type { DigestService } from '../digests/service.ts';
import type { RegionService, RegionStatus, RegionView } from '../regions/service.ts';
import { regionBadgeOf, type ReplayParity, worstLagOf } from './rules.ts';

/**
 * The region SLO (docs/federation/README.md, "Region SLO"): this deployment's row from its own figures,
 * and with a fan-out every active region's row as the region answers it over the bridge (`local=1`).
 */

export const REGION_SLO_LOCAL_PATH = `${V1}/empire/region-slo?local=1`;

export interface RegionSloRow {
  regionKey: string;
  displayName: string;
  isPrimary: boolean;
  status: RegionStatus;
  p95LatencyMs: number | null;
  okRatePct: number | null;
  ingestSamples24h: number;
  graphLagSec: number | null;
  replayParity: ReplayParity;
  migrationDigest: string;
  worstLagSec: number | null;
  latencyTierSec: number;
  badge: Badge;
}

/** This deployment's measured figures (wired from the empire ingest SLO, the graph and the rollups). */
export interface RegionFigures {
  /** Every toolset's ingest requests of the last 24 hours pooled. */
  ingest24h(): Promise<{ totalSamples: number; okRatePct: number | null; p95Ms: number | null }>;
  /** The graph's worst lag over its node kinds (null: never materialised). */
  graphLagSec(): Promise<number | null>;
  /** The other derived-data lags /metrics reports (the honeypot dashboard and analytics rollups). */
  rollupLagsSec(): Promise<(number | null)[]>;
}

const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const numOrNull = (v: unknown) => v === null || num(v);

/** A peer's `local=1` answer read as its own row; null when it is not one. */
export function readSloAnswer(json: unknown, region: string): Omit<RegionSloRow, 'displayName' | 'isPrimary' | 'status' | 'latencyTierSec' | 'badge' | 'replayParity'> | null {
  const rows = (json as { rows?: unknown } | null)?.rows;
  if (!Array.isArray(rows) || rows.length !== 1) return null;
  const r = rows[0] as Record<string, unknown>;
  if (r.regionKey !== region || typeof r.migrationDigest !== 'string' || !/^[0-9a-f]{64}$/.test(r.migrationDigest)) return null;
  if (!numOrNull(r.p95LatencyMs) || !numOrNull(r.okRatePct) || !numOrNull(r.graphLagSec) || !numOrNull(r.worstLagSec) || !num(r.ingestSamples24h)) return null;
  return {
    regionKey: region,
    p95LatencyMs: r.p95LatencyMs as number | null,
    okRatePct: r.okRatePct as number | null,
    ingestSamples24h: r.ingestSamples24h as number,
    graphLagSec: r.graphLagSec as number | null,
    migrationDigest: r.migrationDigest,
    worstLagSec: r.worstLagSec as number | null,
  };
}

export function createRegionSloService(deps: { regions: RegionService; digests: DigestService; figures: RegionFigures; policy: FanOutPolicy; log: FastifyBaseLogger }) {
  const { regions, digests, figures, policy, log } = deps;

  /** The registry's view of a region joined to its measured figures; the badge against the registry's tier. */
  function rowOf(view: RegionView, measured: NonNullable<ReturnType<typeof readSloAnswer>>, replayParity: ReplayParity): RegionSloRow {
    const row = {
      ...measured,
      displayName: view.displayName,
      isPrimary: view.isPrimary,
      status: view.status,
      latencyTierSec: view.latencyTierSec,
      replayParity,
    };
    return { ...row, badge: regionBadgeOf(row) };
  }

  async function measureLocal() {
    const [ingest, graphLagSec, rollups, own] = await Promise.all([figures.ingest24h(), figures.graphLagSec(), figures.rollupLagsSec(), digests.local()]);
    return {
      regionKey: regions.currentRegion,
      p95LatencyMs: ingest.p95Ms,
      okRatePct: ingest.okRatePct,
      ingestSamples24h: ingest.totalSamples,
      graphLagSec,
      migrationDigest: own.tuple.migrationDigest,
      worstLagSec: worstLagOf([graphLagSec, ...rollups]),
    };
  }

  /** `local=1`: this deployment's row alone; its replay parity is `unknown` (it compares with no peer). */
  async function localRows(): Promise<{ rows: RegionSloRow[]; failed: FailedPeer[] }> {
    const [self, measured] = await Promise.all([regions.current(), measureLocal()]);
    return { rows: [rowOf(self, measured, 'unknown')], failed: [] };
  }

  /**
   * Every active region's row (this deployment first, then the peers that answered, by key); a
   * region's replay parity compares its migration digest with this deployment's.
   */
  async function federatedRows(): Promise<{ rows: RegionSloRow[]; failed: FailedPeer[] }> {
    const { self, peers } = await regions.fanOutTargets();
    const asking = fanOut(peers, { path: REGION_SLO_LOCAL_PATH, policy, log, what: 'region-slo', read: (json, peer) => readSloAnswer(json, peer.region) });
    if (peers.length > 0) await afterDispatch();
    const [measured, asked] = await Promise.all([measureLocal(), asking]);
    const views = new Map(peers.map((p) => [p.region, p.view]));
    const peerRows = asked.answered
      .map((a) => rowOf(views.get(a.region)!, a.value, a.value.migrationDigest === measured.migrationDigest ? 'matched' : 'drifted'))
      .sort((a, b) => (a.regionKey < b.regionKey ? -1 : 1));
    return { rows: [rowOf(self, measured, 'matched'), ...peerRows], failed: asked.failed };
  }

  return { localRows, federatedRows };
}

export type RegionSloService = ReturnType<typeof createRegionSloService>;
