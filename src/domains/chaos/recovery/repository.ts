import { and, desc, eq, gte, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { chaosExperiments, chaosRuns } from '../schema.ts';

/** The only SQL of the recovery record: ended runs that measured a recovery (outcome ok or sla-breach). */

/** The outcomes of a run that measured its recovery against the objective. */
export const MEASURED_OUTCOMES = ['ok', 'sla-breach'] as const;

const measuredSince = (since: Date) => and(isNotNull(chaosRuns.endedAt), gte(chaosRuns.endedAt, since), inArray(chaosRuns.outcome, [...MEASURED_OUTCOMES]));

/** How many measured runs ended at or after `since`, by outcome. */
export async function measuredCounts(db: Db, since: Date): Promise<{ ok: number; slaBreach: number }> {
  const [row] = await db
    .select({
      ok: sql<number>`count(*) FILTER (WHERE ${chaosRuns.outcome} = 'ok')`.mapWith(Number),
      slaBreach: sql<number>`count(*) FILTER (WHERE ${chaosRuns.outcome} = 'sla-breach')`.mapWith(Number),
    })
    .from(chaosRuns)
    .where(measuredSince(since));
  return { ok: row?.ok ?? 0, slaBreach: row?.slaBreach ?? 0 };
}

export interface MeasuredRun {
  id: string;
  /** null when the experiment row is gone. */
  experimentSlug: string | null;
  outcome: string;
  observedRecoverySec: number | null;
  recoverySloSec: number;
  endedAt: Date;
}

/** The measured run that ended last at or after `since` (insertion order breaks a tie), with its experiment's slug. */
export async function latestMeasured(db: Db, since: Date): Promise<MeasuredRun | null> {
  const [row] = await db
    .select({
      id: chaosRuns.id,
      experimentSlug: chaosExperiments.slug,
      outcome: chaosRuns.outcome,
      observedRecoverySec: chaosRuns.observedRecoverySec,
      recoverySloSec: chaosRuns.recoverySloSec,
      endedAt: chaosRuns.endedAt,
    })
    .from(chaosRuns)
    .leftJoin(chaosExperiments, eq(chaosExperiments.id, chaosRuns.experimentId))
    .where(measuredSince(since))
    .orderBy(desc(chaosRuns.endedAt), desc(chaosRuns.seq))
    .limit(1);
  return row === undefined ? null : { ...row, endedAt: row.endedAt! };
}
