import { and, eq, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { empireNotes } from '../schema.ts';

/** The SQL of stored empire events' lineage and of the notes on events and incidents. */

// Lineage

/** An event as lineage lists it, with its distance from the focal event. */
export interface LineageRow {
  eventId: string;
  toolset: string;
  senderId: string;
  eventType: string;
  ts: Date;
  tenant: string | null;
  causedBy: string | null;
  receivedAt: Date;
  compatMode: boolean;
  depth: number;
}

const LINEAGE_COLUMNS = sql`e.event_id AS "eventId", e.toolset, e.sender_id AS "senderId", e.event_type AS "eventType", e.ts, e.tenant,
  e.caused_by AS "causedBy", e.received_at AS "receivedAt", e.compat_mode AS "compatMode"`;

export async function eventById(db: Db, eventId: string): Promise<LineageRow | null> {
  const [row] = rowsOf<LineageRow>(await db.execute(sql`SELECT ${LINEAGE_COLUMNS}, 0 AS depth FROM empire_events e WHERE e.event_id = ${eventId}`));
  return row ? { ...row, ts: new Date(row.ts), receivedAt: new Date(row.receivedAt) } : null;
}

/**
 * The events `direction` of the focal one, nearest first: `up` follows `caused_by` to the cause,
 * `down` finds the events whose `caused_by` names one already found. Each path carries the ids it
 * has visited, so a cycle stops where it closes; `maxDepth` and `maxRows` bound the walk (one row
 * more than `maxRows` comes back when there are more).
 */
export async function lineage(db: Db, focal: LineageRow, direction: 'up' | 'down', maxDepth: number, maxRows: number): Promise<LineageRow[]> {
  const step =
    direction === 'up'
      ? sql`JOIN walk w ON e.toolset = w.toolset AND e.sender_id = w."causedBy"`
      : sql`JOIN walk w ON e.toolset = w.toolset AND e.caused_by = w."senderId"`;
  // No ORDER BY: a recursive UNION ALL yields level after level, so the LIMIT stops the walk itself
  // once enough rows are found, however wide the tree below (the caller sorts within levels).
  const result = await db.execute(sql`
    WITH RECURSIVE walk AS (
      SELECT ${LINEAGE_COLUMNS}, 0 AS depth, ARRAY[e.event_id] AS path
      FROM empire_events e WHERE e.event_id = ${focal.eventId}
      UNION ALL
      SELECT ${LINEAGE_COLUMNS}, w.depth + 1, w.path || e.event_id
      FROM empire_events e ${step}
      WHERE w.depth < ${maxDepth}::int AND NOT e.event_id = ANY(w.path)
    )
    SELECT "eventId", toolset, "senderId", "eventType", ts, tenant, "causedBy", "receivedAt", "compatMode", depth FROM walk WHERE depth > 0 LIMIT ${maxRows + 1}`);
  return rowsOf<LineageRow>(result).map((r) => ({ ...r, ts: new Date(r.ts), receivedAt: new Date(r.receivedAt), depth: Number(r.depth) }));
}

// Notes

export type NoteRow = typeof empireNotes.$inferSelect;

export async function noteFor(db: Db, key: { targetKind: string; eventId: string; tenant: string }): Promise<NoteRow | null> {
  const [row] = await db
    .select()
    .from(empireNotes)
    .where(and(eq(empireNotes.targetKind, key.targetKind), eq(empireNotes.eventId, key.eventId), eq(empireNotes.tenant, key.tenant)));
  return row ?? null;
}

/** Inserts the note or replaces the one with its key; returns the stored row and the row it replaced. */
export async function upsertNote(tx: Db, row: NoteRow): Promise<{ stored: NoteRow; before: NoteRow | null }> {
  const before = await noteFor(tx, row);
  const [stored] = await tx
    .insert(empireNotes)
    .values(row)
    .onConflictDoUpdate({
      target: [empireNotes.targetKind, empireNotes.eventId, empireNotes.tenant],
      set: { note: row.note, pinned: row.pinned, color: row.color, userId: row.userId, updatedAt: row.updatedAt },
    })
    .returning();
  return { stored: stored!, before };
}
