import { parse, PGlite, protocol, type QueryOptions, type Results } from '@electric-sql/pglite';
import { getTableColumns, type SQL, sql } from 'drizzle-orm';
import { PgDialect, type PgTable } from 'drizzle-orm/pg-core';
import type { Db } from './client.ts';

const dialect = new PgDialect();

/**
 * Runs `query` as a named prepared statement: each connection (node-postgres) or the one PGlite
 * session parses it once, then reuses its plan. For statements sent on every request or batch
 * whose text never changes; planning them each time cost more than running them. The parameters
 * must keep the same types from call to call (a JSON text, a timestamp, …). Inside a transaction
 * on PGlite the statement runs as any other query.
 */
export function executePrepared(db: Db, name: string, query: SQL): Promise<unknown> {
  const prepared = db._.session.prepareQuery(dialect.sqlToQuery(query), undefined, name, false);
  const client = (db._.session as unknown as { client?: unknown }).client;
  if (!(client instanceof PGlite)) return prepared.execute();
  // drizzle's PGlite query object ignores the name; its text, parameters and result options
  // (rows as objects, timestamps left as text) are used as they are, so the answer has its shape.
  const { queryString, params, rawQueryConfig } = prepared as unknown as { queryString: string; params: unknown[]; rawQueryConfig: QueryOptions };
  return executeNamedOnPglite(client, name, queryString, params, rawQueryConfig);
}

type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

/** The statements each PGlite session has parsed: name → text and parameter types. */
const pgliteStatements = new WeakMap<PGlite, Map<string, { text: string; paramTypes: number[] }>>();

/**
 * PGlite's `query` parses and plans its text every time: for the ingest group statement that was
 * more than half of its cost (docs/performance.md). PGlite has no named statements in its API, so
 * this sends the extended protocol's messages itself, as `query` does, with a name: Parse and
 * Describe once per session, then Bind, Describe, Execute and Sync per call. It holds PGlite's
 * transaction and query locks like `query`, so it never lands inside another caller's transaction.
 */
function executeNamedOnPglite(client: PGlite, name: string, text: string, params: unknown[], options: QueryOptions): Promise<Results> {
  return client._runExclusiveTransaction(() =>
    client._runExclusiveQuery(async () => {
      let statements = pgliteStatements.get(client);
      if (!statements) pgliteStatements.set(client, (statements = new Map()));
      const send = (message: Uint8Array) => client.execProtocolStream(message, { syncToFs: false });
      const messages: BackendMessage[] = [];
      try {
        let statement = statements.get(name);
        if (statement !== undefined && statement.text !== text) throw new Error(`prepared statement ${name} was given another text`);
        if (statement === undefined) {
          // A Parse whose Describe failed left the name taken; closing a name not in use is no error.
          await send(protocol.serialize.close({ type: 'S', name }));
          await send(protocol.serialize.parse({ name, text }));
          statement = { text, paramTypes: parse.parseDescribeStatementResults(await send(protocol.serialize.describe({ type: 'S', name }))) };
          statements.set(name, statement);
        }
        const { paramTypes } = statement;
        const values = params.map((value, i) => {
          if (value === null || value === undefined) return null;
          const serializer = client.serializers[paramTypes[i]!];
          return serializer ? serializer(value) : String(value);
        });
        messages.push(...(await send(protocol.serialize.bind({ statement: name, values }))));
        messages.push(...(await send(protocol.serialize.describe({ type: 'P' }))));
        messages.push(...(await send(protocol.serialize.execute({}))));
      } finally {
        // After an error the server skips everything up to Sync: always end the exchange.
        messages.push(...(await send(protocol.serialize.sync())));
      }
      if (!client.isInTransaction()) await client.syncToFs();
      return parse.parseResults(messages, client.parsers, options)[0]!;
    }),
  );
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
