import { and, eq, inArray, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { executePrepared, insertRows } from '../../../platform/db/prepared.ts';
import { deleteOlderThan } from '../../../platform/db/retention.ts';
import { empireEvents, empireIngestSamples } from '../schema.ts';

/** The SQL of the empire ingest: storing events and the ingest samples the SLO reads. */

export type EventRow = typeof empireEvents.$inferSelect;
export type SampleRow = typeof empireIngestSamples.$inferInsert;

/**
 * Stores the rows whose (toolset, sender id) is new, in one statement; returns the sender ids it
 * stored. A row whose id is already stored (or is stored by a concurrent request first) is left
 * alone: the sender sent it before.
 */
export async function insertNewEvents(tx: Db, rows: readonly EventRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const result = await executePrepared(
    tx,
    'empire_events_insert',
    sql`INSERT INTO empire_events ${insertRows(empireEvents, rows)} ON CONFLICT (toolset, sender_id) DO NOTHING RETURNING sender_id AS "senderId"`,
  );
  return new Set(rowsOf<{ senderId: string }>(result).map((r) => r.senderId));
}

/** Event ids of already stored events of a toolset, by sender id. */
export async function eventIdsOf(db: Db, toolset: string, senderIds: readonly string[]): Promise<Map<string, string>> {
  if (senderIds.length === 0) return new Map();
  const rows = await db
    .select({ senderId: empireEvents.senderId, eventId: empireEvents.eventId })
    .from(empireEvents)
    .where(and(eq(empireEvents.toolset, toolset), inArray(empireEvents.senderId, [...senderIds])));
  return new Map(rows.map((r) => [r.senderId, r.eventId]));
}

export async function insertSamples(db: Db, rows: readonly SampleRow[]): Promise<void> {
  if (rows.length === 0) return;
  await executePrepared(
    db,
    'empire_ingest_samples_insert',
    sql`INSERT INTO empire_ingest_samples ${insertRows(empireIngestSamples, rows, ['toolset', 'receivedAt', 'outcome', 'latencyMs', 'eventCount'])}`,
  );
}

/** Deletes the ingest samples received before `cutoff`; returns how many. */
export const deleteSamplesBefore = (db: Db, cutoff: Date) =>
  deleteOlderThan(db, { table: empireIngestSamples, id: empireIngestSamples.id, time: empireIngestSamples.receivedAt }, cutoff);
