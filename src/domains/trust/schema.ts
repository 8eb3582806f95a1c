import { sql } from 'drizzle-orm';
import { bigserial, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * A trust drift event (spec A "Trust drift event" and its state table; docs/federation/README.md,
 * "Drift inbox"). A detector opens one per (kind, source, source_id) at a time: the partial unique
 * index holds the slot while the event is `open`, and ack releases it (spec A), so a scan of an
 * unchanged system inserts nothing and concurrent scans cannot open the same event twice.
 */
export const trustDriftEvents = pgTable(
  'trust_drift_events',
  {
    id: uuid('id').primaryKey(),
    /** Insertion order: newest first in the inbox without relying on clock ties. */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    /** `graph-drift`, `replay-drift`, `region-parity`, `compliance-fail` or `integrity-mismatch`. */
    kind: text('kind').notNull(),
    /** What the detector looked at (a table or subsystem name) and the id of the thing in it. */
    source: text('source').notNull(),
    sourceId: text('source_id').notNull(),
    description: text('description').notNull(),
    /** `critical`, `major` or `minor`. */
    severity: text('severity').notNull(),
    /** `open`, `acknowledged`, `resolved`, `auto-resolved` or `wont-fix`. */
    status: text('status').notNull(),
    openedAt: ts('opened_at').notNull(),
    acknowledgedAt: ts('acknowledged_at'),
    resolvedAt: ts('resolved_at'),
    resolvedBy: text('resolved_by'),
    resolutionNotes: text('resolution_notes').notNull().default(''),
    payload: jsonb('payload').notNull(),
    /**
     * `wont-fix` events only: when a scan first found the slot clear after the event was closed.
     * Until then the accepted divergence keeps its slot (a persisting breach reopens nothing);
     * once it has cleared, a returning breach opens a new event.
     */
    clearedAt: ts('cleared_at'),
  },
  (t) => [
    uniqueIndex('trust_drift_events_open_slot_idx').on(t.kind, t.source, t.sourceId).where(sql`${t.status} = 'open'`),
    index('trust_drift_events_status_seq_idx').on(t.status, t.seq),
    index('trust_drift_events_opened_idx').on(t.openedAt),
    // The latest event of a slot (wont-fix holds): slot columns then seq.
    index('trust_drift_events_slot_seq_idx').on(t.kind, t.source, t.sourceId, t.seq),
  ],
);
