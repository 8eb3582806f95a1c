import { and, asc, count, desc, eq, gte, inArray, lt, ne } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { olderThan, type TimeCursor } from '../../../platform/db/paging.ts';
import { toolsetInReach } from '../../../platform/db/reach.ts';
import { empireEvents, empireIncidents } from '../schema.ts';

/** The SQL of empire incidents. */

export type IncidentRow = typeof empireIncidents.$inferSelect;

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
