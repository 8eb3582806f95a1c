import { PGlite } from '@electric-sql/pglite';
import { type Static, Type } from '@sinclair/typebox';
import type { Db } from '../../../platform/db/client.ts';
import { badRequest } from '../../../platform/errors.ts';
import type { NodeKind, Visibility } from '../kinds.ts';
import type { QueryAst } from './ast.ts';
import { checkQuery } from './check.ts';
import { type CompiledQuery, compileQuery, type TruncationCause } from './compile.ts';
import { parseQueryText } from './parser.ts';
import { createReplicaRunner } from './replica/replica.ts';
import { createServerRunner, type GraphQueryRunner } from './runner.ts';

export { MAX_QUERY_LENGTH, MAX_QUERY_LENGTH as QUERY_TEXT_MAX, MAX_NESTING } from './parser.ts';
export { MAX_HOPS, MAX_RELATIONSHIPS } from './check.ts';
export { MATCH_ROW_CAP, TRUNCATION_CAUSES, WALK_ROW_CAP } from './compile.ts';

/** The request's `limit`: rows returned at most (the query's own LIMIT can only lower it). */
export const MIN_ROW_LIMIT = 1;
export const MAX_ROW_LIMIT = 1000;
export const DEFAULT_ROW_LIMIT = 100;
export { DEFAULT_ROW_LIMIT as QUERY_LIMIT_DEFAULT, MAX_ROW_LIMIT as QUERY_LIMIT_MAX };

/**
 * How long one query's statement may run before it is stopped (400 `query-timeout`): cancelled on
 * PostgreSQL, abandoned with its worker thread on the embedded database.
 */
export const GRAPH_QUERY_TIMEOUT_MS = 5000;

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
  description: 'The parsed query (docs/graph/query.md, "The AST"): {type: "query", match, where, return, orderBy, skip, limit}.',
});

export interface GraphQueryResult {
  query: string;
  ast: QueryAst;
  rowCount: number;
  rows: Record<string, unknown>[];
  nodes: GraphNodeView[];
  edges: GraphEdgeView[];
  /** True when a cap cut the enumeration (`truncatedBy` says which): the rows are those of the matches before the cut. */
  truncated: boolean;
  truncatedBy: TruncationCause[];
}


export interface GraphQueryService {
  /** Parses and checks `text`; throws the 400 `invalid-query` (line, column, expected for syntax). */
  parse(text: string): QueryAst;
  execute(input: { query: string; limit?: number; visibility: Visibility }): Promise<GraphQueryResult>;
  /** Stops the embedded database's query worker, if one runs. */
  close(): Promise<void>;
}

export interface GraphQueryServiceOptions {
  db: Db;
  /** Default GRAPH_QUERY_TIMEOUT_MS; tests lower it. */
  statementTimeoutMs?: number;
  /** Where statements run; by default a worker-thread replica on PGlite, the server itself on PostgreSQL. */
  runner?: GraphQueryRunner;
  /** Lower caps for tests (compile.ts MATCH_ROW_CAP, WALK_ROW_CAP). */
  caps?: { matchRows: number; walkRows: number };
}

export function createGraphQueryService(options: GraphQueryServiceOptions): GraphQueryService {
  const { db } = options;
  const statementTimeoutMs = options.statementTimeoutMs ?? GRAPH_QUERY_TIMEOUT_MS;
  const runner = options.runner ?? (isPglite(db) ? createReplicaRunner({ db, statementTimeoutMs }) : createServerRunner(db, { statementTimeoutMs }));

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
      entry = { ast, compiled: compileQuery(ast, { visibility, rowLimit: limit, ...(options.caps ? { caps: options.caps } : {}) }) };
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
      // The rows and the nodes and edges of their matches come from the one statement, so from one snapshot.
      const { rows, cuts } = await runner.run(compiled);
      const graph = graphOf(compiled, rows);
      const shaped = rows.map((row) => Object.fromEntries(compiled.columns.map((c) => [c.name, row[c.sqlName] ?? null])));
      return { query, ast, rowCount: shaped.length, rows: shaped, ...graph, truncated: cuts.length > 0, truncatedBy: cuts };
    },
    close: () => runner.close(),
  };
}

/** Prepared queries (checked AST and statement) kept per service. */
const PREPARED_CACHE_SIZE = 256;

function isPglite(db: Db): boolean {
  return (db as unknown as { $client?: unknown }).$client instanceof PGlite;
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

/**
 * The node kinds a query's rows can draw on (the kinds whose freshness the answer depends on): the
 * labels its node patterns name, or every kind the caller sees when a node has no label or a
 * variable-length relationship passes through nodes of any kind.
 */
export function kindsRead(ast: QueryAst, visibility: Visibility): NodeKind[] {
  const labels = new Set<string>();
  for (const path of ast.match) {
    for (const node of [path.start, ...path.hops.map((h) => h.node)]) {
      if (node.label === null) return [...visibility.kinds];
      labels.add(node.label);
    }
    if (path.hops.some((h) => h.relationship.length !== null)) return [...visibility.kinds];
  }
  return visibility.kinds.filter((kind) => labels.has(kind));
}
