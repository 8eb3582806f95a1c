/**
 * What other domains may use of chaos (docs/chaos/README.md): the recovery record, which compliance reads
 * for control chaos-recovery-within-slo, and whether chaos is switched on at all.
 */
export type { MeasuredRunView, RecoveryRecord } from './recovery/service.ts';
export type { ChaosReads } from './reads.ts';
