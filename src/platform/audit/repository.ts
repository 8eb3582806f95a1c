import { and, desc, eq, lt } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { auditChainHead, auditFacts, operatorAudit } from './schema.ts';

export type OperatorAuditRow = typeof operatorAudit.$inferSelect;
export type AuditFactRow = typeof auditFacts.$inferSelect;

/** Locks the chain head for the rest of the transaction and returns it. */
export async function lockChainHead(tx: Db): Promise<{ seqNo: number; headHash: string }> {
  const [head] = await tx
    .select({ seqNo: auditChainHead.seqNo, headHash: auditChainHead.headHash })
    .from(auditChainHead)
    .where(eq(auditChainHead.id, 1))
    .for('update');
  if (!head) throw new Error('audit chain head row is missing; migrations did not run');
  return head;
}

export async function insertFactAndMoveHead(tx: Db, fact: AuditFactRow, at: Date): Promise<void> {
  await tx.insert(auditFacts).values(fact);
  await tx
    .update(auditChainHead)
    .set({ seqNo: fact.seqNo, headHash: fact.entryHash, updatedAt: at })
    .where(eq(auditChainHead.id, 1));
}

export async function insertOperatorAudit(tx: Db, row: OperatorAuditRow): Promise<void> {
  await tx.insert(operatorAudit).values(row);
}

export async function listOperatorAudit(
  db: Db,
  filter: { limit: number; beforeSeqNo?: number | undefined; verb?: string | undefined },
): Promise<OperatorAuditRow[]> {
  const conditions = [];
  if (filter.beforeSeqNo !== undefined) conditions.push(lt(operatorAudit.seqNo, filter.beforeSeqNo));
  if (filter.verb !== undefined) conditions.push(eq(operatorAudit.verb, filter.verb));
  return db
    .select()
    .from(operatorAudit)
    .where(conditions.length ? and(...conditions) : undefined)
    .orderBy(desc(operatorAudit.seqNo))
    .limit(filter.limit);
}

/** Facts in ascending seqNo order, for verification walks and tests. */
export async function listFactsAscending(db: Db): Promise<AuditFactRow[]> {
  return db.select().from(auditFacts).orderBy(auditFacts.seqNo);
}
