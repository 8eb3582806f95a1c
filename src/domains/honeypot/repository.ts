import { and, asc, count, eq, gte, inArray, isNotNull, lte, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import {
  honeypotEvents,
  honeypotFingerprints,
  honeypotSettings,
  honeypotTarpits,
  honeypotTenants,
  ingestSamples,
} from './schema.ts';

export type TenantRow = typeof honeypotTenants.$inferSelect;
export type EventRow = typeof honeypotEvents.$inferSelect;
export type TarpitRow = typeof honeypotTarpits.$inferSelect;
export type SampleRow = typeof ingestSamples.$inferInsert;

// Tenants

export async function listTenants(db: Db): Promise<TenantRow[]> {
  return db.select().from(honeypotTenants).orderBy(asc(honeypotTenants.slug));
}

export async function findTenantBySlug(db: Db, slug: string): Promise<TenantRow | null> {
  const [row] = await db.select().from(honeypotTenants).where(eq(honeypotTenants.slug, slug)).limit(1);
  return row ?? null;
}

/** Inserts unless the slug exists; false on a conflict. */
export async function insertTenant(db: Db, row: TenantRow): Promise<boolean> {
  const inserted = await db.insert(honeypotTenants).values(row).onConflictDoNothing().returning({ id: honeypotTenants.id });
  return inserted.length === 1;
}

export async function updateTenant(db: Db, id: string, change: Partial<TenantRow>): Promise<void> {
  await db.update(honeypotTenants).set(change).where(eq(honeypotTenants.id, id));
}

/** Locks the tenant row for a state change, so concurrent rotations serialise. */
export async function lockTenant(db: Db, slug: string): Promise<TenantRow | null> {
  const [row] = await db.select().from(honeypotTenants).where(eq(honeypotTenants.slug, slug)).for('update');
  return row ?? null;
}

// Settings

/** The value stored under `key`, storing `value` first when none is there (same on every instance). */
export async function getOrCreateSetting(db: Db, key: string, value: string, at: Date): Promise<string> {
  await db.insert(honeypotSettings).values({ key, value, createdAt: at }).onConflictDoNothing();
  const [row] = await db.select({ value: honeypotSettings.value }).from(honeypotSettings).where(eq(honeypotSettings.key, key));
  if (!row) throw new Error(`setting ${key} vanished`);
  return row.value;
}

// Events

/** Inserts the events; a sender id seen before for the tenant is skipped. Returns the ids inserted. */
export async function insertEvents(db: Db, rows: EventRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const inserted = await db
    .insert(honeypotEvents)
    .values(rows)
    .onConflictDoNothing({ target: [honeypotEvents.tenantId, honeypotEvents.senderId] })
    .returning({ id: honeypotEvents.id });
  return new Set(inserted.map((r) => r.id));
}

export async function findEventsBySenderIds(db: Db, tenantId: string, senderIds: string[]) {
  if (senderIds.length === 0) return [];
  return db
    .select({
      id: honeypotEvents.id,
      senderId: honeypotEvents.senderId,
      uaClass: honeypotEvents.uaClass,
      fingerprintId: honeypotEvents.fingerprintId,
    })
    .from(honeypotEvents)
    .where(and(eq(honeypotEvents.tenantId, tenantId), inArray(honeypotEvents.senderId, senderIds)));
}

export async function findEvent(db: Db, id: string): Promise<EventRow | null> {
  const [row] = await db.select().from(honeypotEvents).where(eq(honeypotEvents.id, id)).limit(1);
  return row ?? null;
}

// Fingerprints

export interface FingerprintDelta {
  tenantId: string;
  fingerprintId: string;
  ja4: string | null;
  uaNormalized: string;
  uaSample: string;
  lastUaClass: string;
  asn: number | null;
  firstSeen: Date;
  lastSeen: Date;
  events: number;
  liars: number;
}

/** Adds a batch's counts to each fingerprint, creating the ones seen for the first time. */
export async function upsertFingerprints(db: Db, deltas: FingerprintDelta[]): Promise<void> {
  if (deltas.length === 0) return;
  await db
    .insert(honeypotFingerprints)
    .values(
      deltas.map((d) => ({
        tenantId: d.tenantId,
        fingerprintId: d.fingerprintId,
        ja4: d.ja4,
        uaNormalized: d.uaNormalized,
        uaSample: d.uaSample,
        lastUaClass: d.lastUaClass,
        asn: d.asn,
        firstSeen: d.firstSeen,
        lastSeen: d.lastSeen,
        eventCount: d.events,
        liarCount: d.liars,
      })),
    )
    .onConflictDoUpdate({
      target: [honeypotFingerprints.tenantId, honeypotFingerprints.fingerprintId],
      set: {
        eventCount: sql`${honeypotFingerprints.eventCount} + excluded.event_count`,
        liarCount: sql`${honeypotFingerprints.liarCount} + excluded.liar_count`,
        firstSeen: sql`least(${honeypotFingerprints.firstSeen}, excluded.first_seen)`,
        lastSeen: sql`greatest(${honeypotFingerprints.lastSeen}, excluded.last_seen)`,
        lastUaClass: sql`CASE WHEN excluded.last_seen >= ${honeypotFingerprints.lastSeen} THEN excluded.last_ua_class ELSE ${honeypotFingerprints.lastUaClass} END`,
        uaSample: sql`CASE WHEN excluded.last_seen >= ${honeypotFingerprints.lastSeen} THEN excluded.ua_sample ELSE ${honeypotFingerprints.uaSample} END`,
        asn: sql`coalesce(excluded.asn, ${honeypotFingerprints.asn})`,
      },
    });
}

// Tarpits

/** LIAR events per fingerprint of a tenant with `ts` in [from, to]. */
export async function countLiarEvents(db: Db, tenantId: string, fingerprintIds: string[], from: Date, to: Date) {
  if (fingerprintIds.length === 0) return new Map<string, number>();
  const rows = await db
    .select({ fingerprintId: honeypotEvents.fingerprintId, n: count() })
    .from(honeypotEvents)
    .where(
      and(
        eq(honeypotEvents.tenantId, tenantId),
        inArray(honeypotEvents.fingerprintId, fingerprintIds),
        eq(honeypotEvents.uaClass, 'LIAR'),
        gte(honeypotEvents.ts, from),
        lte(honeypotEvents.ts, to),
      ),
    )
    .groupBy(honeypotEvents.fingerprintId);
  return new Map(rows.map((r) => [r.fingerprintId, Number(r.n)]));
}

export async function activeTarpits(db: Db, tenantId: string, fingerprintIds: string[], now: Date): Promise<TarpitRow[]> {
  if (fingerprintIds.length === 0) return [];
  return db
    .select()
    .from(honeypotTarpits)
    .where(
      and(
        eq(honeypotTarpits.tenantId, tenantId),
        inArray(honeypotTarpits.fingerprintId, fingerprintIds),
        eq(honeypotTarpits.active, true),
        sql`${honeypotTarpits.expiresAt} > ${now.toISOString()}::timestamptz`,
      ),
    );
}

/** Opens a tarpit unless one is active for the fingerprint (the partial unique index decides). */
export async function insertTarpit(db: Db, row: TarpitRow): Promise<boolean> {
  const inserted = await db.insert(honeypotTarpits).values(row).onConflictDoNothing().returning({ id: honeypotTarpits.id });
  return inserted.length === 1;
}

/** Ends every active tarpit whose expiry has passed; returns how many. */
export async function expireTarpits(db: Db, now: Date): Promise<number> {
  const ended = await db
    .update(honeypotTarpits)
    .set({ active: false, endedAt: now })
    .where(and(eq(honeypotTarpits.active, true), lte(honeypotTarpits.expiresAt, now), isNotNull(honeypotTarpits.expiresAt)))
    .returning({ id: honeypotTarpits.id });
  return ended.length;
}

// Ingest samples

export async function insertSample(db: Db, row: SampleRow): Promise<void> {
  await db.insert(ingestSamples).values(row);
}
