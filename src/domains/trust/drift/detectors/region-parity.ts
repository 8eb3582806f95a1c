import type { FederationReads } from '../../../federation/index.ts';
import type { Breach, Detector } from '../kinds.ts';

export const REGION_SOURCE = 'region';
export const REGION_UNREACHABLE_SOURCE = 'region-unreachable';

/**
 * The migration digest the regions are held to: the one most answering regions report; on a tie,
 * this deployment's own (when it is among the tied), else the smallest digest.
 */
export function referenceDigest(tuples: readonly { regionKey: string; migrationDigest: string }[], currentRegion: string): string | null {
  const counts = new Map<string, number>();
  for (const t of tuples) counts.set(t.migrationDigest, (counts.get(t.migrationDigest) ?? 0) + 1);
  const most = Math.max(0, ...counts.values());
  const tied = [...counts].filter(([, n]) => n === most).map(([d]) => d).sort();
  if (tied.length === 0) return null;
  const own = tuples.find((t) => t.regionKey === currentRegion)?.migrationDigest;
  return own !== undefined && tied.includes(own) ? own : tied[0]!;
}

/**
 * region-parity: one fan-out of the digest tuples to every active region (FederationReads, the
 * bridge's timeout and concurrency bound it). A region whose migration digest differs from the
 * reference (referenceDigest) breaches, critical: subject `region` / `<regionKey>`. A region that
 * could not be asked breaches too, major: its parity cannot be asserted; subject
 * `region-unreachable` / `<regionKey>`. Without a federation domain the detector reports an error.
 */
export function regionParityDetector(federation: () => FederationReads | null): Detector {
  return {
    kind: 'region-parity',
    async scan() {
      const reads = federation();
      if (reads === null) throw new Error('federation across regions is not part of this deployment, so region digests cannot be compared');
      const fan = await reads.fanOutDigest();
      const breaches: Breach[] = [];
      const reference = referenceDigest(fan.tuples, reads.currentRegion);
      for (const t of fan.tuples) {
        if (reference === null || t.migrationDigest === reference) continue;
        breaches.push({
          source: REGION_SOURCE,
          sourceId: t.regionKey,
          severity: 'critical',
          description: `Region ${t.regionKey} reports migration digest ${t.migrationDigest.slice(0, 12)}…, not ${reference.slice(0, 12)}… as the other regions do: its schema has drifted.`,
          payload: { regionKey: t.regionKey, migrationDigest: t.migrationDigest, referenceDigest: reference, migrationParity: fan.migrationParity, federationDigest: fan.federationDigest },
        });
      }
      for (const f of fan.failed) {
        breaches.push({
          source: REGION_UNREACHABLE_SOURCE,
          sourceId: f.region,
          severity: 'major',
          description: `Region ${f.region} could not be asked for its digests (${f.reason}): its parity cannot be asserted.`,
          payload: { region: f.region, reason: f.reason },
        });
      }
      return breaches;
    },
  };
}
