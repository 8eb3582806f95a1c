import { type SQL, sql } from 'drizzle-orm';
import { asDate, asDateOrNull, type Db, rowsOf } from '../../../platform/db/client.ts';
import { keysetAfter, keysetUpTo, type Positioned, positioned, type Watermark } from '../../../platform/db/keyset.ts';
import type { EmpireEventRow, IncidentRow } from '../../graph/index.ts';

/** The empire's reads for the knowledge graph (graph/materialiser/ports.ts). */

/** payload.fingerprintId of an event that names a tenant, when it is a string of 1 to 200 characters (ABOUT). */
const ABOUT_FINGERPRINT = sql`CASE WHEN jsonb_typeof(e.payload -> 'fingerprintId') = 'string'
  AND length(e.payload ->> 'fingerprintId') BETWEEN 1 AND 200 THEN e.payload ->> 'fingerprintId' END`;

export async function eventsAfter(db: Db, watermark: Watermark | null, cutoff: Date, limit: number): Promise<Positioned<EmpireEventRow>[]> {
  const rows = rowsOf<Record<string, unknown>>(
    await db.execute(sql`
      SELECT e.event_id::text AS "eventId", e.received_at::text AS at, e.toolset, e.sender_id AS "senderId", e.event_type AS "eventType", e.ts,
        e.received_at AS "receivedAt", e.tenant, e.caused_by AS "causedBy", e.key_id::text AS "keyId", e.attestation_id::text AS "attestationId",
        e.compat_mode AS "compatMode", ${ABOUT_FINGERPRINT} AS "aboutFingerprint"
      FROM empire_events e
      WHERE ${keysetAfter(sql`e.received_at`, sql`e.event_id`, watermark)} AND e.received_at <= ${cutoff.toISOString()}::timestamptz
      ORDER BY e.received_at, e.event_id LIMIT ${limit}`),
  );
  return rows.map((r) =>
    positioned(
      {
        eventId: String(r.eventId),
        toolset: String(r.toolset),
        senderId: String(r.senderId),
        eventType: String(r.eventType),
        ts: asDate(r.ts),
        receivedAt: asDate(r.receivedAt),
        tenant: (r.tenant as string | null) ?? null,
        causedBy: (r.causedBy as string | null) ?? null,
        keyId: (r.keyId as string | null) ?? null,
        attestationId: (r.attestationId as string | null) ?? null,
        compatMode: Boolean(r.compatMode),
        aboutFingerprint: (r.aboutFingerprint as string | null) ?? null,
      },
      r.at,
      r.eventId,
      r.receivedAt,
    ),
  );
}

/**
 * CAUSED_BY pairs that a batch of events completes (graph/materialiser/ports.ts). The second half
 * finds earlier effects that named a cause arriving only now (index empire_events_caused_by_idx).
 */
export async function causePairs(db: Db, batch: readonly EmpireEventRow[], end: Watermark): Promise<{ effectId: string; causeId: string }[]> {
  if (batch.length === 0) return [];
  const effects = batch.filter((e) => e.causedBy !== null).map((e) => [e.eventId, e.toolset, e.causedBy]);
  const causes = batch.map((e) => [e.toolset, e.senderId]);
  const read = keysetUpTo(sql`x.received_at`, sql`x.event_id`, end);
  return rowsOf<{ effectId: string; causeId: string }>(
    await db.execute(sql`
      SELECT b.v ->> 0 AS "effectId", x.event_id::text AS "causeId"
      FROM jsonb_array_elements(${JSON.stringify(effects)}::jsonb) AS b(v)
      JOIN empire_events x ON x.toolset = b.v ->> 1 AND x.sender_id = b.v ->> 2
      WHERE ${read}
      UNION
      SELECT x.event_id::text, c.event_id::text
      FROM jsonb_array_elements(${JSON.stringify(causes)}::jsonb) AS b(v)
      JOIN empire_events x ON x.toolset = b.v ->> 0 AND x.caused_by = b.v ->> 1
      JOIN empire_events c ON c.toolset = b.v ->> 0 AND c.sender_id = b.v ->> 1
      WHERE ${read}`),
  );
}

export async function incidents(db: Db): Promise<IncidentRow[]> {
  return rowsOf<Record<string, unknown>>(
    await db.execute(sql`SELECT id::text AS id, toolset, severity, status, source, title, opened_at AS "openedAt", resolved_at AS "resolvedAt", event_ids AS "eventIds" FROM empire_incidents`),
  ).map((r) => ({
    id: String(r.id),
    toolset: String(r.toolset),
    severity: String(r.severity),
    status: String(r.status),
    source: String(r.source),
    title: String(r.title),
    openedAt: asDate(r.openedAt),
    resolvedAt: asDateOrNull(r.resolvedAt),
    eventIds: Array.isArray(r.eventIds) ? (r.eventIds as unknown[]).filter((v): v is string => typeof v === 'string') : [],
  }));
}

export const eventsUpTo = (watermark: Watermark | null): SQL =>
  sql`SELECT e.event_id::text AS id, e.toolset, e.sender_id, e.tenant, e.caused_by, e.key_id::text AS key_id, e.attestation_id::text AS attestation_id,
        ${ABOUT_FINGERPRINT} AS about
      FROM empire_events e WHERE ${keysetUpTo(sql`e.received_at`, sql`e.event_id`, watermark)}`;

export const incidentEvents = (): SQL => sql`SELECT id::text AS id, toolset, event_ids FROM empire_incidents`;
