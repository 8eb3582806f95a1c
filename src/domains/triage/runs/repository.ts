import { desc, eq, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { deleteOlderThan } from '../../../platform/db/retention.ts';
import { triageRuns } from '../schema.ts';
import type { RuleExample } from '../agents/types.ts';

/**
 * The triage runs' SQL: the run records and the decided rule proposals the rule proposer learns
 * from. The windows the agents' snapshots are made of come from the empire and the honeypot through
 * the read ports they own (empire/triage, honeypot/triage; docs/triage/README.md, "What the agents
 * read"). Every write into those domains goes through their services.
 */

export type RunRow = typeof triageRuns.$inferSelect;

const iso = (d: Date) => d.toISOString();
const num = (v: unknown) => Number(v);

export async function insertRun(tx: Db, row: RunRow): Promise<void> {
  await tx.insert(triageRuns).values(row);
}

export async function runById(db: Db, id: string): Promise<RunRow | null> {
  const [row] = await db.select().from(triageRuns).where(eq(triageRuns.id, id));
  return row ?? null;
}

export async function latestRunOf(db: Db, agent: string): Promise<RunRow | null> {
  const [row] = await db.select().from(triageRuns).where(eq(triageRuns.agent, agent)).orderBy(desc(triageRuns.startedAt)).limit(1);
  return row ?? null;
}

/** The newest decided rule proposals: at most `each` accepted and `each` rejected. */
export async function ruleExamples(db: Db, each: number): Promise<RuleExample[]> {
  const result = await db.execute(sql`
    SELECT toolset, payload -> 'predicate' AS predicate, status AS decision, decision_notes AS notes FROM (
      SELECT toolset, payload, status, decision_notes, decided_at, id, row_number() OVER (PARTITION BY status ORDER BY decided_at DESC, id DESC) AS rn
      FROM triage_proposals WHERE kind = 'alert-rule' AND status IN ('accepted', 'rejected') AND payload IS NOT NULL) d
    WHERE rn <= ${each} ORDER BY decided_at DESC, id DESC`);
  return rowsOf<RuleExample>(result).map((r) => ({ toolset: r.toolset, predicate: r.predicate, decision: r.decision, notes: r.notes }));
}

/** Deletes the runs started before `cutoff` (in batches); their proposals stay. */
export const deleteRunsBefore = (db: Db, cutoff: Date) => deleteOlderThan(db, { table: triageRuns, id: triageRuns.id, time: triageRuns.startedAt }, cutoff);
