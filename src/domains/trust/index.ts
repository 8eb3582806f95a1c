/**
 * What other domains may use of trust (docs/federation.md, "Drift inbox and detectors"): the drift
 * inbox's counts. The trust snapshot reads them for its drift dimension and `driftEvents24h`;
 * compliance reads open critical drift (control no-open-critical-drift); the chaos schedule pauses
 * on open critical drift.
 */
import type { DriftCounts } from './drift/service.ts';

export type { DriftCounts } from './drift/service.ts';
export type { DriftKind, DriftSeverity, DriftStatus } from './drift/kinds.ts';
export type { TrustDomain } from './wiring.ts';

export interface TrustReads {
  /** Open and acknowledged drift events by severity. */
  openDriftCounts(): Promise<DriftCounts>;
  /** Drift events opened at or after `since`, whatever their status now. */
  openedSince(since: Date): Promise<number>;
  /** Open or acknowledged critical events: counts, and the oldest `listedMax` of them. */
  criticalUnresolved(listedMax: number): Promise<{
    open: number;
    acknowledged: number;
    listed: { id: string; kind: string; source: string; sourceId: string; status: string; openedAt: string }[];
  }>;
}
