import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { distinctToolsets } from '../../../platform/db/distinct-toolsets.ts';
import { andToolsetInReach } from '../../../platform/db/reach.ts';

/**
 * The SQL of the empire's read views: the per-toolset dashboard, the overview, the ingest SLO and
 * event replay (docs/empire/README.md, "Reads"). Event-time windows are [from, to) over `ts`.
 */

const at = (date: Date) => sql`${date.toISOString()}::timestamptz`;
const numberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

// Dashboard

export interface DashboardCounts {
  /** Events per hour index from `from` (0 = the first hour); hours without events are absent. */
  hours: { hour: number; count: number }[];
  eventTypes: { eventType: string; count: number }[];
  /** `tenant` null counts the events that named none. */
  tenants: { tenant: string | null; count: number }[];
  total: { count: number; signed: number; linked: number };
}

/**
 * Every count of a toolset's dashboard in one pass over its events in [from, to) (of one tenant
 * when given): per hour, per event type, per tenant and in total, as grouping sets.
 */
export async function dashboardCounts(db: Db, filter: { toolset: string; tenant: string | null; from: Date; to: Date }): Promise<DashboardCounts> {
  const result = await db.execute(sql`
    SELECT GROUPING(hour, event_type, tenant)::int AS g, hour, event_type AS "eventType", tenant, count(*)::int AS count,
      count(*) FILTER (WHERE NOT compat_mode)::int AS signed, count(*) FILTER (WHERE caused_by IS NOT NULL)::int AS linked
    FROM (
      SELECT floor(extract(epoch FROM ts - ${at(filter.from)}) / 3600)::int AS hour, event_type, tenant, compat_mode, caused_by
      FROM empire_events
      WHERE toolset = ${filter.toolset} AND ts >= ${at(filter.from)} AND ts < ${at(filter.to)}
        ${filter.tenant === null ? sql`` : sql`AND tenant = ${filter.tenant}`}
    ) e
    GROUP BY GROUPING SETS ((hour), (event_type), (tenant), ())`);
  const counts: DashboardCounts = { hours: [], eventTypes: [], tenants: [], total: { count: 0, signed: 0, linked: 0 } };
  type Row = { g: number; hour: number | null; eventType: string | null; tenant: string | null; count: number; signed: number; linked: number };
  for (const r of rowsOf<Row>(result)) {
    // GROUPING's bits, highest first: hour, event_type, tenant; a 1 means the column was grouped away.
    switch (Number(r.g)) {
      case 0b011:
        counts.hours.push({ hour: Number(r.hour), count: Number(r.count) });
        break;
      case 0b101:
        counts.eventTypes.push({ eventType: r.eventType as string, count: Number(r.count) });
        break;
      case 0b110:
        counts.tenants.push({ tenant: r.tenant, count: Number(r.count) });
        break;
      case 0b111:
        counts.total = { count: Number(r.count), signed: Number(r.signed), linked: Number(r.linked) };
        break;
    }
  }
  return counts;
}

/** The event time of the toolset's latest event before `to` (of one tenant when given), or null. */
export async function lastEventAt(db: Db, filter: { toolset: string; tenant: string | null; to: Date }): Promise<Date | null> {
  const result = await db.execute(sql`
    SELECT max(ts) AS "lastEventAt" FROM empire_events
    WHERE toolset = ${filter.toolset} AND ts < ${at(filter.to)} ${filter.tenant === null ? sql`` : sql`AND tenant = ${filter.tenant}`}`);
  const value = rowsOf<{ lastEventAt: unknown }>(result)[0]?.lastEventAt;
  return value === null || value === undefined ? null : new Date(value as string);
}

// Overview

/**
 * Every toolset that has sent an event (of those in `reach` unless it is null), with the time of its
 * latest event before `to` (a loose index scan).
 */
export async function toolsetsWithLastEvent(db: Db, to: Date, reach: readonly string[] | null = null): Promise<{ toolset: string; lastEventAt: Date | null }[]> {
  const result = await db.execute(sql`
    ${distinctToolsets('empire_events')}
    SELECT t.toolset, (SELECT max(e.ts) FROM empire_events e WHERE e.toolset = t.toolset AND e.ts < ${at(to)}) AS "lastEventAt"
    FROM toolsets t WHERE t.toolset IS NOT NULL ${andToolsetInReach(sql`t.toolset`, reach)} ORDER BY t.toolset`);
  return rowsOf<{ toolset: string; lastEventAt: unknown }>(result).map((r) => ({
    toolset: r.toolset,
    lastEventAt: r.lastEventAt === null ? null : new Date(r.lastEventAt as string),
  }));
}

// Ingest SLO

export interface ToolsetSamples {
  toolset: string;
  totalSamples: number;
  okCount: number;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  /** Sample counts per outcome. */
  outcomes: { outcome: string; count: number }[];
}

/**
 * Per toolset, in one pass over the ingest samples received in (from, to]: counts and exact
 * latency percentiles (`percentile_disc`: the smallest latency whose cumulative share reaches p),
 * and the counts per outcome (grouping sets). Samples of requests that named no toolset are not
 * attributed to one.
 */
export async function samplesByToolset(db: Db, from: Date, to: Date, reach: readonly string[] | null = null): Promise<ToolsetSamples[]> {
  const result = await db.execute(sql`
    SELECT toolset, GROUPING(outcome)::int AS "allOutcomes", outcome, count(*)::int AS count,
      count(*) FILTER (WHERE outcome = 'ok')::int AS "okCount",
      (percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_ms))::float8 AS "p50Ms",
      (percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms))::float8 AS "p95Ms",
      (percentile_disc(0.99) WITHIN GROUP (ORDER BY latency_ms))::float8 AS "p99Ms"
    FROM empire_ingest_samples
    WHERE toolset IS NOT NULL AND received_at > ${at(from)} AND received_at <= ${at(to)} ${andToolsetInReach(sql`toolset`, reach)}
    GROUP BY GROUPING SETS ((toolset), (toolset, outcome))`);
  const byToolset = new Map<string, ToolsetSamples>();
  const rows = rowsOf<Record<string, unknown>>(result);
  for (const r of rows.filter((row) => Number(row.allOutcomes) === 1)) {
    byToolset.set(String(r.toolset), {
      toolset: String(r.toolset),
      totalSamples: Number(r.count),
      okCount: Number(r.okCount),
      p50Ms: numberOrNull(r.p50Ms),
      p95Ms: numberOrNull(r.p95Ms),
      p99Ms: numberOrNull(r.p99Ms),
      outcomes: [],
    });
  }
  for (const r of rows.filter((row) => Number(row.allOutcomes) === 0)) byToolset.get(String(r.toolset))?.outcomes.push({ outcome: String(r.outcome), count: Number(r.count) });
  return [...byToolset.values()];
}

/** Every toolset's ingest samples received in (from, to] pooled: count, ok count and the exact p95 latency (the region SLO). */
export async function samplesOverall(db: Db, from: Date, to: Date): Promise<{ totalSamples: number; okCount: number; p95Ms: number | null }> {
  const [r] = rowsOf<Record<string, unknown>>(
    await db.execute(sql`
      SELECT count(*)::int AS count, count(*) FILTER (WHERE outcome = 'ok')::int AS "okCount",
        (percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms))::float8 AS "p95Ms"
      FROM empire_ingest_samples
      WHERE toolset IS NOT NULL AND received_at > ${at(from)} AND received_at <= ${at(to)}`),
  );
  return { totalSamples: Number(r?.count ?? 0), okCount: Number(r?.okCount ?? 0), p95Ms: numberOrNull(r?.p95Ms) };
}

/** The toolsets (of those in `reach` unless it is null) with an ingest sample received in (from, to]: one index probe per toolset. */
export async function sampledToolsets(db: Db, from: Date, to: Date, reach: readonly string[] | null = null): Promise<string[]> {
  const result = await db.execute(sql`
    ${distinctToolsets('empire_ingest_samples')}
    SELECT t.toolset FROM toolsets t
    WHERE t.toolset IS NOT NULL ${andToolsetInReach(sql`t.toolset`, reach)}
      AND EXISTS (SELECT 1 FROM empire_ingest_samples s WHERE s.toolset = t.toolset AND s.received_at > ${at(from)} AND s.received_at <= ${at(to)})`);
  return rowsOf<{ toolset: string }>(result).map((r) => r.toolset);
}

// Replay

export interface StoredEmpireEvent {
  eventId: string;
  toolset: string;
  senderId: string;
  eventType: string;
  ts: Date;
  tsSent: string | null;
  tenant: string | null;
  causedBy: string | null;
  payload: Record<string, unknown>;
  eventHash: string;
  keyId: string | null;
  compatMode: boolean;
  schemaVersion: number;
  receivedAt: Date;
  bodyBytes: number;
  signedMembers: number | null;
  attestationId: string | null;
}

const STORED_COLUMNS = sql`event_id AS "eventId", toolset, sender_id AS "senderId", event_type AS "eventType", ts, ts_sent AS "tsSent", tenant,
  caused_by AS "causedBy", payload, event_hash AS "eventHash", key_id AS "keyId", compat_mode AS "compatMode", schema_version AS "schemaVersion",
  received_at AS "receivedAt", body_bytes AS "bodyBytes", signed_members AS "signedMembers", attestation_id AS "attestationId"`;

function toStored(r: Record<string, unknown>): StoredEmpireEvent {
  return {
    ...(r as unknown as StoredEmpireEvent),
    ts: new Date(r.ts as string),
    receivedAt: new Date(r.receivedAt as string),
    schemaVersion: Number(r.schemaVersion),
    bodyBytes: Number(r.bodyBytes),
    signedMembers: numberOrNull(r.signedMembers),
  };
}

/** A toolset's event by our event id (a UUID) or, failing that, by the toolset's own id. */
export async function storedEvent(db: Db, toolset: string, id: string, idIsUuid: boolean): Promise<StoredEmpireEvent | null> {
  if (idIsUuid) {
    const [row] = rowsOf<Record<string, unknown>>(await db.execute(sql`SELECT ${STORED_COLUMNS} FROM empire_events WHERE event_id = ${id} AND toolset = ${toolset}`));
    if (row) return toStored(row);
  }
  const [row] = rowsOf<Record<string, unknown>>(await db.execute(sql`SELECT ${STORED_COLUMNS} FROM empire_events WHERE toolset = ${toolset} AND sender_id = ${id}`));
  return row ? toStored(row) : null;
}

/** A toolset's most recently received events, newest first. */
export async function recentEvents(db: Db, toolset: string, limit: number): Promise<StoredEmpireEvent[]> {
  const result = await db.execute(sql`
    SELECT ${STORED_COLUMNS} FROM empire_events WHERE toolset = ${toolset} ORDER BY received_at DESC, event_id DESC LIMIT ${limit}`);
  return rowsOf<Record<string, unknown>>(result).map(toStored);
}
