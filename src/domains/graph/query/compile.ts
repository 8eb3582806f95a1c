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
 * A checked AST → one parameterised SELECT over graph_nodes and graph_edges (docs/graph-query.md,
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
}

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
   * True when every row also carries `node_ids` and `edge_ids`: the ids of every node and edge of
   * the match behind it (queries that neither aggregate nor use DISTINCT, where a row is one match).
   */
  tracksMatch: boolean;
}

const COMPARISON_SQL: Record<ComparisonOperator, string> = { '=': '=', '<>': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };

const raw = (text: string) => sql.raw(text);
const column = (alias: string, name: string) => raw(`${alias}.${name}`);
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

class QueryBuilder {
  readonly from: SQL[] = [];
  readonly conditions: SQL[] = [];
  /** Every node alias of the pattern, named or anonymous, in order. */
  readonly nodeAliases: string[] = [];
  readonly relationships: RelationshipBinding[] = [];
  private readonly nodes = new Map<string, string>();
  private readonly relationshipsByName = new Map<string, RelationshipBinding>();

  constructor(
    private readonly visibility: Visibility,
    readonly sorts: Map<string, VariableSort>,
  ) {}

  /** Binds a node pattern to a graph_nodes alias (the same alias for every use of one variable). */
  bindNode(pattern: { variable: string | null; label: string | null; properties: PropertyEntry[] }): string {
    let alias = pattern.variable === null ? undefined : this.nodes.get(pattern.variable);
    if (alias === undefined) {
      alias = `n${this.nodeAliases.length}`;
      this.nodeAliases.push(alias);
      if (pattern.variable !== null) this.nodes.set(pattern.variable, alias);
      this.from.push(sql`${graphNodes} AS ${raw(alias)}`);
      this.conditions.push(this.nodeVisible(alias, pattern.label === null));
    }
    if (pattern.label !== null) {
      this.conditions.push(this.visibility.kinds.includes(pattern.label as never) ? sql`${column(alias, 'kind')} = ${pattern.label}` : sql`FALSE`);
    }
    for (const entry of pattern.properties) this.conditions.push(propertyEquals(alias, NODE_COLUMNS, entry));
    return alias;
  }

  /**
   * A node exists for queries while `removed_run` is null, and is visible when its kind is one the
   * caller's scopes allow and, for a caller bound to toolsets, it belongs to none or to one of them.
   */
  nodeVisible(alias: string, checkKind: boolean): SQL {
    const parts = [sql`${column(alias, 'removed_run')} IS NULL`];
    if (checkKind) parts.push(sql`${column(alias, 'kind')} = ANY(${textArray(this.visibility.kinds)})`);
    if (this.visibility.toolsets !== null) {
      parts.push(sql`(${column(alias, 'toolset')} IS NULL OR ${column(alias, 'toolset')} = ANY(${textArray(this.visibility.toolsets)}))`);
    }
    return join(parts, ' AND ');
  }

  bindRelationship(pattern: RelationshipPattern, fromAlias: string, toAlias: string): void {
    const index = this.relationships.length;
    if (pattern.length === null) {
      const alias = `e${index}`;
      this.from.push(sql`${graphEdges} AS ${raw(alias)}`);
      this.conditions.push(sql`${column(alias, 'removed_run')} IS NULL`, ...edgeFilters(alias, pattern), fixedDirection(alias, pattern.direction, fromAlias, toAlias));
      this.remember(pattern, { alias, sort: 'edge', types: pattern.types });
    } else {
      const alias = `p${index}`;
      this.from.push(sql`LATERAL ${this.walk(index, pattern, fromAlias)} AS ${raw(alias)}`);
      this.conditions.push(sql`${column(alias, 'end_id')} = ${column(toAlias, 'id')}`);
      this.remember(pattern, { alias, sort: 'path', types: pattern.types });
    }
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
  private walk(index: number, pattern: RelationshipPattern, startAlias: string): SQL {
    const { min, max } = pattern.length!;
    const walk = `w${index}`;
    const edge = `we${index}`;
    const node = `wn${index}`;
    const here = column(walk, 'node_id');
    const step =
      pattern.direction === 'out'
        ? { on: sql`${column(edge, 'src')} = ${here}`, next: column(edge, 'dst') }
        : pattern.direction === 'in'
          ? { on: sql`${column(edge, 'dst')} = ${here}`, next: column(edge, 'src') }
          : {
              on: sql`(${column(edge, 'src')} = ${here} OR ${column(edge, 'dst')} = ${here})`,
              next: sql`CASE WHEN ${column(edge, 'src')} = ${here} THEN ${column(edge, 'dst')} ELSE ${column(edge, 'src')} END`,
            };
    const edgeConditions = [step.on, sql`${column(edge, 'removed_run')} IS NULL`, sql`NOT (${column(edge, 'id')} = ANY(${column(walk, 'edges')}))`, ...edgeFilters(edge, pattern)];
    return sql`(WITH RECURSIVE ${raw(walk)}(node_id, edges, hops) AS (
      SELECT ${column(startAlias, 'id')}, ARRAY[]::bigint[], 0
      UNION ALL
      SELECT ${column(node, 'id')}, ${column(walk, 'edges')} || ${column(edge, 'id')}, ${column(walk, 'hops')} + 1
      FROM ${raw(walk)}
      JOIN ${graphEdges} AS ${raw(edge)} ON ${join(edgeConditions, ' AND ')}
      JOIN ${graphNodes} AS ${raw(node)} ON ${column(node, 'id')} = ${step.next} AND ${this.nodeVisible(node, true)}
      WHERE ${column(walk, 'hops')} < ${max}::int
    ) SELECT ${column(walk, 'node_id')} AS end_id, ${column(walk, 'edges')} AS edges FROM ${raw(walk)} WHERE ${column(walk, 'hops')} >= ${min}::int)`;
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

function propertyOperand(alias: string, columns: Record<string, 'string' | 'number'>, property: string): CompiledOperand {
  const type = Object.hasOwn(columns, property) ? columns[property] : undefined;
  if (type !== undefined) return { form: 'column', sql: column(alias, property), type };
  // A property stored as JSON null reads as missing, as in Cypher where null is never stored.
  return { form: 'json', sql: sql`nullif(${column(alias, 'props')} -> ${property}::text, 'null'::jsonb)` };
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
  return typeof value === 'string' ? sql`${value}::text` : sql`${value}::numeric`;
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

function compileOperand(builder: QueryBuilder, operand: Operand): CompiledOperand {
  if (operand.type === 'literal') return { form: 'literal', value: operand.value };
  if (operand.type === 'variable') {
    const node = builder.node(operand.name);
    return { form: 'entity', id: column(node ?? builder.relationship(operand.name)!.alias, 'id') };
  }
  const node = builder.node(operand.variable);
  if (node !== undefined) return propertyOperand(node, NODE_COLUMNS, operand.property);
  return propertyOperand(builder.relationship(operand.variable)!.alias, EDGE_COLUMNS, operand.property);
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

function nodeView(alias: string): SQL {
  return sql`jsonb_build_object('id', ${column(alias, 'id')}, 'kind', ${column(alias, 'kind')}, 'key', ${column(alias, 'key')}, 'props', ${column(alias, 'props')})`;
}

function edgeView(alias: string): SQL {
  return sql`jsonb_build_object('id', ${column(alias, 'id')}, 'kind', ${column(alias, 'kind')}, 'src', ${column(alias, 'src')}, 'dst', ${column(alias, 'dst')}, 'props', ${column(alias, 'props')})`;
}

/** The edges of a variable-length path, in walking order, as a jsonb array of edge views. */
function pathView(alias: string): SQL {
  return sql`(SELECT coalesce(jsonb_agg(${edgeView('pe')} ORDER BY pu.ord), '[]'::jsonb) FROM unnest(${column(alias, 'edges')}) WITH ORDINALITY AS pu(edge_id, ord) JOIN ${graphEdges} AS pe ON pe.id = pu.edge_id)`;
}

interface Projection {
  sql: SQL;
  kind: ColumnKind;
}

function projection(builder: QueryBuilder, expression: ReturnExpression): Projection {
  if (expression.type === 'variable') {
    const node = builder.node(expression.name);
    if (node !== undefined) return { sql: nodeView(node), kind: 'node' };
    const relationship = builder.relationship(expression.name)!;
    return relationship.sort === 'edge' ? { sql: edgeView(relationship.alias), kind: 'edge' } : { sql: pathView(relationship.alias), kind: 'path' };
  }
  if (expression.type === 'property') return { sql: jsonOf(compileOperand(builder, expression)), kind: 'value' };
  return { sql: sql`to_jsonb(${countOf(builder, expression)})`, kind: 'value' };
}

function countOf(builder: QueryBuilder, call: Extract<ReturnExpression, { type: 'count' }>): SQL {
  if (call.argument === null) return sql`count(*)`;
  const distinct = raw(call.distinct ? 'DISTINCT ' : '');
  if (call.argument.type === 'property') return sql`count(${distinct}${jsonOf(compileOperand(builder, call.argument))})`;
  const node = builder.node(call.argument.name);
  if (node !== undefined) return sql`count(${distinct}${column(node, 'id')})`;
  const relationship = builder.relationship(call.argument.name)!;
  return sql`count(${distinct}${column(relationship.alias, relationship.sort === 'edge' ? 'id' : 'edges')})`;
}

/** What one ORDER BY item sorts on: a returned column by its SQL name, or (plain queries) an expression. */
function orderKey(builder: QueryBuilder, order: OrderItem, items: ReturnItem[], projectsOnly: boolean): SQL {
  const byAlias = items.findIndex((item) => order.expression.type === 'variable' && item.alias === order.expression.name);
  const index = byAlias >= 0 ? byAlias : items.findIndex((item) => orderNamesItem(order, item));
  const expression = index >= 0 ? items[index]!.expression : order.expression;
  // A node or an edge sorts by its id (its jsonb view would sort by shape first).
  if (!projectsOnly && expression.type === 'variable') return column(builder.node(expression.name) ?? builder.relationship(expression.name)!.alias, 'id');
  if (index >= 0) return raw(`c${index}`);
  const operand = compileOperand(builder, order.expression as Operand);
  return operand.form === 'column' ? operand.sql : jsonOf(operand);
}

export function compileQuery(ast: QueryAst, options: CompileOptions): CompiledQuery {
  const sorts = variableSorts(ast);
  const builder = new QueryBuilder(options.visibility, sorts);
  for (const path of ast.match) {
    let previous = builder.bindNode(path.start);
    for (const hop of path.hops) {
      // Both ends are bound before the relationship, whose join (or walk, from the left end) names them.
      const next = builder.bindNode(hop.node);
      builder.bindRelationship(hop.relationship, previous, next);
      previous = next;
    }
  }
  if (ast.where) builder.conditions.push(compileExpression(builder, ast.where));

  const items = returnItemsOf(ast, sorts);
  const aggregates = items.some((item) => isAggregate(item.expression));
  const tracksMatch = !aggregates && !ast.return.distinct;
  const projections = items.map((item) => projection(builder, item.expression));
  const columns: OutputColumn[] = items.map((item, i) => ({ name: item.alias ?? item.text, sqlName: `c${i}`, kind: projections[i]!.kind }));

  const select = projections.map((p, i) => sql`${p.sql} AS ${raw(`c${i}`)}`);
  if (tracksMatch) {
    select.push(sql`to_jsonb(ARRAY[${join(builder.nodeAliases.map((alias) => column(alias, 'id')), ', ')}]::bigint[]) AS node_ids`);
    const edgeParts = builder.relationships.map((r) => (r.sort === 'edge' ? sql`ARRAY[${column(r.alias, 'id')}]::bigint[]` : column(r.alias, 'edges')));
    select.push(edgeParts.length === 0 ? sql`'[]'::jsonb AS edge_ids` : sql`to_jsonb(${join(edgeParts, ' || ')}) AS edge_ids`);
  }

  const parts: SQL[] = [sql`SELECT ${raw(ast.return.distinct ? 'DISTINCT ' : '')}${join(select, ', ')}`, sql`FROM ${join(builder.from, ', ')}`];
  if (builder.conditions.length > 0) parts.push(sql`WHERE ${join(builder.conditions, ' AND ')}`);
  if (aggregates) {
    // Cypher's implicit grouping: the items that do not count are the grouping keys.
    const keys = items.flatMap((item, i) => (isAggregate(item.expression) ? [] : [String(i + 1)]));
    if (keys.length > 0) parts.push(raw(`GROUP BY ${keys.join(', ')}`));
  }
  if (ast.orderBy.length > 0) {
    const projectsOnly = aggregates || ast.return.distinct;
    parts.push(sql`ORDER BY ${join(ast.orderBy.map((order) => sql`${orderKey(builder, order, items, projectsOnly)} ${raw(order.descending ? 'DESC' : 'ASC')}`), ', ')}`);
  }
  parts.push(sql`LIMIT ${Math.min(ast.limit ?? options.rowLimit, options.rowLimit)}::bigint OFFSET ${ast.skip ?? 0}::bigint`);
  return { statement: join(parts, '\n'), columns, tracksMatch };
}
