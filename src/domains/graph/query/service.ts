import { PGlite } from '@electric-sql/pglite';
import { type Static, Type } from '@sinclair/typebox';
import { type SQL, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { badRequest } from '../../../platform/errors.ts';
import type { Visibility } from '../kinds.ts';
import type { QueryAst } from './ast.ts';
import { checkQuery } from './check.ts';
import { ANCHORED_PLAN_SETTINGS, type CompiledQuery, compileQuery } from './compile.ts';
import { parseQueryText } from './parser.ts';

export { MAX_QUERY_LENGTH, MAX_QUERY_LENGTH as QUERY_TEXT_MAX } from './parser.ts';
export { MAX_HOPS, MAX_RELATIONSHIPS } from './check.ts';

/** The request's `limit`: rows returned at most (the query's own LIMIT can only lower it). */
export const MIN_ROW_LIMIT = 1;
export const MAX_ROW_LIMIT = 1000;
export const DEFAULT_ROW_LIMIT = 100;
export { DEFAULT_ROW_LIMIT as QUERY_LIMIT_DEFAULT, MAX_ROW_LIMIT as QUERY_LIMIT_MAX };

/** How long one query's statement may run on PostgreSQL before it is cancelled (400 `query-timeout`). */
export const GRAPH_QUERY_TIMEOUT_MS = 5000;

/**
 * PGlite runs in this process and cannot cancel a statement (statement_timeout is not enforced
 * there: it has no timer to interrupt the single-threaded engine), and while one statement runs
 * every other request waits for the one connection. So on PGlite a query is first planned, and
 * refused when the planner's estimated total cost is above this; the figure admits a two-hop
 * LIMIT 100 over a million edges and refuses unbounded cross products (graph-query.md, "Limits").
 */
export const PGLITE_COST_CEILING = 2_000_000;

export const GraphNodeViewSchema = Type.Object(
  {
    id: Type.Integer(),
    kind: Type.String({ description: 'Node kind (label), e.g. Incident.' }),
    key: Type.String({ description: 'The key unique within the kind.' }),
    props: Type.Record(Type.String(), Type.Unknown(), { description: 'Properties as materialised.' }),
  },
);
export type GraphNodeView = Static<typeof GraphNodeViewSchema>;

export const GraphEdgeViewSchema = Type.Object(
  {
    id: Type.Integer(),
    kind: Type.String({ description: 'Edge kind (relationship type), e.g. SIGNED_BY.' }),
    src: Type.Integer({ description: 'Id of the node the edge leaves.' }),
    dst: Type.Integer({ description: 'Id of the node the edge reaches.' }),
    props: Type.Record(Type.String(), Type.Unknown()),
  },
);
export type GraphEdgeView = Static<typeof GraphEdgeViewSchema>;
/** The same schemas under the names the endpoint imports them by (a value and a type of one name). */
export const GraphNodeView = GraphNodeViewSchema;
export const GraphEdgeView = GraphEdgeViewSchema;

export const QueryAstSchema = Type.Unknown({
  description: 'The parsed query (docs/graph-query.md, "The AST"): {type: "query", match, where, return, orderBy, skip, limit}.',
});

export interface GraphQueryResult {
  query: string;
  ast: QueryAst;
  rowCount: number;
  rows: Record<string, unknown>[];
  nodes: GraphNodeView[];
  edges: GraphEdgeView[];
}

export interface GraphQueryService {
  /** Parses and checks `text`; throws the 400 `invalid-query` (line, column, expected for syntax). */
  parse(text: string): QueryAst;
  execute(input: { query: string; limit?: number; visibility: Visibility }): Promise<GraphQueryResult>;
}

export interface GraphQueryServiceOptions {
  db: Db;
  /** Default GRAPH_QUERY_TIMEOUT_MS; tests lower it. */
  statementTimeoutMs?: number;
  /** The planner-cost ceiling; default PGLITE_COST_CEILING on PGlite, none on PostgreSQL. */
  costCeiling?: number | null;
}

export function createGraphQueryService(options: GraphQueryServiceOptions): GraphQueryService {
  const { db } = options;
  const statementTimeoutMs = options.statementTimeoutMs ?? GRAPH_QUERY_TIMEOUT_MS;
  const costCeiling = options.costCeiling !== undefined ? options.costCeiling : isPglite(db) ? PGLITE_COST_CEILING : null;

  const parse = (text: string): QueryAst => checkQuery(parseQueryText(text));

  // The same query text is often sent again (a dashboard, a saved query): its checked AST and
  // statement are kept per text, caller visibility and limit, the least recently used dropped
  // first. Both are plain values never changed after they are built. Invalid text is not kept.
  const cache = new Map<string, { ast: QueryAst; compiled: CompiledQuery }>();
  const prepared = (text: string, visibility: Visibility, limit: number) => {
    const key = JSON.stringify([text, visibility.kinds, visibility.toolsets, limit]);
    let entry = cache.get(key);
    if (entry !== undefined) cache.delete(key);
    else {
      const ast = parse(text);
      entry = { ast, compiled: compileQuery(ast, { visibility, rowLimit: limit }) };
      if (cache.size >= PREPARED_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(key, entry);
    return entry;
  };

  return {
    parse,
    async execute({ query, limit = DEFAULT_ROW_LIMIT, visibility }) {
      if (!Number.isInteger(limit) || limit < MIN_ROW_LIMIT || limit > MAX_ROW_LIMIT) {
        throw badRequest('invalid-limit', `limit must be a whole number from ${MIN_ROW_LIMIT} to ${MAX_ROW_LIMIT}.`);
      }
      const { ast, compiled } = prepared(query, visibility, limit);
      try {
        return await withTransaction(db, async (tx) => {
          // One round trip sets the transaction up: read-only (the grammar cannot write; the
          // database enforces it too), the statement timeout, and for an anchored pattern the
          // planner settings that keep its joins walking out from the anchor. The rows and the
          // nodes and edges of their matches come from the one statement, so from one snapshot.
          await tx.execute(transactionSettings(statementTimeoutMs, compiled.anchored));
          if (costCeiling !== null) await refuseCostly(tx, compiled, costCeiling);
          const rows = rowsOf<Record<string, unknown>>(await tx.execute(compiled.statement));
          const graph = graphOf(compiled, rows);
          const shaped = rows.map((row) => Object.fromEntries(compiled.columns.map((c) => [c.name, row[c.sqlName] ?? null])));
          return { query, ast, rowCount: shaped.length, rows: shaped, ...graph };
        });
      } catch (error) {
        if (sqlStateOf(error) === QUERY_CANCELED) {
          throw badRequest(
            'query-timeout',
            `The query ran longer than ${statementTimeoutMs / 1000} s and was stopped. Narrow the pattern: give the first node a label and a key (e.g. (i:Incident {key: '…'})), name relationship types, shorten variable-length ranges, or lower LIMIT.`,
            { timeoutMs: statementTimeoutMs },
          );
        }
        if (sqlStateOf(error)?.startsWith('22')) {
          // A data exception (a value the database cannot hold or compare): a problem of the query text.
          throw badRequest('invalid-query', 'A value in the query cannot be used by the database; check its strings and numbers.');
        }
        throw error;
      }
    },
  };
}

/** Prepared queries (checked AST and statement) kept per service. */
const PREPARED_CACHE_SIZE = 256;

/** SQLSTATE query_canceled: statement_timeout (or a cancel request) stopped the statement. */
const QUERY_CANCELED = '57014';

/** The SQLSTATE of a database error, looking through drizzle's DrizzleQueryError wrapper. */
export function sqlStateOf(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function isPglite(db: Db): boolean {
  return (db as unknown as { $client?: unknown }).$client instanceof PGlite;
}

async function refuseCostly(tx: Db, compiled: CompiledQuery, ceiling: number): Promise<void> {
  const [plan] = rowsOf<{ 'QUERY PLAN': unknown }>(await tx.execute(sql`EXPLAIN (FORMAT JSON) ${compiled.statement}`));
  const parsed = plan?.['QUERY PLAN'];
  const document = (typeof parsed === 'string' ? JSON.parse(parsed) : parsed) as { Plan: { 'Total Cost': number } }[];
  const cost = document[0]?.Plan['Total Cost'] ?? 0;
  if (cost > ceiling) {
    throw badRequest(
      'query-too-costly',
      `The planner estimates this query at ${Math.round(cost).toLocaleString('en')} cost units, above the ${ceiling.toLocaleString('en')} this embedded database runs (it cannot stop a statement once started). Narrow the pattern: give the first node a label and a key, name relationship types, shorten variable-length ranges, or lower LIMIT.`,
      { estimatedCost: Math.round(cost), costCeiling: ceiling },
    );
  }
}

/** `SELECT set_config(…, true), …`: settings for the query's transaction only. */
function transactionSettings(statementTimeoutMs: number, anchored: boolean): SQL {
  const settings: Record<string, string> = {
    transaction_read_only: 'on',
    statement_timeout: String(statementTimeoutMs),
    ...(anchored ? ANCHORED_PLAN_SETTINGS : {}),
  };
  // The names are this module's own constants (written into the text so a statement log reads plainly); the values are parameters.
  return sql`SELECT ${sql.join(Object.entries(settings).map(([name, value]) => sql`set_config(${sql.raw(`'${name}'`)}, ${value}, true)`), sql`, `)}`;
}

/**
 * The nodes and edges the answer shows: for a query whose rows are matches (no count, no
 * DISTINCT), every node and edge of each returned match (the statement returns their views with
 * each row); otherwise those returned as whole columns. First-seen order, each once.
 */
function graphOf(compiled: CompiledQuery, rows: Record<string, unknown>[]): { nodes: GraphNodeView[]; edges: GraphEdgeView[] } {
  const nodes = new Map<number, GraphNodeView>();
  const edges = new Map<number, GraphEdgeView>();
  const addNode = (node: GraphNodeView) => nodes.has(node.id) || nodes.set(node.id, node);
  const addEdge = (edge: GraphEdgeView) => edges.has(edge.id) || edges.set(edge.id, edge);
  for (const row of rows) {
    if (compiled.tracksMatch) {
      for (const node of row.match_nodes as GraphNodeView[]) addNode(node);
      for (const edge of row.match_edges as GraphEdgeView[]) addEdge(edge);
      continue;
    }
    for (const c of compiled.columns) {
      const value = row[c.sqlName];
      if (value === null || value === undefined) continue;
      if (c.kind === 'node') addNode(value as GraphNodeView);
      else if (c.kind === 'edge') addEdge(value as GraphEdgeView);
      else if (c.kind === 'path') for (const edge of value as GraphEdgeView[]) addEdge(edge);
    }
  }
  return { nodes: [...nodes.values()], edges: [...edges.values()] };
}
