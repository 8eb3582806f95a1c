import { and, desc, eq } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { olderThanSeq, type SeqCursor } from '../../../platform/db/paging.ts';
import { chaosExperiments } from '../schema.ts';

/** The only SQL of the experiment registry. */

export type ExperimentRow = typeof chaosExperiments.$inferSelect;
/** A row to insert: `seq` comes from the database. */
export type NewExperiment = Omit<ExperimentRow, 'seq'>;

/** Inserts the experiment and answers it with its `seq`. A taken slug throws the unique violation. */
export async function insertExperiment(tx: Db, row: NewExperiment): Promise<ExperimentRow> {
  const [inserted] = await tx.insert(chaosExperiments).values(row).returning();
  return inserted!;
}

export async function experimentById(db: Db, id: string): Promise<ExperimentRow | null> {
  const [row] = await db.select().from(chaosExperiments).where(eq(chaosExperiments.id, id));
  return row ?? null;
}

export async function experimentBySlug(db: Db, slug: string): Promise<ExperimentRow | null> {
  const [row] = await db.select().from(chaosExperiments).where(eq(chaosExperiments.slug, slug));
  return row ?? null;
}

export async function lockExperiment(tx: Db, id: string): Promise<ExperimentRow | null> {
  const [row] = await tx.select().from(chaosExperiments).where(eq(chaosExperiments.id, id)).for('update');
  return row ?? null;
}

export async function setStatus(tx: Db, id: string, status: string, at: Date): Promise<ExperimentRow> {
  const [row] = await tx.update(chaosExperiments).set({ status, updatedAt: at }).where(eq(chaosExperiments.id, id)).returning();
  return row!;
}

/** Newest first by (createdAt, seq), past the cursor. */
export async function listExperiments(
  db: Db,
  filter: { kind?: string | undefined; status?: string | undefined; cursor: SeqCursor | null; limit: number },
): Promise<ExperimentRow[]> {
  const e = chaosExperiments;
  const where = and(
    filter.kind === undefined ? undefined : eq(e.kind, filter.kind),
    filter.status === undefined ? undefined : eq(e.status, filter.status),
    filter.cursor === null ? undefined : olderThanSeq(e.createdAt, e.seq, filter.cursor),
  );
  return db.select().from(e).where(where).orderBy(desc(e.createdAt), desc(e.seq)).limit(filter.limit);
}
