import { getTableColumns, type SQL } from 'drizzle-orm';
import { PgDialect, type PgTable } from 'drizzle-orm/pg-core';
import type { Db } from './client.ts';

const dialect = new PgDialect();

/**
 * Runs `query` as a named prepared statement: on node-postgres each connection parses and plans
 * it once, then reuses the plan (PGlite runs it as any other query). For statements sent on every
 * request or batch whose text never changes; planning them each time cost more than running them.
 * The parameters must keep the same types from call to call (a JSON text, a timestamp, …).
 */
export function executePrepared(db: Db, name: string, query: SQL): Promise<unknown> {
  return db._.session.prepareQuery(dialect.sqlToQuery(query), undefined, name, false).execute();
}

/**
 * Rows of `table` (in their TypeScript shape) as one JSON array of objects keyed by column name,
 * for `json_populate_recordset(NULL::<table>, $1::json)`: a batch of any size travels as one
 * parameter, the statement text never changes (so it can be prepared), and neither side builds or
 * parses thousands of bind parameters. Dates become ISO text, which PostgreSQL reads back exactly.
 */
export function jsonRecords<T extends PgTable>(table: T, rows: readonly T['$inferInsert'][]): string {
  const columns = Object.entries(getTableColumns(table)).map(([property, column]) => [property, column.name] as const);
  return JSON.stringify(
    rows.map((row) => {
      const record: Record<string, unknown> = {};
      for (const [property, name] of columns) record[name] = (row as Record<string, unknown>)[property] ?? null;
      return record;
    }),
  );
}
