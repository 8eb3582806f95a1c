import { and, asc, desc, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { olderThan, type TimeCursor } from '../db/paging.ts';
import type { Destination } from './destinations.ts';
import { outboundDeliveries } from './schema.ts';

export type DeliveryRow = typeof outboundDeliveries.$inferSelect;
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export async function insertDeliveries(db: Db, rows: DeliveryRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insert(outboundDeliveries).values(rows);
}

/**
 * Claims up to `limit` due pending rows for this dispatcher: in one statement it counts the attempt
 * and moves `next_attempt_at` to `leaseUntil`. `FOR UPDATE SKIP LOCKED` lets concurrent dispatchers
 * (other instances) pass over rows another one is claiming instead of waiting for it and then
 * claiming them again, so every attempt belongs to exactly one dispatcher.
 */
export async function claimDue(db: Db, args: { now: Date; leaseUntil: Date; limit: number }): Promise<DeliveryRow[]> {
  const due = db
    .select({ id: outboundDeliveries.id })
    .from(outboundDeliveries)
    .where(and(eq(outboundDeliveries.status, 'pending'), lte(outboundDeliveries.nextAttemptAt, args.now)))
    .orderBy(asc(outboundDeliveries.nextAttemptAt), asc(outboundDeliveries.id))
    .limit(args.limit)
    .for('update', { skipLocked: true });
  return db
    .update(outboundDeliveries)
    .set({ attempts: sql`${outboundDeliveries.attempts} + 1`, nextAttemptAt: args.leaseUntil })
    .where(and(inArray(outboundDeliveries.id, due), eq(outboundDeliveries.status, 'pending')))
    .returning();
}

/**
 * Records the outcome of the attempt a dispatcher claimed. The `attempts` guard makes a dispatcher
 * whose lease ran out (and whose row was claimed again) unable to overwrite the newer attempt.
 */
export async function finishAttempt(
  db: Db,
  claim: { id: string; attempts: number },
  outcome: Pick<DeliveryRow, 'status' | 'nextAttemptAt' | 'lastError' | 'lastStatus' | 'deliveredAt'>,
): Promise<boolean> {
  const updated = await db
    .update(outboundDeliveries)
    .set(outcome)
    .where(
      and(
        eq(outboundDeliveries.id, claim.id),
        eq(outboundDeliveries.attempts, claim.attempts),
        eq(outboundDeliveries.status, 'pending'),
      ),
    )
    .returning({ id: outboundDeliveries.id });
  return updated.length === 1;
}

export async function listDeliveries(
  db: Db,
  filter: { source?: string | undefined; sourceId?: string | undefined; status?: DeliveryStatus | undefined; limit: number },
): Promise<DeliveryRow[]> {
  const conditions = [
    filter.source === undefined ? undefined : eq(outboundDeliveries.source, filter.source),
    filter.sourceId === undefined ? undefined : eq(outboundDeliveries.sourceId, filter.sourceId),
    filter.status === undefined ? undefined : eq(outboundDeliveries.status, filter.status),
  ];
  return db
    .select()
    .from(outboundDeliveries)
    .where(and(...conditions))
    .orderBy(desc(outboundDeliveries.createdAt), desc(outboundDeliveries.id))
    .limit(filter.limit);
}

/**
 * One page of a producer kind's deliveries, newest first by (created_at, id): only those of
 * `sourceIds`, optionally of one exact destination (jsonb equality, so key order does not matter),
 * one destination kind and one status. Fetches `limit + 1` rows so the caller knows if more follow.
 */
export async function pageDeliveries(
  db: Db,
  filter: {
    source: string;
    sourceIds: readonly string[];
    destination: Destination | undefined;
    kind: Destination['kind'] | undefined;
    status: DeliveryStatus | undefined;
    cursor: TimeCursor | null;
    limit: number;
  },
): Promise<DeliveryRow[]> {
  if (filter.sourceIds.length === 0) return [];
  const d = outboundDeliveries;
  return db
    .select()
    .from(d)
    .where(
      and(
        eq(d.source, filter.source),
        inArray(d.sourceId, [...filter.sourceIds]),
        filter.destination === undefined ? undefined : sql`${d.destination} = ${JSON.stringify(filter.destination)}::jsonb`,
        filter.kind === undefined ? undefined : sql`${d.destination}->>'kind' = ${filter.kind}`,
        filter.status === undefined ? undefined : eq(d.status, filter.status),
        filter.cursor === null ? undefined : olderThan(d.createdAt, d.id, filter.cursor),
      ),
    )
    .orderBy(desc(d.createdAt), desc(d.id))
    .limit(filter.limit + 1);
}

/** Pending deliveries (sent, retried or due): the dispatcher's backlog, through the claim index. */
export async function countPending(db: Db): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(outboundDeliveries)
    .where(eq(outboundDeliveries.status, 'pending'));
  return Number(row?.count ?? 0);
}

export async function countByStatus(db: Db): Promise<Record<DeliveryStatus, number>> {
  const rows = await db
    .select({ status: outboundDeliveries.status, count: sql<number>`count(*)::int` })
    .from(outboundDeliveries)
    .groupBy(outboundDeliveries.status);
  const counts: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, failed: 0 };
  for (const row of rows) counts[row.status as DeliveryStatus] = Number(row.count);
  return counts;
}
