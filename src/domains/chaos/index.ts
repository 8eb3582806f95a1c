/**
 * What other domains may use of chaos (docs/chaos.md): the recovery record, which compliance reads
 * for control chaos-recovery-within-slo, and whether chaos is switched on at all.
 */
import type { RecoveryRecord } from './recovery/service.ts';

export type { ExperimentRow, ExperimentService, ExperimentView } from './experiments/service.ts';
export type { FreezeService, FreezeView } from './freeze/service.ts';
export type { MeasuredRunView, RecoveryRecord } from './recovery/service.ts';
export type { ChaosDomain } from './wiring.ts';

export interface ChaosReads {
  /** Runs that ended ok or sla-breach at or after `since`: counts, and the last of them. */
  recoveryRecord(since: Date): Promise<RecoveryRecord>;
  /** OBSERVATORY_CHAOS_ALLOW: the blast radii chaos may touch (`*` for all); empty when chaos is off. */
  allowedBlastRadii(): readonly string[];
}
