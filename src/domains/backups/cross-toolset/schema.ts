import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * A toolset whose backups the cross-toolset restore view asks about (spec B, `backups/cross-toolset`):
 * its bridge-gated verify endpoint, the database it is asked to verify and its hosting project.
 * Registered by operators (docs/backups.md, "Cross-toolset restore").
 */
export const backupToolsets = pgTable('backup_toolsets', {
  toolset: text('toolset').primaryKey(),
  verifyUrl: text('verify_url').notNull(),
  database: text('database').notNull(),
  vercelProject: text('vercel_project'),
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
  updatedBy: text('updated_by'),
});
