import { type SQL, sql } from 'drizzle-orm';
import { asDate, asDateOrNull, type Db, rowsOf } from '../../../platform/db/client.ts';

/**
 * The SQL of the honeypot reads (recent, investigate, replay, lures, sitemap, tarpits, ingest SLO);
 * rules live in service.ts. Every event query is bounded by `tenant_id IN (…)` and a `ts` range or a
 * fingerprint, so it runs on `honeypot_events_tenant_ts_idx` or `honeypot_events_fingerprint_idx`.
 * Timestamps go in as ISO text cast to timestamptz and come back as Date on both drivers.
 */

/** A stored event with its tenant's slug. */
export interface StoredEvent {
  id: string;
  tenantId: string;
  tenant: string;
  senderId: string | null;
  ts: Date;
  receivedAt: Date;
  method: string;
  path: string;
  query: string | null;
  uaRaw: string;
  ipHash: string;
  ja4: string | null;
  asn: number | null;
  country: string | null;
  referer: string | null;
  headers: Record<string, string>;
  uaClass: string;
  vendorId: string | null;
  proof: string | null;
  evidence: Record<string, unknown>;
  fingerprintId: string;
  schemaVersion: number;
  bodyBytes: number;
}

const toNumber = (value: unknown): number => Number(value);
const toNumberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
const at = (date: Date) => sql`${date.toISOString()}::timestamptz`;

/** `e.tenant_id IN (…)`; callers never pass an empty list. */
function tenantIn(column: SQL, tenantIds: readonly string[]): SQL {
  return sql`${column} IN (${sql.join(
    tenantIds.map((id) => sql`${id}::uuid`),
    sql`, `,
  )})`;
}

const EVENT_COLUMNS = sql`e.id, e.tenant_id AS "tenantId", t.slug AS tenant, e.sender_id AS "senderId", e.ts,
  e.received_at AS "receivedAt", e.method, e.path, e.query, e.ua_raw AS "uaRaw", e.ip_hash AS "ipHash", e.ja4, e.asn,
  e.country, e.referer, e.headers, e.ua_class AS "uaClass", e.vendor_id AS "vendorId", e.proof, e.evidence,
  e.fingerprint_id AS "fingerprintId", e.schema_version AS "schemaVersion", e.body_bytes AS "bodyBytes"`;

function eventOf(raw: Record<string, unknown>): StoredEvent {
  return {
    id: String(raw.id),
    tenantId: String(raw.tenantId),
    tenant: String(raw.tenant),
    senderId: (raw.senderId as string | null) ?? null,
    ts: asDate(raw.ts),
    receivedAt: asDate(raw.receivedAt),
    method: String(raw.method),
    path: String(raw.path),
    query: (raw.query as string | null) ?? null,
    uaRaw: String(raw.uaRaw),
    ipHash: String(raw.ipHash),
    ja4: (raw.ja4 as string | null) ?? null,
    asn: toNumberOrNull(raw.asn),
    country: (raw.country as string | null) ?? null,
    referer: (raw.referer as string | null) ?? null,
    headers: (raw.headers as Record<string, string> | null) ?? {},
    uaClass: String(raw.uaClass),
    vendorId: (raw.vendorId as string | null) ?? null,
    proof: (raw.proof as string | null) ?? null,
    evidence: (raw.evidence as Record<string, unknown> | null) ?? {},
    fingerprintId: String(raw.fingerprintId),
    schemaVersion: toNumber(raw.schemaVersion),
    bodyBytes: toNumber(raw.bodyBytes),
  };
}

// Events

/**
 * The newest `limit` events of the tenants, newest first (ts, then id). A lateral subquery takes
 * each tenant's newest `limit` from the (tenant_id, ts) index before they are merged, so a
 * fleet-wide read never sorts the whole table.
 */
export async function recentEvents(db: Db, tenantIds: readonly string[], limit: number): Promise<StoredEvent[]> {
  const result = await db.execute(sql`
    SELECT ${EVENT_COLUMNS}
    FROM honeypot_tenants t
    CROSS JOIN LATERAL (
      SELECT * FROM honeypot_events x WHERE x.tenant_id = t.id ORDER BY x.ts DESC, x.id DESC LIMIT ${limit}
    ) e
    WHERE ${tenantIn(sql`t.id`, tenantIds)}
    ORDER BY e.ts DESC, e.id DESC
    LIMIT ${limit}`);
  return rowsOf<Record<string, unknown>>(result).map(eventOf);
}

export async function eventById(db: Db, id: string): Promise<StoredEvent | null> {
  const result = await db.execute(sql`
    SELECT ${EVENT_COLUMNS} FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id WHERE e.id = ${id}::uuid`);
  const [row] = rowsOf<Record<string, unknown>>(result);
  return row ? eventOf(row) : null;
}

/** The newest `limit` events of one fingerprint in the tenants (fingerprint index). */
export async function fingerprintEvents(db: Db, tenantIds: readonly string[], fingerprintId: string, limit: number): Promise<StoredEvent[]> {
  const result = await db.execute(sql`
    SELECT ${EVENT_COLUMNS} FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id
    WHERE ${tenantIn(sql`e.tenant_id`, tenantIds)} AND e.fingerprint_id = ${fingerprintId}
    ORDER BY e.ts DESC, e.id DESC LIMIT ${limit}`);
  return rowsOf<Record<string, unknown>>(result).map(eventOf);
}

export interface ValueCount {
  value: string;
  count: number;
}

/**
 * How often each value of one column occurs among a fingerprint's events (all stored events, not
 * only the newest); nulls left out; most frequent first, ties by value.
 */
export async function fingerprintValueCounts(
  db: Db,
  tenantIds: readonly string[],
  fingerprintId: string,
  column: 'country' | 'path' | 'ua_class',
  limit: number,
): Promise<ValueCount[]> {
  const col = sql.raw(`e.${column}`);
  const result = await db.execute(sql`
    SELECT ${col} AS value, count(*)::int AS count FROM honeypot_events e
    WHERE ${tenantIn(sql`e.tenant_id`, tenantIds)} AND e.fingerprint_id = ${fingerprintId} AND ${col} IS NOT NULL
    GROUP BY ${col} ORDER BY count(*) DESC, ${col} ASC LIMIT ${limit}`);
  return rowsOf<{ value: string; count: unknown }>(result).map((r) => ({ value: String(r.value), count: toNumber(r.count) }));
}

/** Envelope facts of the newest received events, newest first (received_at index). */
export async function recentEnvelopes(db: Db, tenantIds: readonly string[], limit: number) {
  const result = await db.execute(sql`
    SELECT e.id, t.slug AS tenant, e.received_at AS "receivedAt", e.schema_version AS "schemaVersion", e.body_bytes AS "bodyBytes"
    FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id
    WHERE ${tenantIn(sql`e.tenant_id`, tenantIds)}
    ORDER BY e.received_at DESC, e.id DESC LIMIT ${limit}`);
  return rowsOf<Record<string, unknown>>(result).map((r) => ({
    id: String(r.id),
    tenant: String(r.tenant),
    receivedAt: asDate(r.receivedAt),
    schemaVersion: toNumber(r.schemaVersion),
    bodyBytes: toNumber(r.bodyBytes),
  }));
}

// Fingerprints

export interface FingerprintRow {
  tenant: string;
  fingerprintId: string;
  ja4: string | null;
  uaNormalized: string;
  uaSample: string;
  lastUaClass: string;
  asn: number | null;
  firstSeen: Date;
  lastSeen: Date;
  eventCount: number;
  liarCount: number;
}

const FINGERPRINT_COLUMNS = sql`t.slug AS tenant, f.fingerprint_id AS "fingerprintId", f.ja4, f.ua_normalized AS "uaNormalized",
  f.ua_sample AS "uaSample", f.last_ua_class AS "lastUaClass", f.asn, f.first_seen AS "firstSeen", f.last_seen AS "lastSeen",
  f.event_count AS "eventCount", f.liar_count AS "liarCount"`;

function fingerprintOfRaw(raw: Record<string, unknown>): FingerprintRow {
  return {
    tenant: String(raw.tenant),
    fingerprintId: String(raw.fingerprintId),
    ja4: (raw.ja4 as string | null) ?? null,
    uaNormalized: String(raw.uaNormalized),
    uaSample: String(raw.uaSample),
    lastUaClass: String(raw.lastUaClass),
    asn: toNumberOrNull(raw.asn),
    firstSeen: asDate(raw.firstSeen),
    lastSeen: asDate(raw.lastSeen),
    eventCount: toNumber(raw.eventCount),
    liarCount: toNumber(raw.liarCount),
  };
}

/** The fingerprint's row in each of the tenants that saw it. */
export async function fingerprintRows(db: Db, tenantIds: readonly string[], fingerprintId: string): Promise<FingerprintRow[]> {
  const result = await db.execute(sql`
    SELECT ${FINGERPRINT_COLUMNS} FROM honeypot_fingerprints f JOIN honeypot_tenants t ON t.id = f.tenant_id
    WHERE ${tenantIn(sql`f.tenant_id`, tenantIds)} AND f.fingerprint_id = ${fingerprintId}
    ORDER BY f.last_seen DESC, t.slug`);
  return rowsOf<Record<string, unknown>>(result).map(fingerprintOfRaw);
}

/** Every fingerprint of the tenants that presents this normalised UA (ua_normalized index). */
export async function fingerprintsWithUa(db: Db, tenantIds: readonly string[], uaNormalized: string): Promise<FingerprintRow[]> {
  const result = await db.execute(sql`
    SELECT ${FINGERPRINT_COLUMNS} FROM honeypot_fingerprints f JOIN honeypot_tenants t ON t.id = f.tenant_id
    WHERE f.ua_normalized = ${uaNormalized} AND ${tenantIn(sql`f.tenant_id`, tenantIds)}
    ORDER BY f.event_count DESC, f.fingerprint_id, t.slug`);
  return rowsOf<Record<string, unknown>>(result).map(fingerprintOfRaw);
}

// Tarpits

export interface TarpitView {
  active: boolean;
  fingerprintId: string;
  tenant: string;
  triggeredAt: Date;
  expiresAt: Date;
  delayMs: number;
  reason: string;
  liarEventCount: number;
}

const TARPIT_COLUMNS = sql`t.slug AS tenant, p.fingerprint_id AS "fingerprintId", p.triggered_at AS "triggeredAt",
  p.expires_at AS "expiresAt", p.delay_ms AS "delayMs", p.reason, p.liar_event_count AS "liarEventCount"`;

function tarpitOf(raw: Record<string, unknown>, active: boolean): TarpitView {
  return {
    active,
    fingerprintId: String(raw.fingerprintId),
    tenant: String(raw.tenant),
    triggeredAt: asDate(raw.triggeredAt),
    expiresAt: asDate(raw.expiresAt),
    delayMs: toNumber(raw.delayMs),
    reason: String(raw.reason),
    liarEventCount: toNumber(raw.liarEventCount),
  };
}

/** A tarpit is in force when its row is active and its expiry is still ahead (as ingest decides). */
const inForce = (now: Date) => sql`(p.active AND p.expires_at > ${at(now)})`;

/** Tarpits in force, newest trigger first; optionally of one fingerprint. */
export async function activeTarpits(db: Db, tenantIds: readonly string[], now: Date, fingerprintId?: string): Promise<TarpitView[]> {
  const result = await db.execute(sql`
    SELECT ${TARPIT_COLUMNS} FROM honeypot_tarpits p JOIN honeypot_tenants t ON t.id = p.tenant_id
    WHERE ${tenantIn(sql`p.tenant_id`, tenantIds)} AND ${inForce(now)}
      ${fingerprintId === undefined ? sql`` : sql`AND p.fingerprint_id = ${fingerprintId}`}
    ORDER BY p.triggered_at DESC, p.fingerprint_id, t.slug`);
  return rowsOf<Record<string, unknown>>(result).map((r) => tarpitOf(r, true));
}

/** Tarpits no longer in force (ended or expired), newest trigger first. */
export async function pastTarpits(db: Db, tenantIds: readonly string[], now: Date, limit: number): Promise<TarpitView[]> {
  const result = await db.execute(sql`
    SELECT ${TARPIT_COLUMNS} FROM honeypot_tarpits p JOIN honeypot_tenants t ON t.id = p.tenant_id
    WHERE ${tenantIn(sql`p.tenant_id`, tenantIds)} AND NOT ${inForce(now)}
    ORDER BY p.triggered_at DESC, p.fingerprint_id, t.slug LIMIT ${limit}`);
  return rowsOf<Record<string, unknown>>(result).map((r) => tarpitOf(r, false));
}

// Lures

export interface LureCounts {
  family: number;
  hits24h: number;
  hits7d: number;
  uniqueIpHashes24h: number;
  uniqueFingerprints24h: number;
  lastHitAt: Date | null;
}

/**
 * `CASE WHEN path LIKE p0 THEN 0 WHEN path LIKE p1 THEN 1 … END`: the index of the first pattern
 * the path matches (first-match), or null. Patterns are bound parameters.
 */
function firstMatch(patterns: readonly string[]): SQL {
  return sql`CASE ${sql.join(
    patterns.map((p, i) => sql`WHEN e.path LIKE ${p} THEN ${sql.raw(String(i))}`),
    sql` `,
  )} END`;
}

/** Per family index: hits in [since24h, ∞) and [since7d, ∞), distinct IP hashes and fingerprints of the 24 h. */
export async function lureCounts(db: Db, tenantIds: readonly string[], patterns: readonly string[], since24h: Date, since7d: Date): Promise<LureCounts[]> {
  if (patterns.length === 0) return [];
  const result = await db.execute(sql`
    SELECT family,
      count(*) FILTER (WHERE ts >= ${at(since24h)})::int AS "hits24h",
      count(*)::int AS "hits7d",
      count(DISTINCT ip_hash) FILTER (WHERE ts >= ${at(since24h)})::int AS "uniqueIpHashes24h",
      count(DISTINCT fingerprint_id) FILTER (WHERE ts >= ${at(since24h)})::int AS "uniqueFingerprints24h",
      max(ts) AS "lastHitAt"
    FROM (
      SELECT ${firstMatch(patterns)} AS family, e.ts, e.ip_hash, e.fingerprint_id
      FROM honeypot_events e
      WHERE ${tenantIn(sql`e.tenant_id`, tenantIds)} AND e.ts >= ${at(since7d)}
    ) m
    WHERE family IS NOT NULL
    GROUP BY family`);
  return rowsOf<Record<string, unknown>>(result).map((r) => ({
    family: toNumber(r.family),
    hits24h: toNumber(r.hits24h),
    hits7d: toNumber(r.hits7d),
    uniqueIpHashes24h: toNumber(r.uniqueIpHashes24h),
    uniqueFingerprints24h: toNumber(r.uniqueFingerprints24h),
    lastHitAt: asDateOrNull(r.lastHitAt),
  }));
}

/** Per family index and user-agent class: hits since `since`. */
export async function lureClassCounts(db: Db, tenantIds: readonly string[], patterns: readonly string[], since: Date) {
  if (patterns.length === 0) return [];
  const result = await db.execute(sql`
    SELECT family, ua_class AS "uaClass", count(*)::int AS count
    FROM (
      SELECT ${firstMatch(patterns)} AS family, e.ua_class
      FROM honeypot_events e
      WHERE ${tenantIn(sql`e.tenant_id`, tenantIds)} AND e.ts >= ${at(since)}
    ) m
    WHERE family IS NOT NULL
    GROUP BY family, ua_class`);
  return rowsOf<Record<string, unknown>>(result).map((r) => ({ family: toNumber(r.family), uaClass: String(r.uaClass), count: toNumber(r.count) }));
}

// Sitemap

export interface GeneratedPathCount {
  root: string;
  path: string;
  hits24h: number;
  hits7d: number;
}

/**
 * Hits per distinct path strictly below each root (`LIKE root || '_%'`: at least one character
 * after the root), in [since24h, ∞) and [since7d, ∞). Roots contain no LIKE wildcards.
 */
export async function generatedPathCounts(db: Db, tenantIds: readonly string[], roots: readonly string[], since24h: Date, since7d: Date): Promise<GeneratedPathCount[]> {
  const rootOf = sql`CASE ${sql.join(
    roots.map((r) => sql`WHEN e.path LIKE ${`${r}_%`} THEN ${r}`),
    sql` `,
  )} END`;
  const result = await db.execute(sql`
    SELECT root, path, count(*) FILTER (WHERE ts >= ${at(since24h)})::int AS "hits24h", count(*)::int AS "hits7d"
    FROM (
      SELECT ${rootOf} AS root, e.path, e.ts FROM honeypot_events e
      WHERE ${tenantIn(sql`e.tenant_id`, tenantIds)} AND e.ts >= ${at(since7d)}
    ) m
    WHERE root IS NOT NULL
    GROUP BY root, path`);
  return rowsOf<Record<string, unknown>>(result).map((r) => ({
    root: String(r.root),
    path: String(r.path),
    hits24h: toNumber(r.hits24h),
    hits7d: toNumber(r.hits7d),
  }));
}

/** Distinct IP hashes per root in [since, ∞), same membership rule as above. */
export async function generatedUniqueIps(db: Db, tenantIds: readonly string[], roots: readonly string[], since: Date): Promise<Map<string, number>> {
  const rootOf = sql`CASE ${sql.join(
    roots.map((r) => sql`WHEN e.path LIKE ${`${r}_%`} THEN ${r}`),
    sql` `,
  )} END`;
  const result = await db.execute(sql`
    SELECT root, count(DISTINCT ip_hash)::int AS n
    FROM (
      SELECT ${rootOf} AS root, e.ip_hash FROM honeypot_events e
      WHERE ${tenantIn(sql`e.tenant_id`, tenantIds)} AND e.ts >= ${at(since)}
    ) m
    WHERE root IS NOT NULL
    GROUP BY root`);
  return new Map(rowsOf<{ root: string; n: unknown }>(result).map((r) => [String(r.root), toNumber(r.n)]));
}

// Ingest samples

export interface SampleSummary {
  totalSamples: number;
  okCount: number;
  signatureFailureCount: number;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
}

/**
 * Counts and exact percentiles (`percentile_disc`: the smallest stored latency whose cumulative
 * share reaches p) over the samples received in [from, to].
 */
export async function sampleSummary(db: Db, from: Date, to: Date, signatureFailures: readonly string[]): Promise<SampleSummary> {
  const result = await db.execute(sql`
    SELECT count(*)::int AS "totalSamples",
      count(*) FILTER (WHERE outcome = 'ok')::int AS "okCount",
      count(*) FILTER (WHERE outcome IN (${sql.join(
        signatureFailures.map((o) => sql`${o}`),
        sql`, `,
      )}))::int AS "signatureFailureCount",
      (percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_ms))::float8 AS "p50Ms",
      (percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms))::float8 AS "p95Ms",
      (percentile_disc(0.99) WITHIN GROUP (ORDER BY latency_ms))::float8 AS "p99Ms"
    FROM ingest_samples WHERE received_at >= ${at(from)} AND received_at <= ${at(to)}`);
  const [r] = rowsOf<Record<string, unknown>>(result);
  return {
    totalSamples: toNumber(r?.totalSamples ?? 0),
    okCount: toNumber(r?.okCount ?? 0),
    signatureFailureCount: toNumber(r?.signatureFailureCount ?? 0),
    p50Ms: toNumberOrNull(r?.p50Ms),
    p95Ms: toNumberOrNull(r?.p95Ms),
    p99Ms: toNumberOrNull(r?.p99Ms),
  };
}

/**
 * Sample counts per value of `outcome` or `tenant_slug` in [from, to]; most first, ties by value
 * (nulls last), at most `limit` groups: the tenant header is caller-supplied, so unsigned
 * requests could otherwise add any number of made-up slugs.
 */
export async function sampleCountsBy(db: Db, column: 'outcome' | 'tenant_slug', from: Date, to: Date, limit = 100): Promise<{ value: string | null; count: number }[]> {
  const col = sql.raw(column);
  const result = await db.execute(sql`
    SELECT ${col} AS value, count(*)::int AS count FROM ingest_samples
    WHERE received_at >= ${at(from)} AND received_at <= ${at(to)}
    GROUP BY ${col} ORDER BY count(*) DESC, ${col} ASC NULLS LAST LIMIT ${limit}`);
  return rowsOf<{ value: string | null; count: unknown }>(result).map((r) => ({ value: r.value ?? null, count: toNumber(r.count) }));
}
