import { jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * What the last check of a toolset found (docs/backups/README.md, "Cross-toolset restore"): only values
 * this deployment checked or chose, never a peer's own text. Times are ISO 8601.
 */
export interface StoredCheck {
  checkedAt: string;
  outcome: 'ok' | 'drift' | 'error' | 'skipped';
  /** A reason of cross-toolset/reasons.ts; null when ok. */
  reason: string | null;
  /** The status of an `unexpected-status` answer. */
  httpStatus: number | null;
  latestSnapshotAt: string | null;
  lastVerifiedAt: string | null;
  /** The hosting project the toolset named, when it matched the project-name pattern. */
  vercelProject: string | null;
}

/**
 * A toolset whose backups the cross-toolset restore view asks about (spec B, `backups/cross-toolset`):
 * its bridge-gated verify endpoint, the database it is asked to verify and its hosting project,
 * registered by operators; and what the last check found, which is all the view shows.
 */
export const backupToolsets = pgTable('backup_toolsets', {
  toolset: text('toolset').primaryKey(),
  verifyUrl: text('verify_url').notNull(),
  database: text('database').notNull(),
  vercelProject: text('vercel_project'),
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
  updatedBy: text('updated_by'),
  /** When this deployment last asked the toolset (the end of the ask once it ended): the per-toolset minimum interval counts from it. */
  lastAskedAt: ts('last_asked_at'),
  /** The last check's result; null until the toolset is checked, and again when its URL or database changes. */
  lastCheck: jsonb('last_check').$type<StoredCheck>(),
});
