import { desc, eq, gte, inArray, lte, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import { backupSnapshots, restoreVerifications } from './schema.ts';

/** The only SQL of the backups domain's own tables (the dump-side SQL is in hashing.ts and engines). */

export type SnapshotRow = typeof backupSnapshots.$inferSelect;
export type VerificationRow = typeof restoreVerifications.$inferSelect;

export async function insertSnapshot(tx: Db, row: SnapshotRow): Promise<void> {
  await tx.insert(backupSnapshots).values(row);
}

export async function snapshotById(db: Db, id: string): Promise<SnapshotRow | null> {
  const [row] = await db.select().from(backupSnapshots).where(eq(backupSnapshots.id, id));
  return row ?? null;
}

/** Newest first (takenAt, then id). */
export async function listSnapshots(db: Db, filter: { database?: string | undefined; limit: number }): Promise<SnapshotRow[]> {
  return db
    .select()
    .from(backupSnapshots)
    .where(filter.database === undefined ? undefined : eq(backupSnapshots.database, filter.database))
    .orderBy(desc(backupSnapshots.takenAt), desc(backupSnapshots.id))
    .limit(filter.limit);
}

/** Snapshots whose retention has run out at `now` (retentionUntil at or before it). */
export async function expiredSnapshots(db: Db, now: Date): Promise<SnapshotRow[]> {
  return db.select().from(backupSnapshots).where(lte(backupSnapshots.retentionUntil, now)).orderBy(backupSnapshots.takenAt);
}

export async function deleteSnapshot(tx: Db, id: string): Promise<boolean> {
  const rows = await tx.delete(backupSnapshots).where(eq(backupSnapshots.id, id)).returning({ id: backupSnapshots.id });
  return rows.length > 0;
}

export async function insertVerification(tx: Db, row: VerificationRow): Promise<void> {
  await tx.insert(restoreVerifications).values(row);
}

/** When the newest verification made by `trigger` was stored, or null. */
export async function lastVerifiedAt(db: Db, trigger: string): Promise<Date | null> {
  const [row] = await db
    .select({ at: restoreVerifications.verifiedAt })
    .from(restoreVerifications)
    .where(eq(restoreVerifications.trigger, trigger))
    .orderBy(desc(restoreVerifications.verifiedAt))
    .limit(1);
  return row?.at ?? null;
}

/** Verifications at or after `since`, newest first. */
export async function listVerifications(db: Db, filter: { since: Date; limit: number }): Promise<VerificationRow[]> {
  return db
    .select()
    .from(restoreVerifications)
    .where(gte(restoreVerifications.verifiedAt, filter.since))
    .orderBy(desc(restoreVerifications.verifiedAt), desc(restoreVerifications.id))
    .limit(filter.limit);
}

export interface DatabaseLadderRow {
  database: string;
  last: Date | null;
  lastOk: Date | null;
  ok: number;
  drift: number;
  error: number;
}

/**
 * Per database that has a snapshot or a verification: the latest verification and latest `ok`
 * one of all time, and the outcomes counted since `totalsSince`.
 */
export async function ladderByDatabase(db: Db, totalsSince: Date): Promise<DatabaseLadderRow[]> {
  const since = totalsSince.toISOString();
  const result = await db.execute(sql`
    SELECT d.database,
           max(v.verified_at) AS last,
           max(v.verified_at) FILTER (WHERE v.outcome = 'ok') AS last_ok,
           count(v.id) FILTER (WHERE v.outcome = 'ok' AND v.verified_at >= ${since}::timestamptz)::int AS ok,
           count(v.id) FILTER (WHERE v.outcome = 'drift' AND v.verified_at >= ${since}::timestamptz)::int AS drift,
           count(v.id) FILTER (WHERE v.outcome = 'error' AND v.verified_at >= ${since}::timestamptz)::int AS error
      FROM (SELECT database FROM ${backupSnapshots} UNION SELECT database FROM ${restoreVerifications}) d
      LEFT JOIN ${restoreVerifications} v ON v.database = d.database
     GROUP BY d.database
     ORDER BY d.database`);
  return (result as unknown as { rows: Record<string, unknown>[] }).rows.map((r) => ({
    database: String(r.database),
    last: toDate(r.last),
    lastOk: toDate(r.last_ok),
    ok: Number(r.ok),
    drift: Number(r.drift),
    error: Number(r.error),
  }));
}

function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value : new Date(String(value));
}

/** The newest verification, and the newest that ended `ok` (either may be null); both index reads. */
export async function latestVerifications(db: Db): Promise<{ latest: VerificationRow | null; lastOk: VerificationRow | null }> {
  const newest = (where?: ReturnType<typeof eq>) =>
    db.select().from(restoreVerifications).where(where).orderBy(desc(restoreVerifications.verifiedAt), desc(restoreVerifications.id)).limit(1);
  const [latest] = await newest();
  const [lastOk] = await newest(eq(restoreVerifications.outcome, 'ok'));
  return { latest: latest ?? null, lastOk: lastOk ?? null };
}

/**
 * The newest verification of each database that has one (at most `limit` databases, by name): one
 * backward index probe per database named by a snapshot or a verification.
 */
export async function latestVerificationPerDatabase(db: Db, limit: number): Promise<VerificationRow[]> {
  const result = await db.execute(sql`
    SELECT d.database, (SELECT v.id FROM ${restoreVerifications} v WHERE v.database = d.database ORDER BY v.verified_at DESC, v.id DESC LIMIT 1) AS id
      FROM (SELECT database FROM ${backupSnapshots} UNION SELECT database FROM ${restoreVerifications}) d
     ORDER BY d.database
     LIMIT ${limit}`);
  const ids = (result as unknown as { rows: { id: string | null }[] }).rows.map((r) => r.id).filter((id): id is string => id !== null);
  if (ids.length === 0) return [];
  const rows = await db.select().from(restoreVerifications).where(inArray(restoreVerifications.id, ids));
  return rows.sort((a, b) => (a.database < b.database ? -1 : a.database > b.database ? 1 : 0));
}
