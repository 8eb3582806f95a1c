import { type SQL, sql } from 'drizzle-orm';
import type { Visibility } from '../kinds.ts';
import { graphEdges, graphNodes } from '../schema.ts';
import type {
  ComparisonOperator,
  Direction,
  Expression,
  LiteralValue,
  Operand,
  OrderItem,
  PropertyEntry,
  QueryAst,
  RelationshipPattern,
  ReturnExpression,
  ReturnItem,
  StringOperator,
} from './ast.ts';
import { type VariableSort, isAggregate, orderNamesItem, returnItemsOf, variableSorts } from './check.ts';

/**
 * A checked AST → one parameterised SELECT over graph_nodes and graph_edges (docs/graph/query.md,
 * "Semantics"). Pure: no database, no clock.
 *
 * Every value that comes from the query text (labels, types, property names, literals, lists)
 * and the caller's visible kinds and toolsets travel as bound parameters of drizzle's `sql`
 * template. `sql.raw` is used only for text this module writes itself: the aliases it generates
 * (n0, e1, p2, w2, c3), column names of the two graph tables, and operators and keywords picked
 * from fixed tables by the AST's enumerated fields.
 */

export interface CompileOptions {
  visibility: Visibility;
  /** The request's row limit; the statement returns at most the smaller of it and the query's LIMIT. */
  rowLimit: number;
  /** The caps on enumerated rows; MATCH_ROW_CAP and WALK_ROW_CAP unless a test lowers them. */
  caps?: { matchRows: number; walkRows: number };
}

/**
 * The most matches of the pattern one query enumerates (before DISTINCT, grouping, ORDER BY, SKIP
 * and LIMIT see them). A query that would enumerate more is cut there and answered with what the
 * first MATCH_ROW_CAP matches give, marked `truncated` (docs/graph/query.md, "Limits"). This bounds
 * the rows a count, a sort or a cross product works through however large the graph is.
 */
export const MATCH_ROW_CAP = 100_000;

/**
 * The most paths one variable-length relationship yields from one start node; more are cut and
 * the answer is marked `truncated`. A walk from a hub over `*1..5` otherwise multiplies its
 * neighbourhood five times over before any other part of the query can stop it.
 */
export const WALK_ROW_CAP = 10_000;

/** Which cap cut an answer (docs/graph/query.md, "Limits"): the match cap or a walk's. */
export const TRUNCATION_CAUSES = ['match-rows', 'walk-rows'] as const;
export type TruncationCause = (typeof TRUNCATION_CAUSES)[number];

/**
 * Transaction-local settings the statement sets when it cuts, one per cap. The runner clears them
 * before the statement and reads them after it, in the same transaction (runner.ts `READ_CUTS`).
 */
export const CUT_SETTINGS: Readonly<Record<TruncationCause, string>> = { 'walk-rows': 'observatory.graph_walk_cut', 'match-rows': 'observatory.graph_match_cut' };

/** What a returned column holds, so the service can collect the nodes and edges it shows. */
export type ColumnKind = 'value' | 'node' | 'edge' | 'path';

export interface OutputColumn {
  /** The row key: the alias, or the item as written. */
  name: string;
  /** The generated SQL column name (`c0`, `c1`, …). */
  sqlName: string;
  kind: ColumnKind;
}

export interface CompiledQuery {
  statement: SQL;
  columns: OutputColumn[];
  /**
   * True when every row also carries `match_nodes` and `match_edges`: the views (jsonb arrays) of
   * every node and edge of the match behind it, edges of a variable-length path in path order
   * (queries that neither aggregate nor use DISTINCT, where a row is one match).
   */
  tracksMatch: boolean;
  /**
   * True when the pattern has an anchor, a node pinned by `id` or `key` equality (at most one row
   * per visible kind through the primary key or the (kind, key) index): the FROM list is then
   * written as a walk out from it and the statement must run with `ANCHORED_PLAN_SETTINGS`.
   */
  anchored: boolean;
}

/**
 * Planner settings for an anchored statement (set for its transaction only): the joins in the
 * order written (out from the anchor) and by nested loops over the edge indexes, so the work
 * follows the anchor's neighbourhood and stops at the LIMIT. Left to itself the planner misjudges
 * such patterns: it cannot know that every SEEN_ON edge ends on a Tenant, estimates the
 * neighbourhood a few rows, and picks a merge or hash join that scans every edge of the type in
 * the hope of finding the few early (docs/graph/query.md, "Performance").
 */
export const ANCHORED_PLAN_SETTINGS: Readonly<Record<string, string>> = {
  join_collapse_limit: '1',
  from_collapse_limit: '1',
};

/**
 * Planner settings for every statement: joins by nested loops over the indexes, never by hash or
 * merge. A query enumerates at most MATCH_ROW_CAP matches, so the work of a nested loop follows
 * the rows it produces and stops with them; a hash join would first read a whole table, and
 * inside a walk or a lateral join (run once per outer row) read it again each time (a
 * `(a)-[*1..5]-(b)-[*1..2]-(c)` spent seconds rebuilding one hash of every node per step).
 */
export const PLAN_SETTINGS: Readonly<Record<string, string>> = {
  enable_mergejoin: 'off',
  enable_hashjoin: 'off',
};

const COMPARISON_SQL: Record<ComparisonOperator, string> = { '=': '=', '<>': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };

const raw = (text: string) => sql.raw(text);
/** How an expression reads a column of a node, edge or walk alias. */
type ColumnOf = (alias: string, name: string) => SQL;
/** Inside the match: the alias is a row of the FROM list. */
const column: ColumnOf = (alias, name) => raw(`${alias}.${name}`);
const join = (parts: SQL[], separator: string) => sql.join(parts, raw(separator));

/** A text[] built from a jsonb array parameter (drizzle would spread a JS array into a list of parameters). */
const textArray = (values: readonly string[]) => sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`;

/** Node columns a query may name directly; every other property is read from `props`. */
const NODE_COLUMNS: Record<string, 'string' | 'number'> = { id: 'number', kind: 'string', key: 'string' };
const EDGE_COLUMNS: Record<string, 'string' | 'number'> = { id: 'number', kind: 'string', src: 'number', dst: 'number' };

interface RelationshipBinding {
  alias: string;
  sort: 'edge' | 'path';
  types: readonly string[];
}

/** An operand compiled: a value known now, a typed column, a jsonb expression, or a whole node or edge. */
type CompiledOperand =
  | { form: 'literal'; value: LiteralValue }
  | { form: 'column'; sql: SQL; type: 'string' | 'number' }
  | { form: 'json'; sql: SQL }
  | { form: 'entity'; id: SQL };

/** One FROM item: a node, an edge, or a variable-length walk (built once its start is known). */
type FromItem =
  | { type: 'node'; alias: string }
  | { type: 'edge'; alias: string; from: string; to: string }
  | { type: 'walk'; alias: string; index: number; pattern: RelationshipPattern; from: string; to: string };

/** How surely a node condition pins one row: by id (primary key), by label and key, by key alone. */
const ANCHOR_BY_ID = 3;
const ANCHOR_BY_LABEL_AND_KEY = 2;
const ANCHOR_BY_KEY = 1;

class QueryBuilder {
  readonly items: FromItem[] = [];
  readonly conditions: SQL[] = [];
  /** Per node alias: whether an id or a key equality pins it, and whether it has a label (anchorStrength). */
  private readonly pins = new Map<string, { id: boolean; key: boolean; label: boolean }>();
  /** Every node alias of the pattern, named or anonymous, in order. */
  readonly nodeAliases: string[] = [];
  readonly relationships: RelationshipBinding[] = [];
  private readonly nodes = new Map<string, string>();
  private readonly relationshipsByName = new Map<string, RelationshipBinding>();

  constructor(
    private readonly visibility: Visibility,
    readonly sorts: Map<string, VariableSort>,
    private readonly walkRows: number,
  ) {}

  /** Binds a node pattern to a graph_nodes alias (the same alias for every use of one variable). */
  bindNode(pattern: { variable: string | null; label: string | null; properties: PropertyEntry[] }): string {
    let alias = pattern.variable === null ? undefined : this.nodes.get(pattern.variable);
    if (alias === undefined) {
      alias = `n${this.nodeAliases.length}`;
      this.nodeAliases.push(alias);
      if (pattern.variable !== null) this.nodes.set(pattern.variable, alias);
      this.items.push({ type: 'node', alias });
      this.conditions.push(this.nodeVisible(alias, pattern.label === null));
    }
    if (pattern.label !== null) this.pin(alias, 'label');
    for (const entry of pattern.properties) this.pinByEquality(alias, entry.key, entry.value);
    if (pattern.label !== null) {
      this.conditions.push(this.visibility.kinds.includes(pattern.label as never) ? sql`${column(alias, 'kind')} = ${pattern.label}` : sql`FALSE`);
    }
    for (const entry of pattern.properties) this.conditions.push(propertyEquals(alias, NODE_COLUMNS, entry));
    return alias;
  }

  private pin(alias: string, what: 'id' | 'key' | 'label'): void {
    const pins = this.pins.get(alias) ?? { id: false, key: false, label: false };
    pins[what] = true;
    this.pins.set(alias, pins);
  }

  /** Notes `alias.property = value` when it is one the primary key or the (kind, key) index answers. */
  pinByEquality(alias: string, property: string, value: LiteralValue): void {
    if (property === 'id' && typeof value === 'number') this.pin(alias, 'id');
    else if (property === 'key' && typeof value === 'string') this.pin(alias, 'key');
  }

  /** How surely `alias` is pinned to one row (0: not at all). */
  anchorStrength(alias: string): number {
    const pins = this.pins.get(alias);
    if (pins === undefined) return 0;
    if (pins.id) return ANCHOR_BY_ID;
    if (pins.key) return pins.label ? ANCHOR_BY_LABEL_AND_KEY : ANCHOR_BY_KEY;
    return 0;
  }

  /**
   * A node exists for queries while `removed_run` is null, and is visible when its kind is one the
   * caller's scopes allow and, for a caller bound to toolsets, it belongs to none or to one of them
   * and, if only toolsets' events name it, one of those is the caller's.
   */
  nodeVisible(alias: string, checkKind: boolean): SQL {
    const parts = [sql`${column(alias, 'removed_run')} IS NULL`];
    if (checkKind) parts.push(sql`${column(alias, 'kind')} = ANY(${textArray(this.visibility.kinds)})`);
    if (this.visibility.toolsets !== null) {
      const toolsets = textArray(this.visibility.toolsets);
      parts.push(sql`(${column(alias, 'toolset')} IS NULL OR ${column(alias, 'toolset')} = ANY(${toolsets}))`);
      // A node of no toolset that only some toolsets' events name (graph_nodes.named_by) is theirs too.
      parts.push(sql`(${column(alias, 'named_by')} IS NULL OR ${column(alias, 'named_by')} && ${toolsets})`);
    }
    return join(parts, ' AND ');
  }

  bindRelationship(pattern: RelationshipPattern, fromAlias: string, toAlias: string): void {
    const index = this.relationships.length;
    if (pattern.length === null) {
      const alias = `e${index}`;
      this.items.push({ type: 'edge', alias, from: fromAlias, to: toAlias });
      this.conditions.push(sql`${column(alias, 'removed_run')} IS NULL`, ...edgeFilters(alias, pattern), fixedDirection(alias, pattern.direction, fromAlias, toAlias));
      this.remember(pattern, { alias, sort: 'edge', types: pattern.types });
    } else {
      const alias = `p${index}`;
      this.items.push({ type: 'walk', alias, index, pattern, from: fromAlias, to: toAlias });
      this.remember(pattern, { alias, sort: 'path', types: pattern.types });
    }
  }

  /**
   * The FROM clause. Without an anchor: every item in pattern order, comma-separated, for the
   * planner to order. With one: explicit joins in the order of a walk out from the anchor (each
   * edge right after a node it touches, each node right after an edge that reaches it), which
   * `ANCHORED_PLAN_SETTINGS` keeps; a variable-length walk then starts from whichever of its ends
   * is reached first. The walks' end conditions go to `conditions`.
   */
  fromClause(anchor: string | null): SQL {
    const order = anchor === null ? this.items : this.walkOrder(anchor);
    const placed = new Set<string>();
    const parts: SQL[] = [];
    for (const item of order) {
      let part: SQL;
      if (item.type === 'node') part = sql`${graphNodes} AS ${raw(item.alias)}`;
      else if (item.type === 'edge') part = sql`${graphEdges} AS ${raw(item.alias)}`;
      else {
        // Walk from the left end unless only the right end is placed already (then walk backwards).
        const backwards = anchor !== null && !placed.has(item.from) && placed.has(item.to);
        const [start, end] = backwards ? [item.to, item.from] : [item.from, item.to];
        part = sql`LATERAL ${this.walk(item.index, item.pattern, start, backwards)} AS ${raw(item.alias)}`;
        this.conditions.push(sql`${column(item.alias, 'end_id')} = ${column(end, 'id')}`);
      }
      placed.add(item.alias);
      parts.push(part);
    }
    return anchor === null ? join(parts, ', ') : join(parts, ' CROSS JOIN ');
  }

  /** The items in the order of a breadth-first walk over the pattern from `anchor`, then from the next best node of each part left. */
  private walkOrder(anchor: string): FromItem[] {
    const nodes = this.items.filter((item) => item.type === 'node');
    const relationships = this.items.filter((item) => item.type !== 'node');
    const order: FromItem[] = [];
    const reached = new Set<string>();
    const used = new Set<string>();
    let start: string | undefined = anchor;
    while (start !== undefined) {
      const queue = [start];
      reached.add(start);
      order.push(nodes.find((n) => n.alias === start)!);
      while (queue.length > 0) {
        const here = queue.shift()!;
        for (const relationship of relationships) {
          if (used.has(relationship.alias) || (relationship.from !== here && relationship.to !== here)) continue;
          used.add(relationship.alias);
          order.push(relationship);
          const other = relationship.from === here ? relationship.to : relationship.from;
          if (!reached.has(other)) {
            reached.add(other);
            queue.push(other);
            order.push(nodes.find((n) => n.alias === other)!);
          }
        }
      }
      const left = nodes.filter((n) => !reached.has(n.alias));
      start = left.reduce<FromItem | undefined>((best, n) => (best === undefined || this.anchorStrength(n.alias) > this.anchorStrength(best.alias) ? n : best), undefined)?.alias;
    }
    return order;
  }

  /** The node most surely pinned to one row (the first such in pattern order), or null when none is. */
  anchor(): string | null {
    let best: string | null = null;
    for (const alias of this.nodeAliases) {
      if (this.anchorStrength(alias) > (best === null ? 0 : this.anchorStrength(best))) best = alias;
    }
    return best;
  }

  private remember(pattern: RelationshipPattern, binding: RelationshipBinding): void {
    // Cypher's relationship uniqueness: within one MATCH, distinct relationships bind distinct edges.
    for (const earlier of this.relationships) {
      if (earlier.types.length > 0 && binding.types.length > 0 && !earlier.types.some((type) => binding.types.includes(type))) continue;
      this.conditions.push(distinctEdges(earlier, binding));
    }
    this.relationships.push(binding);
    if (pattern.variable !== null) this.relationshipsByName.set(pattern.variable, binding);
  }

  /**
   * A variable-length relationship: a recursive walk from the start node over edges of the allowed
   * kinds and direction, each edge at most once per path, each node it reaches existing and
   * visible (so a hidden node cannot be walked through), between min and max edges long.
   */
  private walk(index: number, pattern: RelationshipPattern, startAlias: string, backwards: boolean): SQL {
    const { min, max } = pattern.length!;
    const walk = `w${index}`;
    const edge = `we${index}`;
    const node = `wn${index}`;
    // The walk yields paths as they are found; the first walkRows are kept, and pulling one more
    // marks the answer truncated instead of going on (the recursion stops when nothing pulls).
    const ranked = `wr${index}`;
    const here = column(walk, 'node_id');
    // Walking from the right end: the arrows point the other way, and each edge goes in front of
    // the path so far, so `edges` still lists the path from its left end.
    const direction = backwards ? ({ out: 'in', in: 'out', either: 'either' } as const)[pattern.direction] : pattern.direction;
    const extended = backwards ? sql`${column(edge, 'id')} || ${column(walk, 'edges')}` : sql`${column(walk, 'edges')} || ${column(edge, 'id')}`;
    const step =
      direction === 'out'
        ? { on: sql`${column(edge, 'src')} = ${here}`, next: column(edge, 'dst') }
        : direction === 'in'
          ? { on: sql`${column(edge, 'dst')} = ${here}`, next: column(edge, 'src') }
          : {
              on: sql`(${column(edge, 'src')} = ${here} OR ${column(edge, 'dst')} = ${here})`,
              next: sql`CASE WHEN ${column(edge, 'src')} = ${here} THEN ${column(edge, 'dst')} ELSE ${column(edge, 'src')} END`,
            };
    // Each step looks the next node up by its primary key (OFFSET 0 keeps that lookup a nested
    // one: left to itself the planner may scan every node once per step of every walk).
    const edgeConditions = [step.on, sql`${column(edge, 'removed_run')} IS NULL`, sql`NOT (${column(edge, 'id')} = ANY(${column(walk, 'edges')}))`, ...edgeFilters(edge, pattern)];
    return sql`(WITH RECURSIVE ${raw(walk)}(node_id, edges, hops) AS (
      SELECT ${column(startAlias, 'id')}, ARRAY[]::bigint[], 0
      UNION ALL
      SELECT ${column(node, 'id')}, ${extended}, ${column(walk, 'hops')} + 1
      FROM ${raw(walk)}
      JOIN ${graphEdges} AS ${raw(edge)} ON ${join(edgeConditions, ' AND ')}
      CROSS JOIN LATERAL (SELECT ${column(node, 'id')} FROM ${graphNodes} AS ${raw(node)} WHERE ${column(node, 'id')} = ${step.next} AND ${this.nodeVisible(node, true)} OFFSET 0) AS ${raw(node)}
      WHERE ${column(walk, 'hops')} < ${max}::int
    ) SELECT ${column(ranked, 'end_id')}, ${column(ranked, 'edges')}
      FROM (SELECT ${column(walk, 'node_id')} AS end_id, ${column(walk, 'edges')} AS edges, row_number() OVER () AS walk_rank
            FROM ${raw(walk)} WHERE ${column(walk, 'hops')} >= ${min}::int LIMIT ${this.walkRows + 1}::bigint) AS ${raw(ranked)}
      WHERE ${cutBeyond(column(ranked, 'walk_rank'), this.walkRows, 'walk-rows')})`;
  }

  node(name: string): string | undefined {
    return this.nodes.get(name);
  }

  relationship(name: string): RelationshipBinding | undefined {
    return this.relationshipsByName.get(name);
  }
}

function edgeFilters(alias: string, pattern: RelationshipPattern): SQL[] {
  const filters: SQL[] = [];
  if (pattern.types.length === 1) filters.push(sql`${column(alias, 'kind')} = ${pattern.types[0]}`);
  else if (pattern.types.length > 1) filters.push(sql`${column(alias, 'kind')} = ANY(${textArray(pattern.types)})`);
  for (const entry of pattern.properties) filters.push(propertyEquals(alias, EDGE_COLUMNS, entry));
  return filters;
}

function fixedDirection(edge: string, direction: Direction, from: string, to: string): SQL {
  const forward = sql`${column(edge, 'src')} = ${column(from, 'id')} AND ${column(edge, 'dst')} = ${column(to, 'id')}`;
  const backward = sql`${column(edge, 'src')} = ${column(to, 'id')} AND ${column(edge, 'dst')} = ${column(from, 'id')}`;
  if (direction === 'out') return forward;
  if (direction === 'in') return backward;
  return sql`((${forward}) OR (${backward}))`;
}

function distinctEdges(a: RelationshipBinding, b: RelationshipBinding): SQL {
  const id = (binding: RelationshipBinding) => column(binding.alias, 'id');
  const edges = (binding: RelationshipBinding) => column(binding.alias, 'edges');
  if (a.sort === 'edge' && b.sort === 'edge') return sql`${id(a)} <> ${id(b)}`;
  if (a.sort === 'path' && b.sort === 'path') return sql`NOT (${edges(a)} && ${edges(b)})`;
  const [single, path] = a.sort === 'edge' ? [a, b] : [b, a];
  return sql`NOT (${id(single)} = ANY(${edges(path)}))`;
}

/**
 * The filter that keeps rows ranked up to `cap` and, on the first row past it, records the cut in
 * a transaction-local setting (and drops that row). CASE fixes the order: set_config runs only
 * for a row past the cap, and the LIMIT cap + 1 under it means that happens at most once.
 */
function cutBeyond(rank: SQL, cap: number, cause: TruncationCause): SQL {
  return sql`CASE WHEN ${rank} <= ${cap}::bigint THEN true ELSE set_config(${raw(`'${CUT_SETTINGS[cause]}'`)}, '1', true) IS NULL END`;
}

function propertyOperand(alias: string, columns: Record<string, 'string' | 'number'>, property: string, col: ColumnOf = column): CompiledOperand {
  const type = Object.hasOwn(columns, property) ? columns[property] : undefined;
  if (type !== undefined) return { form: 'column', sql: col(alias, property), type };
  // A property stored as JSON null reads as missing, as in Cypher where null is never stored.
  return { form: 'json', sql: sql`nullif(${col(alias, 'props')} -> ${property}::text, 'null'::jsonb)` };
}

function propertyEquals(alias: string, columns: Record<string, 'string' | 'number'>, entry: PropertyEntry): SQL {
  return comparison('=', propertyOperand(alias, columns, entry.key), { form: 'literal', value: entry.value });
}

function jsonOf(operand: CompiledOperand): SQL {
  switch (operand.form) {
    case 'literal':
      return operand.value === null ? sql`NULL::jsonb` : sql`${JSON.stringify(operand.value)}::jsonb`;
    case 'column':
      return sql`to_jsonb(${operand.sql})`;
    case 'json':
      return operand.sql;
    case 'entity':
      return sql`to_jsonb(${operand.id})`;
  }
}

const typeOfLiteral = (value: LiteralValue) => (value === null ? 'null' : typeof value);

function literalParameter(value: string | number): SQL {
  if (typeof value === 'string') return sql`${value}::text`;
  // The number columns (id, src, dst) are bigint: a whole number compared as bigint lets the
  // primary key and the edge indexes serve `n.id = 42` (bigint = numeric would compare casts).
  return Number.isInteger(value) ? sql`${value}::bigint` : sql`${value}::numeric`;
}

/**
 * Cypher's comparison: null on either side gives null; values of different types are never
 * equal and have no order (null); lists and maps compare by value for = and <> only.
 */
function comparison(operator: ComparisonOperator, left: CompiledOperand, right: CompiledOperand): SQL {
  const op = raw(COMPARISON_SQL[operator]);
  if (left.form === 'entity' && right.form === 'entity') return sql`(${left.id} ${op} ${right.id})`;
  if ((left.form === 'literal' && left.value === null) || (right.form === 'literal' && right.value === null)) return sql`NULL::boolean`;
  // A column against a literal of its own type compares natively, so the (kind, key) index serves `n.key = '…'`.
  if (left.form === 'column' && right.form === 'literal' && typeOfLiteral(right.value) === left.type) {
    return sql`(${left.sql} ${op} ${literalParameter(right.value as string | number)})`;
  }
  if (right.form === 'column' && left.form === 'literal' && typeOfLiteral(left.value) === right.type) {
    return sql`(${literalParameter(left.value as string | number)} ${op} ${right.sql})`;
  }
  const l = jsonOf(left);
  const r = jsonOf(right);
  if (operator === '=' || operator === '<>') return sql`(${l} ${op} ${r})`;
  return sql`(CASE WHEN jsonb_typeof(${l}) = jsonb_typeof(${r}) AND jsonb_typeof(${l}) IN ('string', 'number', 'boolean') THEN ${l} ${op} ${r} END)`;
}

/** STARTS WITH, ENDS WITH, CONTAINS: true or false between two strings, null otherwise. */
function stringMatch(operator: StringOperator, left: CompiledOperand, right: CompiledOperand): SQL {
  const guards: SQL[] = [];
  const textOf = (operand: CompiledOperand): SQL | null => {
    if (operand.form === 'literal') return typeof operand.value === 'string' ? sql`${operand.value}::text` : null;
    if (operand.form === 'column') return operand.type === 'string' ? operand.sql : null;
    if (operand.form === 'json') {
      guards.push(sql`jsonb_typeof(${operand.sql}) = 'string'`);
      return sql`(${operand.sql} #>> '{}')`;
    }
    return null;
  };
  const a = textOf(left);
  const b = textOf(right);
  if (a === null || b === null) return sql`NULL::boolean`;
  const test =
    operator === 'STARTS WITH' ? sql`starts_with(${a}, ${b})` : operator === 'ENDS WITH' ? sql`(right(${a}, length(${b})) = ${b})` : sql`(strpos(${a}, ${b}) > 0)`;
  return guards.length === 0 ? test : sql`(CASE WHEN ${join(guards, ' AND ')} THEN ${test} END)`;
}

/** `x IN [..]`: true when an item equals x; null when none does but x or an item is null; false on an empty list. */
function inList(operand: CompiledOperand, list: LiteralValue[]): SQL {
  if (list.length === 0) return sql`FALSE`;
  if (operand.form === 'column' && operand.type === 'string' && list.every((item) => typeof item === 'string')) {
    return sql`(${operand.sql} = ANY(${textArray(list as string[])}))`;
  }
  return sql`(${jsonOf(operand)} = ANY(ARRAY(SELECT nullif(item, 'null'::jsonb) FROM jsonb_array_elements(${JSON.stringify(list)}::jsonb) AS item)))`;
}

function compileOperand(builder: QueryBuilder, operand: Operand, col: ColumnOf = column): CompiledOperand {
  if (operand.type === 'literal') return { form: 'literal', value: operand.value };
  if (operand.type === 'variable') {
    const node = builder.node(operand.name);
    return { form: 'entity', id: col(node ?? builder.relationship(operand.name)!.alias, 'id') };
  }
  const node = builder.node(operand.variable);
  if (node !== undefined) return propertyOperand(node, NODE_COLUMNS, operand.property, col);
  return propertyOperand(builder.relationship(operand.variable)!.alias, EDGE_COLUMNS, operand.property, col);
}

function compileExpression(builder: QueryBuilder, expression: Expression): SQL {
  switch (expression.type) {
    case 'and':
      return sql`(${compileExpression(builder, expression.left)} AND ${compileExpression(builder, expression.right)})`;
    case 'or':
      return sql`(${compileExpression(builder, expression.left)} OR ${compileExpression(builder, expression.right)})`;
    case 'xor':
      // Boolean <> is XOR with SQL's (and Cypher's) null: null when either side is null.
      return sql`(${compileExpression(builder, expression.left)} <> ${compileExpression(builder, expression.right)})`;
    case 'not':
      return sql`(NOT ${compileExpression(builder, expression.operand)})`;
    case 'comparison':
      return comparison(expression.operator, compileOperand(builder, expression.left), compileOperand(builder, expression.right));
    case 'string-match':
      return stringMatch(expression.operator, compileOperand(builder, expression.left), compileOperand(builder, expression.right));
    case 'in':
      return inList(compileOperand(builder, expression.operand), expression.list);
    case 'is-null':
      return sql`(${jsonOf(compileOperand(builder, expression.operand))} IS ${raw(expression.negated ? 'NOT NULL' : 'NULL')})`;
  }
}

function nodeView(alias: string, col: ColumnOf = column): SQL {
  return sql`jsonb_build_object('id', ${col(alias, 'id')}, 'kind', ${col(alias, 'kind')}, 'key', ${col(alias, 'key')}, 'props', ${col(alias, 'props')})`;
}

function edgeView(alias: string, col: ColumnOf = column): SQL {
  return sql`jsonb_build_object('id', ${col(alias, 'id')}, 'kind', ${col(alias, 'kind')}, 'src', ${col(alias, 'src')}, 'dst', ${col(alias, 'dst')}, 'props', ${col(alias, 'props')})`;
}

/** The edges of a variable-length path, in walking order, as a jsonb array of edge views. */
function pathView(alias: string, col: ColumnOf = column): SQL {
  return sql`(SELECT coalesce(jsonb_agg(${edgeView('pe')} ORDER BY pu.ord), '[]'::jsonb) FROM unnest(${col(alias, 'edges')}) WITH ORDINALITY AS pu(edge_id, ord) JOIN ${graphEdges} AS pe ON pe.id = pu.edge_id)`;
}

interface Projection {
  sql: SQL;
  kind: ColumnKind;
}

function projection(builder: QueryBuilder, expression: ReturnExpression, col: ColumnOf): Projection {
  if (expression.type === 'variable') {
    const node = builder.node(expression.name);
    if (node !== undefined) return { sql: nodeView(node, col), kind: 'node' };
    const relationship = builder.relationship(expression.name)!;
    return relationship.sort === 'edge' ? { sql: edgeView(relationship.alias, col), kind: 'edge' } : { sql: pathView(relationship.alias, col), kind: 'path' };
  }
  if (expression.type === 'property') return { sql: jsonOf(compileOperand(builder, expression, col)), kind: 'value' };
  return { sql: sql`to_jsonb(${countOf(builder, expression, col)})`, kind: 'value' };
}

function countOf(builder: QueryBuilder, call: Extract<ReturnExpression, { type: 'count' }>, col: ColumnOf): SQL {
  if (call.argument === null) return sql`count(*)`;
  const distinct = raw(call.distinct ? 'DISTINCT ' : '');
  if (call.argument.type === 'property') return sql`count(${distinct}${jsonOf(compileOperand(builder, call.argument, col))})`;
  const node = builder.node(call.argument.name);
  if (node !== undefined) return sql`count(${distinct}${col(node, 'id')})`;
  const relationship = builder.relationship(call.argument.name)!;
  return sql`count(${distinct}${col(relationship.alias, relationship.sort === 'edge' ? 'id' : 'edges')})`;
}

/** What one ORDER BY item sorts on: a returned column by its SQL name, or (plain queries) an expression. */
function orderKey(builder: QueryBuilder, order: OrderItem, items: ReturnItem[], projectsOnly: boolean, col: ColumnOf): SQL {
  const byAlias = items.findIndex((item) => order.expression.type === 'variable' && item.alias === order.expression.name);
  const index = byAlias >= 0 ? byAlias : items.findIndex((item) => orderNamesItem(order, item));
  const expression = index >= 0 ? items[index]!.expression : order.expression;
  // A node or an edge sorts by its id (its jsonb view would sort by shape first).
  if (!projectsOnly && expression.type === 'variable') return col(builder.node(expression.name) ?? builder.relationship(expression.name)!.alias, 'id');
  if (index >= 0) return raw(`c${index}`);
  const operand = compileOperand(builder, order.expression as Operand, col);
  return operand.form === 'column' ? operand.sql : jsonOf(operand);
}

/**
 * Reads of the match from the query around it: the inner SELECT hands each node, edge and walk
 * alias up as one whole-row value (`n0` of graph_nodes, `p1` of the walk), read there as
 * `(m.n0).id`. Only the aliases an outer expression reads are handed up (`used`).
 */
function matchColumns(): { col: ColumnOf; used: Set<string> } {
  const used = new Set<string>();
  return {
    used,
    col: (alias, name) => {
      used.add(alias);
      return raw(`(m.${alias}).${name}`);
    },
  };
}

export function compileQuery(ast: QueryAst, options: CompileOptions): CompiledQuery {
  const caps = options.caps ?? { matchRows: MATCH_ROW_CAP, walkRows: WALK_ROW_CAP };
  const sorts = variableSorts(ast);
  const builder = new QueryBuilder(options.visibility, sorts, caps.walkRows);
  for (const path of ast.match) {
    let previous = builder.bindNode(path.start);
    for (const hop of path.hops) {
      // Both ends are bound before the relationship, whose join (or walk, from the left end) names them.
      const next = builder.bindNode(hop.node);
      builder.bindRelationship(hop.relationship, previous, next);
      previous = next;
    }
  }
  if (ast.where) {
    builder.conditions.push(compileExpression(builder, ast.where));
    for (const [variable, property, value] of equalitiesOf(ast.where)) {
      const alias = builder.node(variable);
      if (alias !== undefined) builder.pinByEquality(alias, property, value);
    }
  }
  const anchor = builder.anchor();
  const from = builder.fromClause(anchor);

  // Two levels: the inner SELECT enumerates matches, at most caps.matchRows of them (the cut is
  // recorded, not silent); the outer one projects, groups, removes duplicates, sorts and limits
  // those. So a count, a sort or a cross product works through a bounded number of rows.
  const { col, used } = matchColumns();
  const items = returnItemsOf(ast, sorts);
  const aggregates = items.some((item) => isAggregate(item.expression));
  const tracksMatch = !aggregates && !ast.return.distinct;
  const projections = items.map((item) => projection(builder, item.expression, col));
  const columns: OutputColumn[] = items.map((item, i) => ({ name: item.alias ?? item.text, sqlName: `c${i}`, kind: projections[i]!.kind }));

  const select = projections.map((p, i) => sql`${p.sql} AS ${raw(`c${i}`)}`);
  if (tracksMatch) {
    // The match's nodes and edges as views, read in this statement rather than fetched after it by id.
    // (An ARRAY, not jsonb_build_array: a pattern may have more nodes than a function has arguments.)
    select.push(sql`to_jsonb(ARRAY[${join(builder.nodeAliases.map((alias) => nodeView(alias, col)), ', ')}]) AS match_nodes`);
    const edgeParts = builder.relationships.map((r) => (r.sort === 'edge' ? sql`jsonb_build_array(${edgeView(r.alias, col)})` : pathView(r.alias, col)));
    select.push(edgeParts.length === 0 ? sql`'[]'::jsonb AS match_edges` : sql`(${join(edgeParts, ' || ')}) AS match_edges`);
  }
  const projectsOnly = aggregates || ast.return.distinct;
  const orderBy = ast.orderBy.map((order) => sql`${orderKey(builder, order, items, projectsOnly, col)} ${raw(order.descending ? 'DESC' : 'ASC')}`);

  const handedUp = [...used].sort().map((alias) => sql`${raw(alias)} AS ${raw(alias)}`);
  const inner: SQL[] = [sql`SELECT ${join([...handedUp, sql`row_number() OVER () AS match_rank`], ', ')}`, sql`FROM ${from}`];
  if (builder.conditions.length > 0) inner.push(sql`WHERE ${join(builder.conditions, ' AND ')}`);
  inner.push(sql`LIMIT ${caps.matchRows + 1}::bigint`);

  const parts: SQL[] = [
    sql`SELECT ${raw(ast.return.distinct ? 'DISTINCT ' : '')}${join(select, ', ')}`,
    sql`FROM (${join(inner, '\n')}) AS m`,
    sql`WHERE ${cutBeyond(raw('m.match_rank'), caps.matchRows, 'match-rows')}`,
  ];
  if (aggregates) {
    // Cypher's implicit grouping: the items that do not count are the grouping keys.
    const keys = items.flatMap((item, i) => (isAggregate(item.expression) ? [] : [String(i + 1)]));
    if (keys.length > 0) parts.push(raw(`GROUP BY ${keys.join(', ')}`));
  }
  if (orderBy.length > 0) parts.push(sql`ORDER BY ${join(orderBy, ', ')}`);
  parts.push(sql`LIMIT ${Math.min(ast.limit ?? options.rowLimit, options.rowLimit)}::bigint OFFSET ${ast.skip ?? 0}::bigint`);
  return { statement: join(parts, '\n'), columns, tracksMatch, anchored: anchor !== null };
}

/** The `variable.property = literal` comparisons that must hold for WHERE to (the top-level AND chain). */
function equalitiesOf(expression: Expression): [string, string, LiteralValue][] {
  if (expression.type === 'and') return [...equalitiesOf(expression.left), ...equalitiesOf(expression.right)];
  if (expression.type !== 'comparison' || expression.operator !== '=') return [];
  const { left, right } = expression;
  if (left.type === 'property' && right.type === 'literal') return [[left.variable, left.property, right.value]];
  if (right.type === 'property' && left.type === 'literal') return [[right.variable, right.property, left.value]];
  return [];
}
