import { canonicalJson, sha256Hex } from '../../../platform/crypto.ts';
import type { DigestTuple, MigrationParity } from '../index.ts';

/**
 * The pure rules of federation digests (docs/federation/README.md, "Digests"): every function here is a
 * function of its arguments, with no clock and no database.
 */

/** The graph digest of a deployment that has no completed graph materialisation yet. */
export const NO_GRAPH_DIGEST = sha256Hex('observatory-graph-digest:none');

/**
 * The migration digest: SHA-256 of the applied migrations' hashes (drizzle's
 * `__drizzle_migrations.hash`, the SHA-256 of each migration file), in the order they were applied,
 * one per line. Two deployments share it exactly when they applied the same migrations in the same order.
 */
export function migrationDigestOf(hashes: readonly string[]): string {
  return sha256Hex(hashes.map((h) => `${h}\n`).join(''));
}

/** One control's outcome in force, as the compliance digest takes it. */
export interface ControlOutcome {
  framework: string;
  controlId: string;
  /** `pass`, `fail`, `manual-review`, `n/a`, or null before the control was first evaluated. */
  outcome: string | null;
}

/**
 * The compliance digest: SHA-256 of the RFC 8785 canonical JSON of {framework: {controlId:
 * outcome}} over every control of every shipped framework (null for one never evaluated). Times,
 * summaries and evaluation ids are left out, so an unchanged posture gives an unchanged digest
 * whenever it was evaluated.
 */
export function complianceDigestOf(outcomes: readonly ControlOutcome[]): string {
  const byFramework: Record<string, Record<string, string | null>> = {};
  for (const o of outcomes) (byFramework[o.framework] ??= {})[o.controlId] = o.outcome;
  return sha256Hex(canonicalJson(byFramework));
}

const byRegionKey = (a: DigestTuple, b: DigestTuple) => (a.regionKey < b.regionKey ? -1 : a.regionKey > b.regionKey ? 1 : 0);

/** Tuples reduced to their four members (a peer's extra members are dropped) and sorted by regionKey. */
export function normalisedTuples(tuples: readonly DigestTuple[]): DigestTuple[] {
  return tuples
    .map((t) => ({ regionKey: t.regionKey, migrationDigest: t.migrationDigest, graphDigest: t.graphDigest, complianceDigest: t.complianceDigest }))
    .sort(byRegionKey);
}

/** The federation digest: SHA-256 of the canonical JSON array of the tuples, sorted by regionKey. */
export function federationDigestOf(tuples: readonly DigestTuple[]): string {
  return sha256Hex(canonicalJson(normalisedTuples(tuples)));
}

/**
 * Migration parity: `matched` when every tuple carries this deployment's migration digest,
 * otherwise `drifted` with the regions that differ (sorted by regionKey).
 */
export function migrationParityOf(
  tuples: readonly DigestTuple[],
  ownMigrationDigest: string,
): { migrationParity: MigrationParity; migrationDriftDetails: { migrationDigest: string; regionKey: string }[] } {
  const migrationDriftDetails = normalisedTuples(tuples)
    .filter((t) => t.migrationDigest !== ownMigrationDigest)
    .map((t) => ({ migrationDigest: t.migrationDigest, regionKey: t.regionKey }));
  return { migrationParity: migrationDriftDetails.length === 0 ? 'matched' : 'drifted', migrationDriftDetails };
}

export interface DriftDetail {
  regionKey: string;
  drifted: boolean;
  live: DigestTuple | null;
  pinned: DigestTuple | null;
}

/**
 * Federation replay's per-region comparison over pinned ∪ live region keys (sorted): a region is
 * drifted when it is on one side only or its tuples differ in any member.
 */
export function driftDetailOf(pinned: readonly DigestTuple[], live: readonly DigestTuple[]): DriftDetail[] {
  const p = new Map(normalisedTuples(pinned).map((t) => [t.regionKey, t]));
  const l = new Map(normalisedTuples(live).map((t) => [t.regionKey, t]));
  const keys = [...new Set([...p.keys(), ...l.keys()])].sort();
  return keys.map((regionKey) => {
    const a = p.get(regionKey) ?? null;
    const b = l.get(regionKey) ?? null;
    const drifted = a === null || b === null || canonicalJson(a) !== canonicalJson(b);
    return { regionKey, drifted, live: b, pinned: a };
  });
}

const HEX64 = /^[0-9a-f]{64}$/;
const REGION_KEY = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** A peer's `{region, tuple}` answer read as a tuple of that region; null when it is not one. */
export function readTupleAnswer(json: unknown, expectedRegion: string): DigestTuple | null {
  if (json === null || typeof json !== 'object') return null;
  const tuple = (json as { tuple?: unknown }).tuple as Record<string, unknown> | undefined;
  if (tuple === undefined || tuple === null || typeof tuple !== 'object') return null;
  const { regionKey, migrationDigest, graphDigest, complianceDigest } = tuple;
  if (typeof regionKey !== 'string' || !REGION_KEY.test(regionKey) || regionKey !== expectedRegion) return null;
  for (const d of [migrationDigest, graphDigest, complianceDigest]) if (typeof d !== 'string' || !HEX64.test(d)) return null;
  return { regionKey, migrationDigest: migrationDigest as string, graphDigest: graphDigest as string, complianceDigest: complianceDigest as string };
}
