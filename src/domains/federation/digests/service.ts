import type { FastifyBaseLogger } from 'fastify';
import { afterDispatch, type FailedPeer, fanOut, type FanOutPolicy } from '../../../platform/bridge/fanout.ts';
import type { Db } from '../../../platform/db/client.ts';
import { V1 } from '../../../platform/http/registry.ts';
import type { DigestTuple, RegionDigestFanOut } from '../index.ts';
import type { RegionService } from '../regions/service.ts';
import * as repo from './repository.ts';
import {
  complianceDigestOf,
  type ControlOutcome,
  driftDetailOf,
  federationDigestOf,
  migrationDigestOf,
  migrationParityOf,
  NO_GRAPH_DIGEST,
  normalisedTuples,
  readTupleAnswer,
} from './rules.ts';

/**
 * Digest tuples (docs/federation/README.md, "Digests"): this deployment's own, the fan-out over every
 * active region with the federation digest and migration parity, and federation replay.
 */

/** The bridge route a fan-out reads each peer's tuple at. */
export const REGION_DIGEST_PATH = `${V1}/empire/region-digest`;

export interface LocalDigest {
  region: string;
  tuple: DigestTuple;
  /** What each digest was taken over. */
  inputs: {
    migrationsApplied: number;
    graphMaterialisationId: string | null;
    graphMaterialisedAt: string | null;
    complianceControls: number;
    complianceEvaluated: number;
  };
}

export function createDigestService(deps: {
  db: Db;
  regions: RegionService;
  /** The latest completed graph materialisation (graph materialiser `latestDigest`). */
  graphDigest: () => Promise<{ materialisationId: string; digest: string; finishedAt: string } | null>;
  /** Every shipped control's outcome in force (compliance reads `outcomesInForce`). */
  complianceOutcomes: () => Promise<ControlOutcome[]>;
  policy: FanOutPolicy;
  log: FastifyBaseLogger;
}) {
  const { db, regions, policy, log } = deps;

  async function local(): Promise<LocalDigest> {
    const [hashes, graph, outcomes] = await Promise.all([repo.appliedMigrationHashes(db), deps.graphDigest(), deps.complianceOutcomes()]);
    return {
      region: regions.currentRegion,
      tuple: {
        regionKey: regions.currentRegion,
        migrationDigest: migrationDigestOf(hashes),
        graphDigest: graph?.digest ?? NO_GRAPH_DIGEST,
        complianceDigest: complianceDigestOf(outcomes),
      },
      inputs: {
        migrationsApplied: hashes.length,
        graphMaterialisationId: graph?.materialisationId ?? null,
        graphMaterialisedAt: graph?.finishedAt ?? null,
        complianceControls: outcomes.length,
        complianceEvaluated: outcomes.filter((o) => o.outcome !== null).length,
      },
    };
  }

  /** Every active region's tuple (this deployment's in-process, the peers' through the bridge, in parallel). */
  async function fanOutDigest(): Promise<Omit<RegionDigestFanOut, 'failed'> & { failed: FailedPeer[]; own: DigestTuple }> {
    const { peers } = await regions.fanOutTargets();
    // The peers first: they compute in parallel while this deployment computes its own tuple.
    const asking = fanOut(peers, { path: REGION_DIGEST_PATH, policy, log, what: 'region-digest', read: (json, peer) => readTupleAnswer(json, peer.region) });
    if (peers.length > 0) await afterDispatch();
    const [own, asked] = await Promise.all([local(), asking]);
    const tuples = normalisedTuples([own.tuple, ...asked.answered.map((a) => a.value)]);
    return {
      own: own.tuple,
      participating: tuples.map((t) => t.regionKey),
      failed: asked.failed,
      tuples,
      federationDigest: federationDigestOf(tuples),
      ...migrationParityOf(tuples, own.tuple.migrationDigest),
    };
  }

  /**
   * Federation replay: the live fan-out against a pinned federation digest and, when given, the
   * pinned tuples (compared region by region over pinned ∪ live).
   */
  async function replay(input: { pinnedDigest: string; pinnedTuples?: DigestTuple[] | undefined }) {
    const live = await fanOutDigest();
    const pinnedTuples = input.pinnedTuples ?? null;
    return {
      pinnedDigest: input.pinnedDigest,
      liveDigest: live.federationDigest,
      matches: input.pinnedDigest === live.federationDigest,
      participating: live.participating,
      failed: live.failed,
      migrationParity: live.migrationParity,
      pinnedTuplesDigest: pinnedTuples === null ? null : federationDigestOf(pinnedTuples),
      driftDetail: pinnedTuples === null ? [] : driftDetailOf(pinnedTuples, live.tuples),
    };
  }

  return { local, fanOutDigest, replay };
}

export type DigestService = ReturnType<typeof createDigestService>;
