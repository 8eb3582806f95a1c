import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/client.ts';
import { olderThan, type TimeCursor } from '../../platform/db/paging.ts';
import { executePrepared, insertRows } from '../../platform/db/prepared.ts';
import { toolsetInReach } from '../../platform/db/reach.ts';
import { provenanceAttestations, provenanceKeys, toolsetPolicies } from './schema.ts';

/** The only SQL of provenance: signing keys, attestation rows and per-toolset admission policies. */

export type KeyRow = typeof provenanceKeys.$inferSelect;
export type AttestationRow = typeof provenanceAttestations.$inferSelect;
export type PolicyRow = typeof toolsetPolicies.$inferSelect;

export async function insertKey(db: Db, row: KeyRow): Promise<void> {
  await db.insert(provenanceKeys).values(row);
}

export async function keyById(db: Db, id: string): Promise<KeyRow | null> {
  const [row] = await db.select().from(provenanceKeys).where(eq(provenanceKeys.id, id));
  return row ?? null;
}

export async function lockKey(tx: Db, id: string): Promise<KeyRow | null> {
  const [row] = await tx.select().from(provenanceKeys).where(eq(provenanceKeys.id, id)).for('update');
  return row ?? null;
}

export async function retireKey(tx: Db, id: string, at: Date): Promise<KeyRow> {
  const [row] = await tx.update(provenanceKeys).set({ status: 'retired', retiredAt: at }).where(eq(provenanceKeys.id, id)).returning();
  return row!;
}

/** A toolset's keys with this public key (at most one in practice: registering a key twice is refused). */
export async function keysWithPublicKey(db: Db, toolset: string, publicKeyB64: string): Promise<KeyRow[]> {
  return db
    .select()
    .from(provenanceKeys)
    .where(and(eq(provenanceKeys.toolset, toolset), eq(provenanceKeys.publicKeyB64, publicKeyB64)));
}

/** Every key of a toolset, newest first. */
export async function keysOfToolset(db: Db, toolset: string): Promise<KeyRow[]> {
  return db.select().from(provenanceKeys).where(eq(provenanceKeys.toolset, toolset)).orderBy(desc(provenanceKeys.createdAt), desc(provenanceKeys.id));
}

export async function listKeys(
  db: Db,
  filter: { toolset?: string | undefined; status?: string | undefined; reach: readonly string[] | null; cursor: TimeCursor | null; limit: number },
): Promise<KeyRow[]> {
  const where = and(
    filter.toolset === undefined ? undefined : eq(provenanceKeys.toolset, filter.toolset),
    toolsetInReach(provenanceKeys.toolset, filter.reach),
    filter.status === undefined ? undefined : eq(provenanceKeys.status, filter.status),
    filter.cursor === null ? undefined : olderThan(provenanceKeys.createdAt, provenanceKeys.id, filter.cursor),
  );
  return db.select().from(provenanceKeys).where(where).orderBy(desc(provenanceKeys.createdAt), desc(provenanceKeys.id)).limit(filter.limit);
}

/** The batch's decisions in one statement (one jsonb parameter, platform/db/prepared.ts). */
export async function insertAttestations(tx: Db, rows: readonly AttestationRow[]): Promise<void> {
  if (rows.length === 0) return;
  await executePrepared(tx, 'provenance_attestations_insert', sql`INSERT INTO provenance_attestations ${insertRows(provenanceAttestations, rows)}`);
}

export async function listAttestations(
  db: Db,
  filter: {
    toolset?: string | undefined;
    source?: string | undefined;
    compatMode?: boolean | undefined;
    rejected?: boolean | undefined;
    reach: readonly string[] | null;
    cursor: TimeCursor | null;
    limit: number;
  },
): Promise<AttestationRow[]> {
  const a = provenanceAttestations;
  const where = and(
    filter.toolset === undefined ? undefined : eq(a.toolset, filter.toolset),
    toolsetInReach(a.toolset, filter.reach),
    filter.source === undefined ? undefined : eq(a.source, filter.source),
    filter.compatMode === undefined ? undefined : eq(a.compatMode, filter.compatMode),
    filter.rejected === undefined ? undefined : filter.rejected ? sql`${a.rejectionReason} IS NOT NULL` : sql`${a.rejectionReason} IS NULL`,
    filter.cursor === null ? undefined : olderThan(a.acceptedAt, a.id, filter.cursor),
  );
  return db.select().from(a).where(where).orderBy(desc(a.acceptedAt), desc(a.id)).limit(filter.limit);
}

export async function attestationsByIds(db: Db, ids: readonly string[]): Promise<AttestationRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(provenanceAttestations).where(inArray(provenanceAttestations.id, [...ids]));
}

/**
 * The admission attestation of a stored event, by what it attested. For events stored before they
 * kept their attestation's id; there is no index on `source_id`, so this reads the toolset's rows.
 */
export async function admissionAttestationOf(db: Db, key: { toolset: string; source: string; sourceId: string; eventHash: string }): Promise<AttestationRow | null> {
  const a = provenanceAttestations;
  const [row] = await db
    .select()
    .from(a)
    .where(and(eq(a.toolset, key.toolset), eq(a.source, key.source), eq(a.sourceId, key.sourceId), eq(a.eventHash, key.eventHash), sql`${a.rejectionReason} IS NULL`))
    .orderBy(desc(a.acceptedAt))
    .limit(1);
  return row ?? null;
}

// Toolset policies

export async function policyOf(db: Db, toolset: string): Promise<PolicyRow | null> {
  const [row] = await db.select().from(toolsetPolicies).where(eq(toolsetPolicies.toolset, toolset));
  return row ?? null;
}

export async function lockPolicy(tx: Db, toolset: string): Promise<PolicyRow | null> {
  const [row] = await tx.select().from(toolsetPolicies).where(eq(toolsetPolicies.toolset, toolset)).for('update');
  return row ?? null;
}

/**
 * Inserts the toolset's first policy row; false when a row exists already (one a concurrent
 * request inserted waits for that request to commit first, so a following lockPolicy sees it).
 */
export async function insertPolicyIfAbsent(tx: Db, row: PolicyRow): Promise<boolean> {
  const inserted = await tx.insert(toolsetPolicies).values(row).onConflictDoNothing({ target: toolsetPolicies.toolset }).returning({ toolset: toolsetPolicies.toolset });
  return inserted.length > 0;
}

export async function updatePolicy(tx: Db, row: PolicyRow): Promise<void> {
  await tx
    .update(toolsetPolicies)
    .set({ requireSigned: row.requireSigned, updatedBy: row.updatedBy, updatedAt: row.updatedAt })
    .where(eq(toolsetPolicies.toolset, row.toolset));
}

/**
 * Toolsets with at least one active key, and those of them whose own policy does not require
 * signed events (oldest toolset name first, at most `listedMax` named): the compliance predicate
 * signed-events-required.
 */
export async function signingCoverage(db: Db, listedMax: number): Promise<{ withKeys: number; admittingUnsigned: number; listed: string[] }> {
  const result = await db.execute(sql`
    WITH keyed AS (
      SELECT DISTINCT k.toolset FROM ${provenanceKeys} k WHERE k.status = 'active'
    ), open AS (
      SELECT keyed.toolset FROM keyed LEFT JOIN ${toolsetPolicies} p ON p.toolset = keyed.toolset
      WHERE coalesce(p.require_signed, false) = false
    )
    SELECT (SELECT count(*) FROM keyed)::int AS with_keys,
           (SELECT count(*) FROM open)::int AS admitting_unsigned,
           coalesce((SELECT json_agg(toolset ORDER BY toolset) FROM (SELECT toolset FROM open ORDER BY toolset LIMIT ${listedMax}) o), '[]'::json) AS listed`);
  const row = ((result as unknown as { rows: Record<string, unknown>[] }).rows[0] ?? {}) as { with_keys?: number; admitting_unsigned?: number; listed?: string[] | string };
  const listed = typeof row.listed === 'string' ? (JSON.parse(row.listed) as string[]) : (row.listed ?? []);
  return { withKeys: Number(row.with_keys ?? 0), admittingUnsigned: Number(row.admitting_unsigned ?? 0), listed };
}
