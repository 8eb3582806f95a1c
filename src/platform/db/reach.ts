import { type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/**
 * The rows a caller reaches by their toolset column (docs/operations.md, "Toolset binding", rule 3):
 * no condition for `reach` null (a credential not bound to toolsets), none for an empty binding,
 * else the column is one of them. `reach` comes from platform/http/auth.ts `toolsetReach`. Rows
 * whose toolset is null belong to no toolset and are left out for a bound caller.
 */
/** `AND <toolsetInReach>` to append to a WHERE clause, or nothing when every toolset is in reach. */
export function andToolsetInReach(column: AnyPgColumn | SQL, reach: readonly string[] | null): SQL {
  const condition = toolsetInReach(column, reach);
  return condition === undefined ? sql`` : sql`AND ${condition}`;
}

export function toolsetInReach(column: AnyPgColumn | SQL, reach: readonly string[] | null): SQL | undefined {
  if (reach === null) return undefined;
  if (reach.length === 0) return sql`false`;
  return sql`${column} IN (${sql.join(
    reach.map((t) => sql`${t}`),
    sql`, `,
  )})`;
}
