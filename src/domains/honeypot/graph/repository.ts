import { type SQL, sql } from 'drizzle-orm';
import { asDate, asDateOrNull, type Db, rowsOf } from '../../../platform/db/client.ts';
import { keysetAfter, keysetUpTo, type Positioned, positioned, type Watermark } from '../../../platform/db/keyset.ts';
import type { GraphTenantRow, HoneypotEventRow } from '../../graph/index.ts';

/** The honeypot's reads for the knowledge graph (graph/materialiser/ports.ts). */

export async function eventsAfter(db: Db, watermark: Watermark | null, cutoff: Date, limit: number): Promise<Positioned<HoneypotEventRow>[]> {
  const rows = rowsOf<{ id: string; at: string; receivedAt: unknown; slug: string; fingerprintId: string; ja4: string | null; vendorId: string | null; uaClass: string; ts: unknown }>(
    await db.execute(sql`
      SELECT e.id::text AS id, e.received_at::text AS at, e.received_at AS "receivedAt", t.slug, e.fingerprint_id AS "fingerprintId", e.ja4, e.vendor_id AS "vendorId", e.ua_class AS "uaClass", e.ts
      FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id
      WHERE ${keysetAfter(sql`e.received_at`, sql`e.id`, watermark)} AND e.received_at <= ${cutoff.toISOString()}::timestamptz
      ORDER BY e.received_at, e.id LIMIT ${limit}`),
  );
  return rows.map((r) => positioned({ tenantSlug: r.slug, fingerprintId: r.fingerprintId, ja4: r.ja4, vendorId: r.vendorId, uaClass: r.uaClass, ts: asDate(r.ts) }, r.at, r.id, r.receivedAt));
}

export async function tenants(db: Db): Promise<GraphTenantRow[]> {
  return rowsOf<Record<string, unknown>>(await db.execute(sql`SELECT slug, name, created_at AS "createdAt", disabled_at AS "disabledAt" FROM honeypot_tenants`)).map((r) => ({
    slug: String(r.slug),
    name: String(r.name),
    createdAt: asDate(r.createdAt),
    disabledAt: asDateOrNull(r.disabledAt),
  }));
}

export const eventsUpTo = (watermark: Watermark | null): SQL =>
  sql`SELECT DISTINCT t.slug, e.fingerprint_id AS fp, e.ja4, e.vendor_id FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id
      WHERE ${keysetUpTo(sql`e.received_at`, sql`e.id`, watermark)}`;

export const tenantSlugs = (): SQL => sql`SELECT slug FROM honeypot_tenants`;
