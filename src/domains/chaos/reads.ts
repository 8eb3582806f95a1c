import type { RecoveryRecord } from './recovery/service.ts';

/** What compliance reads of chaos (control chaos-recovery-within-slo). */
export interface ChaosReads {
  /** Runs that ended ok or sla-breach at or after `since`: counts, and the last of them. */
  recoveryRecord(since: Date): Promise<RecoveryRecord>;
  /** OBSERVATORY_CHAOS_ALLOW: the blast radii chaos may touch (`*` for all); empty when chaos is off. */
  allowedBlastRadii(): readonly string[];
}
