import type { DriftCounts } from './drift/service.ts';

/** What other domains read of the drift inbox (compliance, chaos, the trust snapshot). */
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
