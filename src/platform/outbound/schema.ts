import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import type { Destination } from './destinations.ts';
import type { OutboundMessage } from './message.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One notification to one destination: the outbox. A firing rule inserts these rows inside its own
 * transaction (never touching the network), and the `outbound-dispatch` job sends them.
 *
 * `destination` is stored whole, webhook secret and chat-webhook URL included: the dispatcher needs
 * the secret to sign and the URL to send, possibly long after the rule was changed or deleted.
 * Reads never return it as stored; they go through `redactDestination`.
 *
 * While a dispatcher holds a row, `next_attempt_at` is its lease: claiming moves it into the future
 * (and counts the attempt), so no other instance sees the row as due until the lease runs out.
 */
export const outboundDeliveries = pgTable(
  'outbound_deliveries',
  {
    id: uuid('id').primaryKey(),
    /** What produced the notification, e.g. `honeypot-rule` or `empire-rule`. */
    source: text('source').notNull(),
    /** The producer's id, e.g. the rule id. */
    sourceId: text('source_id').notNull(),
    destination: jsonb('destination').$type<Destination>().notNull(),
    payload: jsonb('payload').$type<OutboundMessage>().notNull(),
    /** `pending`, `delivered` or `failed`. */
    status: text('status').notNull(),
    attempts: integer('attempts').notNull(),
    nextAttemptAt: ts('next_attempt_at').notNull(),
    lastError: text('last_error'),
    lastStatus: integer('last_status'),
    createdAt: ts('created_at').notNull(),
    deliveredAt: ts('delivered_at'),
  },
  (t) => [
    check('outbound_deliveries_status_check', sql`${t.status} IN ('pending', 'delivered', 'failed')`),
    index('outbound_deliveries_due_idx').on(t.status, t.nextAttemptAt),
    index('outbound_deliveries_source_idx').on(t.source, t.sourceId),
    // The delivery listings: one producer kind (honeypot or empire rules), newest first.
    index('outbound_deliveries_listing_idx').on(t.source, t.createdAt, t.id),
  ],
);
