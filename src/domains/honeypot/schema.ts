import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  real,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * A honeypot site (spec A "Tenant", D2). The signing secret verifies its ingest HMACs, so it must
 * be kept in a form that can compute them: it is stored as issued and never returned by reads.
 * After a rotation the previous secret keeps verifying until `previousValidUntil`.
 */
export const honeypotTenants = pgTable('honeypot_tenants', {
  id: uuid('id').primaryKey(),
  slug: text('slug').notNull().unique(),
  name: text('name').notNull(),
  notes: text('notes'),
  signingSecret: text('signing_secret').notNull(),
  previousSecret: text('previous_secret'),
  previousValidUntil: ts('previous_valid_until'),
  createdAt: ts('created_at').notNull(),
  disabledAt: ts('disabled_at'),
});

/** One captured request (spec D3 event), classified and enriched at ingest; never the raw IP. */
export const honeypotEvents = pgTable(
  'honeypot_events',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull(),
    /** The sender's own id, for idempotency per tenant; null when the sender gave none. */
    senderId: text('sender_id'),
    ts: ts('ts').notNull(),
    receivedAt: ts('received_at').notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    query: text('query'),
    uaRaw: text('ua_raw').notNull(),
    /** Keyed hash (HMAC-SHA256 under the service's IP-hash key) of the raw IP. */
    ipHash: text('ip_hash').notNull(),
    ja4: text('ja4'),
    /** 32-bit AS numbers reach 4294967295, past a PostgreSQL integer. */
    asn: bigint('asn', { mode: 'number' }),
    country: text('country'),
    /** Where country/asn came from: `sender`, `geoip`, or null when unknown. */
    attributionSource: text('attribution_source'),
    referer: text('referer'),
    headers: jsonb('headers').$type<Record<string, string>>().notNull(),
    uaClass: text('ua_class').notNull(),
    vendorId: text('vendor_id'),
    /** Which proof decided the verdict, e.g. `ip-range:52.230.152.0/24` or `web-bot-auth:<keyid>`. */
    proof: text('proof'),
    /**
     * What the verifier saw of the IP (per checked vendor: in its ranges or not), kept so replay
     * can re-derive the class without the raw IP.
     */
    evidence: jsonb('evidence').$type<Record<string, unknown>>().notNull(),
    fingerprintId: text('fingerprint_id').notNull(),
    schemaVersion: smallint('schema_version').notNull(),
    bodyBytes: integer('body_bytes').notNull(),
  },
  (t) => [
    uniqueIndex('honeypot_events_sender_idx').on(t.tenantId, t.senderId),
    index('honeypot_events_tenant_ts_idx').on(t.tenantId, t.ts),
    index('honeypot_events_fingerprint_idx').on(t.tenantId, t.fingerprintId, t.ts),
    // Ingest counts each liar fingerprint's LIAR events of the last 10 minutes (the tarpit
    // threshold) in every group it stores. Only LIAR rows are indexed, so the count reads that
    // fingerprint's liars alone whatever the planner knows of the table; with the two indexes
    // above, a generic plan on a young table walked the whole tenant's window for every key.
    index('honeypot_events_liar_idx').on(t.tenantId, t.fingerprintId, t.ts).where(sql`${t.uaClass} = 'LIAR'`),
    index('honeypot_events_received_idx').on(t.receivedAt),
    // Alert windows and the per-tenant replay list read one tenant by receive time.
    index('honeypot_events_tenant_received_idx').on(t.tenantId, t.receivedAt),
    // The events whose reverse DNS answer is still to come, by address: the re-judge finds them
    // here when it arrives. Only those rows are indexed, so ordinary ingest does not pay for it.
    index('honeypot_events_rdns_pending_idx').on(t.ipHash).where(sql`(${t.evidence} -> 'rdns' ->> 'status') = 'pending'`),
  ],
);

/** A client fingerprint per tenant (docs/honeypot/enrichment.md says what is hashed). */
export const honeypotFingerprints = pgTable(
  'honeypot_fingerprints',
  {
    tenantId: uuid('tenant_id').notNull(),
    fingerprintId: text('fingerprint_id').notNull(),
    ja4: text('ja4'),
    uaNormalized: text('ua_normalized').notNull(),
    uaSample: text('ua_sample').notNull(),
    lastUaClass: text('last_ua_class').notNull(),
    asn: bigint('asn', { mode: 'number' }),
    firstSeen: ts('first_seen').notNull(),
    lastSeen: ts('last_seen').notNull(),
    eventCount: bigint('event_count', { mode: 'number' }).notNull(),
    liarCount: bigint('liar_count', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.fingerprintId] }), index('honeypot_fingerprints_ua_idx').on(t.uaNormalized)],
);

/** Every ingest request, refused or not, with its outcome and latency (the ingest SLO). */
export const ingestSamples = pgTable(
  'ingest_samples',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    tenantSlug: text('tenant_slug'),
    receivedAt: ts('received_at').notNull(),
    outcome: text('outcome').notNull(),
    latencyMs: real('latency_ms').notNull(),
    eventCount: integer('event_count').notNull(),
  },
  (t) => [index('ingest_samples_received_idx').on(t.receivedAt)],
);

/** Spec A "Tarpit row": at most one active row per (tenant, fingerprint). */
export const honeypotTarpits = pgTable(
  'honeypot_tarpits',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull(),
    fingerprintId: text('fingerprint_id').notNull(),
    triggeredAt: ts('triggered_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    delayMs: integer('delay_ms').notNull(),
    reason: text('reason').notNull(),
    liarEventCount: integer('liar_event_count').notNull(),
    active: boolean('active').notNull(),
    endedAt: ts('ended_at'),
  },
  (t) => [
    uniqueIndex('honeypot_tarpits_active_idx').on(t.tenantId, t.fingerprintId).where(sql`${t.active}`),
    index('honeypot_tarpits_expiry_idx').on(t.active, t.expiresAt),
    index('honeypot_tarpits_history_idx').on(t.tenantId, t.triggeredAt),
  ],
);

/** Honeypot alert rules (D6); predicate and destinations are documented unions. */
export const honeypotAlertRules = pgTable(
  'honeypot_alert_rules',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull(),
    name: text('name').notNull(),
    enabled: boolean('enabled').notNull(),
    predicate: jsonb('predicate').notNull(),
    destinations: jsonb('destinations').notNull(),
    createdAt: ts('created_at').notNull(),
    lastFiredAt: ts('last_fired_at'),
    silenceUntil: ts('silence_until'),
    /** Events received up to here have been evaluated against the rule. */
    evaluatedUntil: ts('evaluated_until'),
  },
  (t) => [index('honeypot_alert_rules_tenant_idx').on(t.tenantId)],
);

/** Range lists fetched by the refresh job; they override the shipped snapshot per vendor. */
export const vendorRangeSnapshots = pgTable('vendor_range_snapshots', {
  vendorId: text('vendor_id').primaryKey(),
  sourceUrl: text('source_url').notNull(),
  creationTime: text('creation_time'),
  fetchedAt: ts('fetched_at').notNull(),
  cidrs: jsonb('cidrs').$type<string[]>().notNull(),
  sha256: text('sha256').notNull(),
});

/** Honeypot-wide settings that must be equal on every instance, e.g. the generated IP-hash key. */
export const honeypotSettings = pgTable('honeypot_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  createdAt: ts('created_at').notNull(),
});

// Rollups (docs/honeypot/dashboard.md, "Rollups"): fed from the pending rows every ingest
// statement writes, so the dashboard, clusters, fleet and heartbeat reads never scan the event history.

/** Events per tenant and hour bucket (UTC), over all history. */
export const honeypotRollupHourly = pgTable(
  'honeypot_rollup_hourly',
  {
    hour: ts('hour').notNull(),
    tenantId: uuid('tenant_id').notNull(),
    events: bigint('events', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ name: 'honeypot_rollup_hourly_pk', columns: [t.hour, t.tenantId] })],
);

/**
 * Event counts per (tenant, dimension, value) inside each dashboard window. `key` is a hash of
 * `value` (values may be 2 KB long). Rows whose 30-day count falls to zero are deleted.
 */
export const honeypotRollupDims = pgTable(
  'honeypot_rollup_dims',
  {
    tenantId: uuid('tenant_id').notNull(),
    dim: text('dim').notNull(),
    key: uuid('key').notNull(),
    value: text('value').notNull(),
    events24h: bigint('events_24h', { mode: 'number' }).notNull(),
    events7d: bigint('events_7d', { mode: 'number' }).notNull(),
    events30d: bigint('events_30d', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ name: 'honeypot_rollup_dims_pk', columns: [t.tenantId, t.dim, t.key] })],
);

/**
 * Event counts per cluster member (fingerprint, class, AS, JA4) inside each dashboard window;
 * `asn` -1 and `ja4` '' stand for none. `cluster_key` is a hash of the cluster (ja4, class, asn),
 * first in the key so a cluster's members are grouped cheaply. `first_seen`, `last_seen` and
 * `ua_sample` are those of the events the row was given since it was created; a row whose 30-day
 * count falls to zero is deleted and its times go to `honeypot_rollup_seen`, so a member's history
 * is the two rows merged (docs/honeypot/dashboard.md, "Rollups").
 */
export const honeypotRollupClusters = pgTable(
  'honeypot_rollup_clusters',
  {
    tenantId: uuid('tenant_id').notNull(),
    clusterKey: uuid('cluster_key').notNull(),
    fingerprintId: text('fingerprint_id').notNull(),
    uaClass: text('ua_class').notNull(),
    asn: bigint('asn', { mode: 'number' }).notNull(),
    ja4: text('ja4').notNull(),
    events24h: bigint('events_24h', { mode: 'number' }).notNull(),
    events7d: bigint('events_7d', { mode: 'number' }).notNull(),
    events30d: bigint('events_30d', { mode: 'number' }).notNull(),
    firstSeen: ts('first_seen').notNull(),
    lastSeen: ts('last_seen').notNull(),
    uaSample: text('ua_sample').notNull(),
  },
  (t) => [primaryKey({ name: 'honeypot_rollup_clusters_pk', columns: [t.tenantId, t.clusterKey, t.fingerprintId, t.uaClass, t.asn, t.ja4] })],
);

/**
 * First and last time and latest UA of cluster members, from what left `honeypot_rollup_clusters`
 * (rows deleted at zero) and from events applied when already older than the 30-day window; a
 * rebuild writes every member's whole history here. Merged with a member's clusters row it gives
 * the member's whole history.
 */
export const honeypotRollupSeen = pgTable(
  'honeypot_rollup_seen',
  {
    tenantId: uuid('tenant_id').notNull(),
    fingerprintId: text('fingerprint_id').notNull(),
    uaClass: text('ua_class').notNull(),
    asn: bigint('asn', { mode: 'number' }).notNull(),
    ja4: text('ja4').notNull(),
    firstSeen: ts('first_seen').notNull(),
    lastSeen: ts('last_seen').notNull(),
    uaSample: text('ua_sample').notNull(),
  },
  (t) => [primaryKey({ name: 'honeypot_rollup_seen_pk', columns: [t.tenantId, t.fingerprintId, t.uaClass, t.asn, t.ja4] })],
);

/**
 * Stored events not yet added to the rollups and fingerprint counters: one row per group commit,
 * written by the same statement that stores the events. The rollup applier deletes rows and adds
 * their events in one statement; every counter read applies what is pending first
 * (docs/honeypot/dashboard.md, "Pending rollups"). `fingerprints` holds [tenantId, fingerprintId,
 * uaNormalized] for the group's fingerprints, the one fingerprint field SQL cannot derive.
 */
export const honeypotRollupPending = pgTable('honeypot_rollup_pending', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  eventIds: uuid('event_ids').array().notNull(),
  fingerprints: jsonb('fingerprints').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

/**
 * One row (id 1): the first hour bucket each window column of the rollups currently covers.
 * Ingest reads it FOR SHARE; the advance job moves it forward FOR UPDATE (see the docs).
 */
export const honeypotRollupState = pgTable('honeypot_rollup_state', {
  id: smallint('id').primaryKey(),
  from24h: ts('from_24h').notNull(),
  from7d: ts('from_7d').notNull(),
  from30d: ts('from_30d').notNull(),
  advancedAt: ts('advanced_at').notNull(),
});
