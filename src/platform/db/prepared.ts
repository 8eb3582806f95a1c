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
  const shape = rowShapeOf(table, only);
  const payload = JSON.stringify(
    rows.map((row) => {
      const values: unknown[] = new Array(shape.properties.length);
      for (let i = 0; i < shape.properties.length; i++) values[i] = (row as Record<string, unknown>)[shape.properties[i]!] ?? null;
      return values;
    }),
  );
  return sql`(${shape.names}) SELECT ${shape.values} FROM jsonb_array_elements(${payload}::jsonb) AS v`;
}

/** The column list and typed read-back of a table's rows (or of `only` its columns), made once per table and column set. */
interface RowShape {
  properties: string[];
  names: SQL;
  values: SQL;
}
const rowShapes = new WeakMap<PgTable, Map<string, RowShape>>();
function rowShapeOf(table: PgTable, only: readonly string[] | undefined): RowShape {
  const key = only?.join(',') ?? '*';
  let byColumns = rowShapes.get(table);
  if (!byColumns) rowShapes.set(table, (byColumns = new Map()));
  const known = byColumns.get(key);
  if (known) return known;
  const columns = Object.entries(getTableColumns(table)).filter(([property]) => !only || only.includes(property));
  const shape: RowShape = {
    properties: columns.map(([property]) => property),
    names: sql.raw(columns.map(([, column]) => `"${column.name}"`).join(', ')),
    values: sql.raw(
      columns
        .map(([, column], i) => (column.getSQLType() === 'jsonb' ? `nullif(v -> ${i}, 'null'::jsonb)` : `(v ->> ${i})::${column.getSQLType()}`))
        .join(', '),
    ),
  };
  byColumns.set(key, shape);
  return shape;
}
