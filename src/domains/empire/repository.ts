import { and, asc, count, desc, eq, gte, inArray, lt, ne, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../platform/db/client.ts';
import { olderThan, type TimeCursor } from '../../platform/db/paging.ts';
import { executePrepared, insertRows } from '../../platform/db/prepared.ts';
import { andToolsetInReach, toolsetInReach } from '../../platform/db/reach.ts';
import { deleteOlderThan } from '../../platform/db/retention.ts';
import { distinctToolsets } from './insights.repository.ts';
import { empireEvents, empireForecasts, empireIncidents, empireIngestSamples, empireNotes } from './schema.ts';

/** The only SQL of the empire layer. */

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

// Forecasts and incidents

export type IncidentRow = typeof empireIncidents.$inferSelect;
export type ForecastRow = typeof empireForecasts.$inferSelect;

/**
 * Hourly event counts per toolset for [from, to), by event time: `hour` is the bucket's index from
 * `from` (0 = its first hour). Counted by offset from `from`, not by date_trunc, so the session's
 * time zone never moves a bucket. Hours without events are absent.
 */
export async function hourlyCounts(db: Db, from: Date, to: Date, reach: readonly string[] | null = null): Promise<{ toolset: string; hour: number; count: number }[]> {
  const result = await db.execute(sql`
    SELECT toolset, floor(extract(epoch FROM ts - ${from.toISOString()}::timestamptz) / 3600)::int AS hour, count(*)::int AS count FROM empire_events
    WHERE ts >= ${from.toISOString()}::timestamptz AND ts < ${to.toISOString()}::timestamptz ${andToolsetInReach(sql`toolset`, reach)}
    GROUP BY 1, 2`);
  return rowsOf<{ toolset: string; hour: number; count: number }>(result).map((r) => ({ toolset: r.toolset, hour: Number(r.hour), count: Number(r.count) }));
}

/** The toolset's latest scores, newest first. */
export async function recentScores(db: Db, toolset: string, limit: number): Promise<number[]> {
  const rows = await db.select({ score: empireForecasts.score }).from(empireForecasts).where(eq(empireForecasts.toolset, toolset)).orderBy(desc(empireForecasts.computedAt), desc(empireForecasts.id)).limit(limit);
  return rows.map((r) => r.score);
}

export async function insertForecasts(tx: Db, rows: readonly ForecastRow[]): Promise<void> {
  if (rows.length > 0) await tx.insert(empireForecasts).values([...rows]);
}

/**
 * The latest forecast of every toolset. The table keeps every run's rows (a toolset gains 96 a
 * day), so rather than sorting all of them (DISTINCT ON) this skips from toolset to toolset on the
 * (toolset, computed_at) index and reads one row of each.
 */
export async function latestForecasts(db: Db, reach: readonly string[] | null = null): Promise<ForecastRow[]> {
  const result = await db.execute(sql`
    ${distinctToolsets('empire_forecasts')}
    SELECT latest.* FROM toolsets t CROSS JOIN LATERAL (
      SELECT id, run_id AS "runId", toolset, score, level, direction, details, computed_at AS "computedAt" FROM empire_forecasts f
      WHERE f.toolset = t.toolset ORDER BY f.computed_at DESC, f.id DESC LIMIT 1) latest
    WHERE t.toolset IS NOT NULL ${andToolsetInReach(sql`t.toolset`, reach)} ORDER BY latest.toolset`);
  return rowsOf<ForecastRow>(result).map((r) => ({ ...r, score: Number(r.score), computedAt: new Date(r.computedAt) }));
}

/** The newest events of a toolset at or after `since`, for an incident's evidence. */
export async function recentEventIds(db: Db, toolset: string, since: Date, limit: number): Promise<string[]> {
  const rows = await db
    .select({ eventId: empireEvents.eventId })
    .from(empireEvents)
    .where(and(eq(empireEvents.toolset, toolset), gte(empireEvents.ts, since)))
    .orderBy(desc(empireEvents.ts), desc(empireEvents.eventId))
    .limit(limit);
  return rows.map((r) => r.eventId);
}

/** An incident of the toolset from `source` that is not resolved yet (open or acknowledged). */
export async function openIncidentFrom(db: Db, toolset: string, source: string): Promise<IncidentRow | null> {
  const [row] = await db
    .select()
    .from(empireIncidents)
    .where(and(eq(empireIncidents.toolset, toolset), eq(empireIncidents.source, source), ne(empireIncidents.status, 'resolved')))
    .limit(1);
  return row ?? null;
}

export async function lockIncident(tx: Db, id: string): Promise<IncidentRow | null> {
  const [row] = await tx.select().from(empireIncidents).where(eq(empireIncidents.id, id)).for('update');
  return row ?? null;
}

export async function updateIncidentStatus(tx: Db, id: string, patch: { status: string; resolvedAt: Date | null }): Promise<void> {
  await tx.update(empireIncidents).set(patch).where(eq(empireIncidents.id, id));
}

export async function insertIncident(tx: Db, row: IncidentRow): Promise<void> {
  await tx.insert(empireIncidents).values(row);
}

export async function incidentById(db: Db, id: string): Promise<IncidentRow | null> {
  const [row] = await db.select().from(empireIncidents).where(eq(empireIncidents.id, id));
  return row ?? null;
}

export async function listIncidents(
  db: Db,
  filter: { toolset?: string | undefined; status?: string | undefined; severity?: string | undefined; reach: readonly string[] | null; cursor: TimeCursor | null; limit: number },
): Promise<IncidentRow[]> {
  const i = empireIncidents;
  const where = and(
    filter.toolset === undefined ? undefined : eq(i.toolset, filter.toolset),
    toolsetInReach(i.toolset, filter.reach),
    filter.status === undefined ? undefined : eq(i.status, filter.status),
    filter.severity === undefined ? undefined : eq(i.severity, filter.severity),
    filter.cursor === null ? undefined : olderThan(i.openedAt, i.id, filter.cursor),
  );
  return db.select().from(i).where(where).orderBy(desc(i.openedAt), desc(i.id)).limit(filter.limit);
}

/**
 * The incidents opened in [from, to), oldest first (id, toolset and opening time only); only those
 * of `toolsets` unless it is null. Reads the (opened_at, id) index.
 */
export async function incidentsOpenedBetween(db: Db, from: Date, to: Date, toolsets: readonly string[] | null): Promise<{ id: string; toolset: string; openedAt: Date }[]> {
  const i = empireIncidents;
  return db
    .select({ id: i.id, toolset: i.toolset, openedAt: i.openedAt })
    .from(i)
    .where(and(gte(i.openedAt, from), lt(i.openedAt, to), toolsetInReach(i.toolset, toolsets)))
    .orderBy(asc(i.openedAt), asc(i.id));
}

/** Incidents not resolved yet (open or acknowledged), counted by severity over every toolset: the trust snapshot. */
export async function unresolvedIncidentCounts(db: Db): Promise<{ severity: string; n: number }[]> {
  const i = empireIncidents;
  return db.select({ severity: i.severity, n: count() }).from(i).where(ne(i.status, 'resolved')).groupBy(i.severity);
}

/** The toolset of each stored event among `eventIds` (UUIDs; ids of no stored event are absent). */
export async function toolsetsOfEvents(db: Db, eventIds: readonly string[]): Promise<Map<string, string>> {
  if (eventIds.length === 0) return new Map();
  const rows = await db.select({ eventId: empireEvents.eventId, toolset: empireEvents.toolset }).from(empireEvents).where(inArray(empireEvents.eventId, [...eventIds]));
  return new Map(rows.map((r) => [r.eventId, r.toolset]));
}
