/**
 * What other domains may use of federation (docs/federation/README.md). The trust domain reads digests
 * and parity through `FederationReads`; compliance reads region parity through it too.
 */

/** One deployment's digest tuple (spec A "Region"). */
export interface DigestTuple {
  regionKey: string;
  migrationDigest: string;
  graphDigest: string;
  complianceDigest: string;
}

/** A region that could not be asked, and why (a fixed reason, never the peer's words). */
export interface FailedRegion {
  region: string;
  reason: string;
}

export type MigrationParity = 'drifted' | 'matched';

/** The fan-out of POST {v1}/empire/region-digest (spec B group 3). */
export interface RegionDigestFanOut {
  participating: string[];
  failed: FailedRegion[];
  tuples: DigestTuple[];
  federationDigest: string;
  migrationParity: MigrationParity;
  migrationDriftDetails: { migrationDigest: string; regionKey: string }[];
}

export interface FederationReads {
  /** OBSERVATORY_REGION. */
  readonly currentRegion: string;
  /** This deployment's own tuple (GET {v1}/empire/region-digest). */
  localTuple(): Promise<DigestTuple>;
  /** Every active region's tuple, asked in parallel through the bridge (POST {v1}/empire/region-digest). */
  fanOutDigest(): Promise<RegionDigestFanOut>;
}
