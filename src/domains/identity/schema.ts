import { bigint, boolean, date, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** An operator. Every token and session belongs to one; the admin token belongs to `admin`. */
export const users = pgTable('users', {
  id: uuid('id').primaryKey(),
  username: text('username').notNull().unique(),
  displayName: text('display_name').notNull(),
  /** The scopes this operator holds; sessions carry them, tokens carry a subset. */
  scopes: jsonb('scopes').$type<string[]>().notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  disabledAt: timestamp('disabled_at', { withTimezone: true, mode: 'date' }),
});

/** API tokens. Only the SHA-256 of the plaintext is kept; `prefix` lets people tell them apart. */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    /** The toolsets this token may write events for; null: not bound (every toolset). */
    toolsets: jsonb('toolsets').$type<string[] | null>(),
    tokenHash: text('token_hash').notNull().unique(),
    prefix: text('prefix').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('api_tokens_user_idx').on(t.userId, t.createdAt)],
);

/**
 * The UTC days on which a token authenticated at least one request: one row per (token, day),
 * written with the first use of each day (the follow event of cohort developer-token-7d,
 * docs/analytics/cohorts.md). Kept as long as the token.
 */
export const apiTokenActivity = pgTable(
  'api_token_activity',
  {
    tokenId: uuid('token_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
  },
  (t) => [primaryKey({ name: 'api_token_activity_pk', columns: [t.tokenId, t.day] })],
);

/** Browser sessions established by a passkey login; the cookie holds a secret whose hash is kept. */
export const sessions = pgTable(
  'sessions',
  {
    id: uuid('id').primaryKey(),
    secretHash: text('secret_hash').notNull().unique(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    passkeyId: uuid('passkey_id'),
    /**
     * The most this session may carry: the scopes of the passkey that opened it. The session's
     * scopes are these intersected with the operator's current scopes (docs/operations.md).
     */
    scopes: jsonb('scopes').$type<string[]>().notNull().default([]),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true, mode: 'date' }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('sessions_expires_idx').on(t.expiresAt)],
);

/** WebAuthn credentials. The public key never leaves the service's own reads. */
export const passkeys = pgTable(
  'passkeys',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    /** base64url credential id as the authenticator reports it. */
    credentialId: text('credential_id').notNull().unique(),
    /** base64url COSE public key. */
    publicKey: text('public_key').notNull(),
    counter: bigint('counter', { mode: 'number' }).notNull(),
    transports: jsonb('transports').$type<string[]>().notNull(),
    /**
     * The scopes of the credential that registered this passkey: the ceiling of every session it
     * opens. Passkeys registered before this column existed get none (register them again).
     */
    scopes: jsonb('scopes').$type<string[]>().notNull().default([]),
    deviceLabel: text('device_label').notNull(),
    deviceType: text('device_type').notNull(),
    backedUp: boolean('backed_up').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('passkeys_user_idx').on(t.userId)],
);

/**
 * Outstanding WebAuthn challenges. Kept in the database, not in memory, so a ceremony may start
 * on one instance and finish on another.
 */
export const webauthnChallenges = pgTable(
  'webauthn_challenges',
  {
    id: uuid('id').primaryKey(),
    purpose: text('purpose').notNull(),
    userId: uuid('user_id'),
    challenge: text('challenge').notNull(),
    deviceLabel: text('device_label'),
    /** The address that started an unauthenticated ceremony (login), so outstanding ones can be capped per address. */
    clientIp: text('client_ip'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    consumedAt: timestamp('consumed_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('webauthn_challenges_client_ip_idx').on(t.clientIp, t.expiresAt), index('webauthn_challenges_expires_idx').on(t.expiresAt)],
);
