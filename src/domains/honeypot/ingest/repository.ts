import { and, eq, gt, isNotNull, lte, type SQL, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { executePrepared, insertRows } from '../../../platform/db/prepared.ts';
import { deleteOlderThan } from '../../../platform/db/retention.ts';
import {
  honeypotEvents,
  honeypotSettings,
  honeypotTarpits,
  ingestSamples,
} from '../schema.ts';

/**
 * The SQL of ingest: the group write of events, the tarpits it opens and expires, the SLO samples,
 * and the settings row that holds the IP-hash key every ingested address is hashed with.
 */

export type EventRow = typeof honeypotEvents.$inferSelect;
export type TarpitRow = typeof honeypotTarpits.$inferSelect;
export type SampleRow = typeof ingestSamples.$inferInsert;

// Settings

/** The value stored under `key`, storing `value` first when none is there (same on every instance). */
export async function getOrCreateSetting(db: Db, key: string, value: string, at: Date): Promise<string> {
  await db.insert(honeypotSettings).values({ key, value, createdAt: at }).onConflictDoNothing();
  const [row] = await db.select({ value: honeypotSettings.value }).from(honeypotSettings).where(eq(honeypotSettings.key, key));
  if (!row) throw new Error(`setting ${key} vanished`);
  return row.value;
}

// Events

/** The stored events with these (tenant, sender id) pairs. */
export async function findEventsBySenderIds(db: Db, keys: { tenantId: string; senderId: string }[]) {
  if (keys.length === 0) return [];
  const rows = rowsOf<{ id: string; tenantId: string; senderId: string; uaClass: string; fingerprintId: string }>(
    await db.execute(sql`SELECT e.id, e.tenant_id AS "tenantId", e.sender_id AS "senderId", e.ua_class AS "uaClass", e.fingerprint_id AS "fingerprintId"
      FROM honeypot_events e JOIN json_to_recordset(${JSON.stringify(keys)}::json) AS k("tenantId" uuid, "senderId" text)
        ON e.tenant_id = k."tenantId" AND e.sender_id = k."senderId"`),
  );
  return rows;
}

// Tarpits

/** A fingerprint of a tenant. */
export interface FingerprintKey {
  tenantId: string;
  fingerprintId: string;
}
/**
 * Ends the tarpits of these fingerprints that are still marked active after their expiry (the
 * expire job has not run yet), so that new ones can open: only one active row per fingerprint may
 * exist. One statement for every key.
 */
export async function endExpiredTarpits(db: Db, keys: readonly FingerprintKey[], now: Date): Promise<void> {
  if (keys.length === 0) return;
  await db.execute(sql`UPDATE honeypot_tarpits t SET active = false, ended_at = ${now.toISOString()}::timestamptz
    FROM (${keysOf(keysJson(keys))}) k
    WHERE t.tenant_id = k.tenant_id AND t.fingerprint_id = k.fingerprint_id AND t.active AND t.expires_at <= ${now.toISOString()}::timestamptz`);
}

/**
 * Opens these tarpits, one statement for all; a fingerprint that has an active one already keeps
 * it (the partial unique index decides, and the row is skipped). At most one row per fingerprint.
 */
export async function insertTarpits(db: Db, rows: readonly TarpitRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insert(honeypotTarpits).values([...rows]).onConflictDoNothing();
}

/** Tarpits active at `now` (not ended, not expired): the metrics gauge, through the expiry index. */
export async function countActiveTarpits(db: Db, now: Date): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(honeypotTarpits)
    .where(and(eq(honeypotTarpits.active, true), gt(honeypotTarpits.expiresAt, now)));
  return Number(row?.count ?? 0);
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

// The ingest write

/** One group of ingested events and what it adds to the counters (see `storeGroup`). */
export interface GroupWrite {
  /** Events whose sender ids no stored event has (as far as the caller knows). */
  rows: EventRow[];
  /**
   * [tenantId, fingerprintId, uaNormalized] of the rows' fingerprints, at most once each: what the
   * rollup applier cannot derive from the stored events when it adds them to the fingerprints.
   */
  fingerprints: [string, string, string][];
  /** The fingerprints whose tarpit state the answers report. */
  tarpitKeys: readonly FingerprintKey[];
  /** The fingerprints that sent a LIAR event in this group. */
  liarKeys: readonly FingerprintKey[];
  /** LIAR events with `ts` in [liarFrom, liarTo] count toward the tarpit. */
  liarFrom: Date;
  liarTo: Date;
  now: Date;
}

export interface GroupWritten {
  /** The active, unexpired tarpits among `tarpitKeys`, keyed `<tenantId>|<fingerprintId>`. */
  activeTarpits: Map<string, { delayMs: number }>;
  /**
   * For each of `liarKeys` without an active tarpit: its LIAR events in the window stored before
   * this statement (the group's own are not included).
   */
  storedLiarEvents: Map<string, number>;
}

const keysJson = (keys: readonly FingerprintKey[]) => JSON.stringify(keys.map((k) => [k.tenantId, k.fingerprintId]));
const keysOf = (json: string) => sql`SELECT (k ->> 0)::uuid AS tenant_id, k ->> 1 AS fingerprint_id FROM json_array_elements(${json}::json) AS k`;
const pairsOf = (value: unknown): [string, string, unknown][] => (typeof value === 'string' ? JSON.parse(value) : value) as [string, string, unknown][];

/**
 * Stores a group of events with the pending row that queues them for the rollups and fingerprint
 * counters (dashboard/repository.ts `applyPending`), and reads the tarpit state its answers need,
 * in one prepared statement and so one round trip and one commit (docs/honeypot/README.md, "Group
 * commit"). A statement is atomic: all of it is stored or none.
 *
 * The events are inserted plainly: a sender id the tenant already stored (or another writer is
 * storing) fails the whole statement with a unique violation (platform `isUniqueViolation`), so that the
 * caller can look up the originals and store the rest; the pending row never names an event that
 * was not stored.
 */
export async function storeGroup(db: Db, w: GroupWrite): Promise<GroupWritten> {
  const result = await executePrepared(db, 'honeypot_ingest_group', groupStatement(w));
  const [row] = rowsOf<{ stateRows: unknown; active: unknown; liars: unknown }>(result);
  if (Number(row?.stateRows) !== 1) throw new Error('honeypot_rollup_state has no row; the dashboard service creates it at start');
  return {
    activeTarpits: new Map(pairsOf(row!.active).map(([tenantId, fingerprintId, delayMs]) => [`${tenantId}|${fingerprintId}`, { delayMs: Number(delayMs) }])),
    storedLiarEvents: new Map(pairsOf(row!.liars).map(([tenantId, fingerprintId, n]) => [`${tenantId}|${fingerprintId}`, Number(n)])),
  };
}

/**
 * The statement `storeGroup` prepares (exported for the test that reads its generic plan): the
 * liar count reads `honeypot_events_liar_idx`, the LIAR rows alone, so a flood of a tenant's other
 * events never adds to the cost of counting one fingerprint's liars.
 */
export function groupStatement(w: GroupWrite): SQL {
  return sql`WITH stored_events AS (
        INSERT INTO honeypot_events ${insertRows(honeypotEvents, w.rows)}
        RETURNING id
      ), pending AS (
        INSERT INTO honeypot_rollup_pending (event_ids, fingerprints)
        SELECT array_agg(id), ${JSON.stringify(w.fingerprints)}::jsonb FROM stored_events HAVING count(*) > 0
        RETURNING 1
      ),
      -- Share-locked so that the window advance and the rebuild (FOR UPDATE) never run while a
      -- group is between storing its events and committing (docs/honeypot/dashboard.md).
      rollup_state AS (SELECT 1 FROM honeypot_rollup_state WHERE id = 1 FOR SHARE),
      tarpit_keys AS (${keysOf(keysJson(w.tarpitKeys))}),
      active_tarpits AS (
        -- One probe per key on the partial unique index of active rows, however many are active.
        SELECT k.tenant_id, k.fingerprint_id, t.delay_ms FROM tarpit_keys k
        CROSS JOIN LATERAL (SELECT delay_ms FROM honeypot_tarpits t WHERE t.tenant_id = k.tenant_id AND t.fingerprint_id = k.fingerprint_id
          AND t.active AND t.expires_at > ${w.now.toISOString()}::timestamptz LIMIT 1) t
      ),
      liar_keys AS (${keysOf(keysJson(w.liarKeys))}),
      stored_liars AS (
        SELECT l.tenant_id, l.fingerprint_id,
          (SELECT count(*) FROM honeypot_events e WHERE e.tenant_id = l.tenant_id AND e.fingerprint_id = l.fingerprint_id AND e.ua_class = 'LIAR'
            AND e.ts >= ${w.liarFrom.toISOString()}::timestamptz AND e.ts <= ${w.liarTo.toISOString()}::timestamptz) AS n
        FROM liar_keys l
        WHERE NOT EXISTS (SELECT 1 FROM active_tarpits a WHERE a.tenant_id = l.tenant_id AND a.fingerprint_id = l.fingerprint_id)
      )
      SELECT (SELECT count(*) FROM rollup_state) AS "stateRows",
        (SELECT coalesce(json_agg(json_build_array(tenant_id, fingerprint_id, delay_ms)), '[]') FROM active_tarpits) AS active,
        (SELECT coalesce(json_agg(json_build_array(tenant_id, fingerprint_id, n)), '[]') FROM stored_liars) AS liars`;
}


// Ingest samples

/** Deletes the samples received before `cutoff`; returns how many. */
export const deleteSamplesBefore = (db: Db, cutoff: Date) => deleteOlderThan(db, { table: ingestSamples, id: ingestSamples.id, time: ingestSamples.receivedAt }, cutoff);

/** Inserts buffered ingest samples in one statement. */
export async function insertSamples(db: Db, rows: readonly SampleRow[]): Promise<void> {
  if (rows.length === 0) return;
  await executePrepared(
    db,
    'ingest_samples_insert',
    sql`INSERT INTO ingest_samples ${insertRows(ingestSamples, rows, ['tenantSlug', 'receivedAt', 'outcome', 'latencyMs', 'eventCount'])}`,
  );
}

// Re-judging when a reverse DNS answer arrives

/** A stored event whose verdict awaits a reverse DNS answer: what judging it again reads. */
export interface AwaitingEvent {
  id: string;
  tenantId: string;
  uaRaw: string;
  headers: Record<string, string>;
  evidence: Record<string, unknown>;
  ja4: string | null;
  asn: number | null;
  ipHash: string;
  uaClass: string;
  fingerprintId: string;
}

/**
 * The oldest `limit` events from the addresses with these hashes whose reverse DNS answer is still
 * to come (the partial index holds only those), locked until the caller's transaction ends.
 */
export async function eventsAwaitingRdns(tx: Db, ipHashes: readonly string[], limit: number): Promise<AwaitingEvent[]> {
  if (ipHashes.length === 0) return [];
  const rows = rowsOf<Record<string, unknown>>(
    await tx.execute(sql`SELECT id, tenant_id AS "tenantId", ua_raw AS "uaRaw", headers, evidence, ja4, asn, ip_hash AS "ipHash",
        ua_class AS "uaClass", fingerprint_id AS "fingerprintId"
      FROM honeypot_events WHERE ip_hash = ANY(${`{${ipHashes.join(',')}}`}::text[]) AND (evidence -> 'rdns' ->> 'status') = 'pending'
      ORDER BY received_at, id LIMIT ${limit} FOR UPDATE`),
  );
  return rows.map((r) => ({
    id: String(r.id),
    tenantId: String(r.tenantId),
    uaRaw: String(r.uaRaw),
    headers: (r.headers as Record<string, string> | null) ?? {},
    evidence: (r.evidence as Record<string, unknown> | null) ?? {},
    ja4: r.ja4 === null ? null : String(r.ja4),
    asn: r.asn === null ? null : Number(r.asn),
    ipHash: String(r.ipHash),
    uaClass: String(r.uaClass),
    fingerprintId: String(r.fingerprintId),
  }));
}

/** A new verdict for a stored event. */
export interface VerdictUpdate {
  id: string;
  uaClass: string;
  vendorId: string | null;
  proof: string | null;
  evidence: Record<string, unknown>;
  fingerprintId: string;
}

/** Writes new verdicts (class, vendor, proof, evidence, fingerprint) over stored events, in one statement. */
export async function updateVerdicts(tx: Db, updates: readonly VerdictUpdate[]): Promise<void> {
  if (updates.length === 0) return;
  await tx.execute(sql`UPDATE honeypot_events e SET ua_class = u."uaClass", vendor_id = u."vendorId", proof = u.proof,
      evidence = u.evidence, fingerprint_id = u."fingerprintId"
    FROM jsonb_to_recordset(${JSON.stringify(updates)}::jsonb)
      AS u(id uuid, "uaClass" text, "vendorId" text, proof text, evidence jsonb, "fingerprintId" text)
    WHERE e.id = u.id`);
}
