import { boolean, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * An Ed25519 public key a toolset signs its events with (spec A, "Provenance signing key"). Several
 * may be active for one toolset during a rotation; retiring one stamps `retired_at`, and events
 * signed by it stay valid up to and including that instant.
 */
export const provenanceKeys = pgTable(
  'provenance_keys',
  {
    id: uuid('id').primaryKey(),
    toolset: text('toolset').notNull(),
    publicKeyB64: text('public_key_b64').notNull(),
    status: text('status').notNull(),
    ownerUserId: text('owner_user_id'),
    createdAt: ts('created_at').notNull(),
    retiredAt: ts('retired_at'),
  },
  (t) => [index('provenance_keys_toolset_created_idx').on(t.toolset, t.createdAt, t.id), index('provenance_keys_created_idx').on(t.createdAt, t.id)],
);

/**
 * One admission decision of the empire ingest (spec D4): admitted with a signature, admitted in
 * compatibility mode, or rejected with a reason. Written in the transaction that stores the
 * admitted events, so a decision and its event commit together.
 */
export const provenanceAttestations = pgTable(
  'provenance_attestations',
  {
    id: uuid('id').primaryKey(),
    toolset: text('toolset').notNull(),
    source: text('source').notNull(),
    sourceId: text('source_id').notNull(),
    kind: text('kind').notNull(),
    eventHash: text('event_hash').notNull(),
    signatureB64: text('signature_b64'),
    toolsetKeyId: uuid('toolset_key_id'),
    attestedAt: ts('attested_at'),
    acceptedAt: ts('accepted_at').notNull(),
    compatMode: boolean('compat_mode').notNull(),
    rejectionReason: text('rejection_reason'),
  },
  (t) => [
    index('provenance_attestations_accepted_idx').on(t.acceptedAt, t.id),
    index('provenance_attestations_toolset_accepted_idx').on(t.toolset, t.acceptedAt, t.id),
  ],
);

/**
 * Per-toolset admission policy set by an operator: `require_signed` refuses unsigned events of
 * this toolset (`unsigned`) even while OBSERVATORY_REQUIRE_SIGNED_EVENTS leaves compatibility
 * mode on for the others. A toolset without a row follows the global setting.
 */
export const toolsetPolicies = pgTable('toolset_policies', {
  toolset: text('toolset').primaryKey(),
  requireSigned: boolean('require_signed').notNull(),
  updatedBy: text('updated_by'),
  updatedAt: ts('updated_at').notNull(),
});
