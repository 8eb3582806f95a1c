import { type SQL, sql } from 'drizzle-orm';
import { asDate, asDateOrNull, type Db, rowsOf } from '../../../platform/db/client.ts';
import { keysetAfter, keysetUpTo, type Positioned, positioned, type Watermark } from '../../../platform/db/keyset.ts';
import type { AttestationRow, KeyRow } from '../../graph/index.ts';

/** Provenance's reads for the knowledge graph (graph/materialiser/ports.ts). */

export async function attestationsAfter(db: Db, watermark: Watermark | null, cutoff: Date, limit: number): Promise<Positioned<AttestationRow>[]> {
  const rows = rowsOf<Record<string, unknown>>(
    await db.execute(sql`
      SELECT a.id::text AS id, a.accepted_at::text AS at, a.toolset, a.source, a.kind AS "eventType", a.accepted_at AS "acceptedAt", a.compat_mode AS "compatMode",
        a.rejection_reason AS "rejectionReason", a.signature_b64 IS NOT NULL AS signed, a.toolset_key_id::text AS "keyId"
      FROM provenance_attestations a
      WHERE ${keysetAfter(sql`a.accepted_at`, sql`a.id`, watermark)} AND a.accepted_at <= ${cutoff.toISOString()}::timestamptz
      ORDER BY a.accepted_at, a.id LIMIT ${limit}`),
  );
  return rows.map((r) =>
    positioned(
      {
        id: String(r.id),
        toolset: String(r.toolset),
        source: String(r.source),
        eventType: String(r.eventType),
        acceptedAt: asDate(r.acceptedAt),
        compatMode: Boolean(r.compatMode),
        rejectionReason: (r.rejectionReason as string | null) ?? null,
        signed: Boolean(r.signed),
        keyId: (r.keyId as string | null) ?? null,
      },
      r.at,
      r.id,
      r.acceptedAt,
    ),
  );
}

export async function keys(db: Db): Promise<KeyRow[]> {
  return rowsOf<Record<string, unknown>>(await db.execute(sql`SELECT id::text AS id, toolset, status, created_at AS "createdAt", retired_at AS "retiredAt" FROM provenance_keys`)).map((r) => ({
    id: String(r.id),
    toolset: String(r.toolset),
    status: String(r.status),
    createdAt: asDate(r.createdAt),
    retiredAt: asDateOrNull(r.retiredAt),
  }));
}

export const attestationsUpTo = (watermark: Watermark | null): SQL =>
  sql`SELECT a.id::text AS id, a.toolset_key_id::text AS key_id FROM provenance_attestations a WHERE ${keysetUpTo(sql`a.accepted_at`, sql`a.id`, watermark)}`;

export const keyToolsets = (): SQL => sql`SELECT id::text AS id, toolset FROM provenance_keys`;
