import { and, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { complianceEvaluations as e } from '../schema.ts';

/** The only SQL of compliance evaluations (table in ../schema.ts, migration 0024_compliance). */

export type EvaluationRow = typeof e.$inferSelect;
/** A row to insert: `seq` comes from the database. */
export type NewEvaluation = Omit<EvaluationRow, 'seq'>;

const JOB = 'job';

export async function insertEvaluations(tx: Db, rows: readonly NewEvaluation[]): Promise<void> {
  if (rows.length > 0) await tx.insert(e).values([...rows]);
}

export async function evaluationById(db: Db, id: string): Promise<EvaluationRow | null> {
  const [row] = await db.select().from(e).where(eq(e.id, id)).limit(1);
  return row ?? null;
}

/** Serialises overrides of one control across connections (the open-override slot is unique). */
export async function lockControl(tx: Db, controlKey: string): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`compliance-control:${controlKey}`}))`);
}

/** Every override in force (at most one per control; a handful in all). */
export async function openOverrides(db: Db, framework?: string): Promise<EvaluationRow[]> {
  return db
    .select()
    .from(e)
    .where(and(ne(e.evaluatedBy, JOB), isNull(e.endedAt), framework === undefined ? undefined : eq(e.framework, framework)));
}

export async function endOverrides(tx: Db, ids: readonly string[], at: Date): Promise<void> {
  if (ids.length > 0) await tx.update(e).set({ endedAt: at }).where(and(inArray(e.id, [...ids]), isNull(e.endedAt)));
}

/**
 * The newest job evaluation of each listed control of a framework: one backward index probe per
 * control (compliance_evaluations_control_idx), so the cost does not grow with the history kept;
 * all of them in one statement (a LATERAL probe per control), so the framework read is one round
 * trip rather than one per control.
 */
export async function latestJobEvaluations(db: Db, framework: string, controlIds: readonly string[]): Promise<EvaluationRow[]> {
  if (controlIds.length === 0) return [];
  const wanted = sql.join(controlIds.map((id) => sql`${id}`), sql`, `);
  const newest = sql`(SELECT l.id FROM unnest(ARRAY[${wanted}]::text[]) AS c(control_id)
    CROSS JOIN LATERAL (SELECT x.id FROM compliance_evaluations x
      WHERE x.framework = ${framework} AND x.control_id = c.control_id AND x.evaluated_by = ${JOB}
      ORDER BY x.seq DESC LIMIT 1) l)`;
  const rows = await db.select().from(e).where(inArray(e.id, newest));
  const order = new Map(controlIds.map((id, i) => [id, i]));
  return rows.sort((a, b) => (order.get(a.controlId) ?? 0) - (order.get(b.controlId) ?? 0));
}
