import { getTableColumns, type SQL, sql } from 'drizzle-orm';
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
 * The `(columns) SELECT …` part of an INSERT of `rows` into `table`: the rows travel as one jsonb
 * parameter of positional arrays and are read back typed from it. A batch of any size is one
 * parameter, the statement text does not depend on the row count (so it can be prepared), and
 * neither side builds or parses thousands of bind parameters. Positional jsonb is the cheapest
 * decoding PostgreSQL offers here: about four times cheaper per row than `json_populate_recordset`
 * (docs/performance.md). `only` limits the columns (leave out serial ids and defaults).
 */
export function insertRows<T extends PgTable>(table: T, rows: readonly T['$inferInsert'][], only?: readonly (keyof T['$inferInsert'] & string)[]): SQL {
  const columns = Object.entries(getTableColumns(table)).filter(([property]) => !only || (only as readonly string[]).includes(property));
  const payload = JSON.stringify(rows.map((row) => columns.map(([property]) => (row as Record<string, unknown>)[property] ?? null)));
  const names = columns.map(([, column]) => `"${column.name}"`).join(', ');
  const values = columns
    .map(([, column], i) => (column.getSQLType() === 'jsonb' ? `nullif(v -> ${i}, 'null'::jsonb)` : `(v ->> ${i})::${column.getSQLType()}`))
    .join(', ');
  return sql`(${sql.raw(names)}) SELECT ${sql.raw(values)} FROM jsonb_array_elements(${payload}::jsonb) AS v`;
}
