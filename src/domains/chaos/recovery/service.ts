import type { Db } from '../../../platform/db/client.ts';
import * as repo from './repository.ts';

/** A measured run as the recovery record names it. */
export interface MeasuredRunView {
  id: string;
  experimentSlug: string | null;
  outcome: 'ok' | 'sla-breach';
  /** null for a breach whose probe never turned green before the run's bound. */
  observedRecoverySec: number | null;
  recoverySloSec: number;
  endedAt: string;
}

/** The runs that measured a recovery since a time: what compliance control chaos-recovery-within-slo reads. */
export interface RecoveryRecord {
  since: string;
  /** Runs that ended ok (recovered within the objective) at or after `since`. */
  ok: number;
  /** Runs that ended sla-breach (recovered late, or not within the run's bound). */
  slaBreach: number;
  /** The last of them to end; null when none did. */
  latest: MeasuredRunView | null;
}

/** Measured recovery over chaos runs (docs/chaos/README.md, "Recovery"); aborted and partial runs measured nothing and are left out. */
export function createRecoveryService(deps: { db: Db }) {
  const { db } = deps;
  return {
    async recoveryRecord(since: Date): Promise<RecoveryRecord> {
      const [counts, latest] = await Promise.all([repo.measuredCounts(db, since), repo.latestMeasured(db, since)]);
      return {
        since: since.toISOString(),
        ...counts,
        latest:
          latest === null
            ? null
            : {
                id: latest.id,
                experimentSlug: latest.experimentSlug,
                outcome: latest.outcome as MeasuredRunView['outcome'],
                observedRecoverySec: latest.observedRecoverySec,
                recoverySloSec: latest.recoverySloSec,
                endedAt: latest.endedAt.toISOString(),
              },
      };
    },
  };
}

export type RecoveryService = ReturnType<typeof createRecoveryService>;
