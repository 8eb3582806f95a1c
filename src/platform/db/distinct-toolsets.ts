import { sql } from 'drizzle-orm';

/**
 * The distinct toolsets of a table with a (toolset, …) index, walked one index probe at a time (a
 * loose index scan): PostgreSQL would otherwise read every row to list a handful of toolsets.
 * A `toolsets` CTE to start a query with.
 */
export const distinctToolsets = (table: string) => sql`
  WITH RECURSIVE toolsets AS (
    (SELECT toolset FROM ${sql.raw(table)} WHERE toolset IS NOT NULL ORDER BY toolset LIMIT 1)
    UNION ALL
    SELECT (SELECT e.toolset FROM ${sql.raw(table)} e WHERE e.toolset > t.toolset ORDER BY e.toolset LIMIT 1)
    FROM toolsets t WHERE t.toolset IS NOT NULL
  )`;
