import { sql } from 'drizzle-orm';
import { bigserial, boolean, index, integer, jsonb, pgTable, real, smallint, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * An event a toolset sent (spec D4), with its replay envelope (`schema_version`, `received_at`,
 * `tenant` as the source tenant, `body_bytes`, `event_type`, `caused_by`). `sender_id` is the
 * toolset's own id, unique per toolset; `caused_by` names another event of the same toolset by that
 * id (it may arrive later, or never).
 */
export const empireEvents = pgTable(
  'empire_events',
  {
    eventId: uuid('event_id').primaryKey(),
    toolset: text('toolset').notNull(),
    senderId: text('sender_id').notNull(),
    eventType: text('event_type').notNull(),
    ts: ts('ts').notNull(),
    tenant: text('tenant'),
    causedBy: text('caused_by'),
    payload: jsonb('payload').notNull(),
    eventHash: text('event_hash').notNull(),
    keyId: uuid('key_id'),
    compatMode: boolean('compat_mode').notNull(),
    schemaVersion: integer('schema_version').notNull(),
    receivedAt: ts('received_at').notNull(),
    bodyBytes: integer('body_bytes').notNull(),
    /** Which optional members the sender signed (SIGNED_MEMBER bits in ingest.ts), so replay can rebuild the exact bytes; null on rows stored before it was kept. */
    signedMembers: smallint('signed_members'),
    /** The `ts` exactly as sent, when its spelling differs from the stored instant's ISO form (the signed bytes hold the spelling). */
    tsSent: text('ts_sent'),
    /** The provenance attestation of its admission (the signature replay checks again); null on rows stored before it was kept. */
    attestationId: uuid('attestation_id'),
  },
  (t) => [
    uniqueIndex('empire_events_toolset_sender_idx').on(t.toolset, t.senderId),
    index('empire_events_toolset_ts_idx').on(t.toolset, t.ts),
    index('empire_events_caused_by_idx').on(t.toolset, t.causedBy),
    // Every read by receive time names its toolset (alert rules, replay lists).
    index('empire_events_toolset_received_idx').on(t.toolset, t.receivedAt),
    // The graph materialiser reads every toolset's new events in receive order (docs/graph/README.md).
    index('empire_events_received_idx').on(t.receivedAt, t.eventId),
  ],
);

/** One empire ingest request's outcome and latency, for the empire SLO (spec B group 2). */
export const empireIngestSamples = pgTable(
  'empire_ingest_samples',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    toolset: text('toolset'),
    receivedAt: ts('received_at').notNull(),
    outcome: text('outcome').notNull(),
    latencyMs: real('latency_ms').notNull(),
    eventCount: integer('event_count').notNull(),
  },
  (t) => [index('empire_ingest_samples_received_idx').on(t.receivedAt), index('empire_ingest_samples_toolset_idx').on(t.toolset, t.receivedAt)],
);

/**
 * An operator's note on an event (spec A, "Empire note"): one per (target kind, target id, tenant),
 * upserted; `tenant` is '' when the note names none, so the key stays unique.
 */
export const empireNotes = pgTable(
  'empire_notes',
  {
    id: uuid('id').primaryKey(),
    targetKind: text('target_kind').notNull(),
    eventId: text('event_id').notNull(),
    tenant: text('tenant').notNull(),
    note: text('note').notNull(),
    pinned: boolean('pinned').notNull(),
    color: text('color'),
    userId: text('user_id').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('empire_notes_target_idx').on(t.targetKind, t.eventId, t.tenant)],
);

/**
 * An empire incident (spec A names it; B's later features open and draft them): a toolset's
 * problem with a severity, a status and the events it concerns. `source` says what opened it
 * (`forecast` for the forecaster's latch).
 */
export const empireIncidents = pgTable(
  'empire_incidents',
  {
    id: uuid('id').primaryKey(),
    toolset: text('toolset').notNull(),
    severity: text('severity').notNull(),
    title: text('title').notNull(),
    status: text('status').notNull(),
    source: text('source').notNull(),
    eventIds: jsonb('event_ids').$type<string[]>().notNull(),
    details: jsonb('details').notNull(),
    openedAt: ts('opened_at').notNull(),
    resolvedAt: ts('resolved_at'),
  },
  (t) => [
    index('empire_incidents_opened_idx').on(t.openedAt, t.id),
    index('empire_incidents_toolset_idx').on(t.toolset, t.status),
    // The analytics rollup reads resolutions by resolution time (docs/analytics/README.md).
    index('empire_incidents_resolved_idx').on(t.resolvedAt).where(sql`${t.resolvedAt} IS NOT NULL`),
  ],
);

/** One toolset's score of one forecaster run (spec A, Forecast). */
export const empireForecasts = pgTable(
  'empire_forecasts',
  {
    id: uuid('id').primaryKey(),
    runId: uuid('run_id').notNull(),
    toolset: text('toolset').notNull(),
    score: real('score').notNull(),
    level: text('level').notNull(),
    direction: text('direction').notNull(),
    details: jsonb('details').notNull(),
    computedAt: ts('computed_at').notNull(),
  },
  (t) => [index('empire_forecasts_toolset_idx').on(t.toolset, t.computedAt)],
);

/**
 * An empire alert rule (spec A "Empire alert rule"; docs/empire/alerts.md): a predicate over one
 * toolset's events (`toolset`; null is allowed by the spec but rules made through the API always
 * name one), optionally only one source `tenant`, and the destinations its firings go to.
 * `destinations` are stored whole (webhook secrets, chat webhook URLs) because the evaluator needs
 * them to enqueue; every read redacts them. `evaluated_until`: events received up to here have been
 * evaluated.
 */
export const empireAlertRules = pgTable(
  'empire_alert_rules',
  {
    id: uuid('id').primaryKey(),
    toolset: text('toolset'),
    tenant: text('tenant'),
    name: text('name').notNull(),
    enabled: boolean('enabled').notNull(),
    predicate: jsonb('predicate').notNull(),
    destinations: jsonb('destinations').notNull(),
    createdAt: ts('created_at').notNull(),
    lastFiredAt: ts('last_fired_at'),
    silenceUntil: ts('silence_until'),
    evaluatedUntil: ts('evaluated_until'),
  },
  (t) => [index('empire_alert_rules_toolset_idx').on(t.toolset, t.createdAt, t.id)],
);
