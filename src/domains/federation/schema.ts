import { boolean, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * The regions registry (spec A "Region", D6 upsert; docs/federation/README.md). One row per deployment
 * of the service, keyed by its OBSERVATORY_REGION. `base_url` is the origin the bridge token is
 * sent to (only at the federation bridge routes). Empty registry: the GET answers the built-in seed.
 */
export const federationRegions = pgTable('federation_regions', {
  key: text('key').primaryKey(),
  displayName: text('display_name').notNull(),
  baseUrl: text('base_url').notNull(),
  hostProjectSlug: text('host_project_slug'),
  databaseHost: text('database_host'),
  latencyTierSec: integer('latency_tier_sec').notNull(),
  /** `active` (fanned out to), `standby` or `retired` (listed, never asked). */
  status: text('status').notNull(),
  isPrimary: boolean('is_primary').notNull(),
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
  updatedBy: text('updated_by'),
});
