import { badRequest } from '../../../platform/errors.ts';
import { EDGE_KIND_NAMES, NODE_KINDS, isEdgeKind, isNodeKind } from '../kinds.ts';
import type { Expression, LiteralValue, Operand, OrderItem, QueryAst, ReturnExpression, ReturnItem } from './ast.ts';

/**
 * The rules a parsed query must meet besides its syntax: known labels and types, defined
 * variables, hop bounds, Cypher's implicit grouping, values PostgreSQL can take. Each failure is
 * a 400 `invalid-query` whose `human` says what to change. These rules need no database and no
 * caller, so a saved query is checked by the same call that checks one about to run.
 */

/** The most edges a variable-length relationship may walk; a bare `*` means 1..MAX_HOPS. */
export const MAX_HOPS = 5;

/** The most relationships (fixed or variable-length) one query may have, across its patterns. */
export const MAX_RELATIONSHIPS = 12;

/** What a variable stands for: a node, one edge, or the list of edges of a variable-length path. */
export type VariableSort = 'node' | 'edge' | 'path';

const invalid = (human: string) => badRequest('invalid-query', human);

/** Checks `parsed` and returns it with every variable-length range's bounds filled in. */
export function checkQuery(parsed: QueryAst): QueryAst {
  const ast = structuredClone(parsed);
  const sorts = variableSorts(ast);

  for (const path of ast.match) {
    for (const node of [path.start, ...path.hops.map((hop) => hop.node)]) {
      if (node.label !== null && !isNodeKind(node.label)) throw invalid(unknownName('label', node.label, NODE_KINDS));
      for (const entry of node.properties) {
        checkName(entry.key, 'property name');
        checkValue(entry.value);
      }
    }
    for (const { relationship } of path.hops) {
      for (const type of relationship.types) {
        if (!isEdgeKind(type)) throw invalid(unknownName('relationship type', type, EDGE_KIND_NAMES));
      }
      for (const entry of relationship.properties) {
        checkName(entry.key, 'property name');
        checkValue(entry.value);
      }
      if (relationship.length !== null) relationship.length = boundsOf(relationship.length as { min: number | null; max: number | null });
    }
  }

  if (ast.where) checkExpression(ast.where, sorts);

  const items = returnItemsOf(ast, sorts);
  const names = new Set<string>();
  for (const item of items) {
    checkReturnExpression(item.expression, sorts, 'RETURN');
    const name = item.alias ?? item.text;
    if (names.has(name)) throw invalid(`Two RETURN columns are named "${name}"; give one of them another alias with AS.`);
    names.add(name);
  }
  checkOrderBy(ast.orderBy, items, ast.return.distinct, sorts);

  for (const [clause, value] of [['SKIP', ast.skip], ['LIMIT', ast.limit]] as const) {
    if (value !== null && !Number.isSafeInteger(value)) throw invalid(`${clause} ${value} is too large.`);
  }
  return ast;
}

/** Every variable of the MATCH clause and what it stands for, in order of first appearance. */
export function variableSorts(ast: QueryAst): Map<string, VariableSort> {
  const sorts = new Map<string, VariableSort>();
  let relationships = 0;
  for (const path of ast.match) {
    const nodes = [path.start, ...path.hops.map((hop) => hop.node)];
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      if (node.variable !== null) {
        const known = sorts.get(node.variable);
        if (known !== undefined && known !== 'node') throw invalid(`"${node.variable}" names a relationship and cannot also name a node.`);
        sorts.set(node.variable, 'node');
      }
      const hop = path.hops[i];
      if (!hop) continue;
      relationships += 1;
      const variable = hop.relationship.variable;
      if (variable === null) continue;
      if (sorts.has(variable)) {
        throw invalid(
          sorts.get(variable) === 'node'
            ? `"${variable}" names a node and cannot also name a relationship.`
            : `The relationship variable "${variable}" is used twice; each relationship of a MATCH binds a different edge, so give each its own name.`,
        );
      }
      sorts.set(variable, hop.relationship.length === null ? 'edge' : 'path');
    }
  }
  if (relationships > MAX_RELATIONSHIPS) throw invalid(`The pattern has ${relationships} relationships; at most ${MAX_RELATIONSHIPS} are accepted.`);
  return sorts;
}

/** The items RETURN produces: `RETURN *` stands for every named variable. */
export function returnItemsOf(ast: QueryAst, sorts: Map<string, VariableSort>): ReturnItem[] {
  if (!ast.return.star) return ast.return.items;
  if (sorts.size === 0) throw invalid('RETURN * needs at least one named variable in MATCH, e.g. MATCH (n:Incident) RETURN *.');
  return [...sorts.keys()].map((name) => ({ expression: { type: 'variable', name }, alias: null, text: name }));
}

export const isAggregate = (expression: ReturnExpression) => expression.type === 'count';

function boundsOf(range: { min: number | null; max: number | null }): { min: number; max: number } {
  const min = range.min ?? 1;
  const max = range.max ?? MAX_HOPS;
  if (max > MAX_HOPS) throw invalid(`A variable-length relationship may walk at most ${MAX_HOPS} edges; *${range.min ?? ''}..${max} asks for ${max}.`);
  if (min > max) throw invalid(`In *${min}..${max} the least number of edges is greater than the most.`);
  return { min, max };
}

function unknownName(what: string, name: string, known: readonly string[]): string {
  const sameLetters = known.find((k) => k.toLowerCase() === name.toLowerCase());
  const hint = sameLetters ? ` (names are case-sensitive: did you mean ${sameLetters}?)` : '';
  return `Unknown ${what} "${name}"${hint}. The known ${what}s are: ${known.join(', ')}.`;
}

// U+0000 cannot be stored in PostgreSQL text or jsonb, and a lone surrogate is not Unicode.
const UNSENDABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function checkName(name: string, what: string): void {
  if (UNSENDABLE.test(name)) throw invalid(`A ${what} contains U+0000 or an unpaired surrogate, which the graph cannot hold.`);
}

function checkValue(value: LiteralValue): void {
  if (typeof value === 'string' && UNSENDABLE.test(value)) {
    throw invalid('A string in the query contains U+0000 or an unpaired surrogate; no value in the graph can contain one.');
  }
  // The grammar refuses these already; an AST built some other way is held to the same rule.
  if (typeof value === 'number' && !Number.isFinite(value)) throw invalid('A number in the query is too large.');
}

function checkVariable(name: string, sorts: Map<string, VariableSort>, clause: string): VariableSort {
  const sort = sorts.get(name);
  if (sort === undefined) {
    const known = [...sorts.keys()];
    throw invalid(`Variable "${name}" in ${clause} is not defined in MATCH${known.length ? `; the variables are: ${known.join(', ')}` : ''}.`);
  }
  return sort;
}

function checkProperty(variable: string, property: string, sorts: Map<string, VariableSort>, clause: string): void {
  if (checkVariable(variable, sorts, clause) === 'path') {
    throw invalid(`"${variable}" is a variable-length relationship (a list of edges); ${variable}.${property} cannot be read. Put the condition in the relationship's property map instead.`);
  }
  checkName(property, 'property name');
}

function checkOperand(operand: Operand, sorts: Map<string, VariableSort>): void {
  if (operand.type === 'literal') checkValue(operand.value);
  else if (operand.type === 'property') checkProperty(operand.variable, operand.property, sorts, 'WHERE');
  else checkVariable(operand.name, sorts, 'WHERE');
}

function entityOperand(operand: Operand): string | null {
  return operand.type === 'variable' ? operand.name : null;
}

function checkExpression(expression: Expression, sorts: Map<string, VariableSort>): void {
  switch (expression.type) {
    case 'and':
    case 'or':
    case 'xor':
      checkExpression(expression.left, sorts);
      checkExpression(expression.right, sorts);
      return;
    case 'not':
      checkExpression(expression.operand, sorts);
      return;
    case 'comparison': {
      checkOperand(expression.left, sorts);
      checkOperand(expression.right, sorts);
      const left = entityOperand(expression.left);
      const right = entityOperand(expression.right);
      if (left === null && right === null) return;
      // A node or an edge is compared with another by identity only.
      if (left === null || right === null || (expression.operator !== '=' && expression.operator !== '<>')) {
        throw invalid(`A variable (${left ?? right}) can only be compared with = or <> to another variable; compare one of its properties instead, e.g. ${left ?? right}.key.`);
      }
      const leftSort = sorts.get(left)!;
      const rightSort = sorts.get(right)!;
      if (leftSort === 'path' || rightSort === 'path') throw invalid('A variable-length relationship cannot be compared.');
      if (leftSort !== rightSort) throw invalid(`"${left}" is ${a(leftSort)} and "${right}" is ${a(rightSort)}; they can never be equal.`);
      return;
    }
    case 'string-match':
    case 'in':
    case 'is-null': {
      const operands = expression.type === 'string-match' ? [expression.left, expression.right] : [expression.operand];
      for (const operand of operands) {
        checkOperand(operand, sorts);
        if (operand.type === 'variable') throw invalid(`Use a property of "${operand.name}" here (e.g. ${operand.name}.key), not the variable itself.`);
      }
      if (expression.type === 'in') expression.list.forEach(checkValue);
      return;
    }
  }
}

/** Paths are refused before two variables' sorts are compared, so only nodes and edges are named. */
const a = (sort: Exclude<VariableSort, 'path'>) => (sort === 'node' ? 'a node' : 'an edge');

function checkReturnExpression(expression: ReturnExpression, sorts: Map<string, VariableSort>, clause: string): void {
  if (expression.type === 'variable') checkVariable(expression.name, sorts, clause);
  else if (expression.type === 'property') checkProperty(expression.variable, expression.property, sorts, clause);
  else if (expression.argument !== null) checkReturnExpression(expression.argument, sorts, clause);
}

/** True when `order` names the return item `item`: by its alias, or by repeating its expression. */
export function orderNamesItem(order: OrderItem, item: ReturnItem): boolean {
  if (order.expression.type === 'variable' && item.alias === order.expression.name) return true;
  return JSON.stringify(order.expression) === JSON.stringify(item.expression);
}

function checkOrderBy(orderBy: OrderItem[], items: ReturnItem[], distinct: boolean, sorts: Map<string, VariableSort>): void {
  const aggregates = items.some((item) => isAggregate(item.expression));
  for (const order of orderBy) {
    const named = items.find((item) => order.expression.type === 'variable' && item.alias === order.expression.name) ?? items.find((item) => orderNamesItem(order, item));
    if (named) {
      if (named.expression.type === 'variable' && sorts.get(named.expression.name) === 'path') throw invalid('Rows cannot be ordered by a variable-length relationship.');
      continue;
    }
    if (aggregates || distinct || isAggregate(order.expression)) {
      throw invalid(
        `ORDER BY ${describe(order.expression)} is not a returned column. When RETURN ${aggregates || isAggregate(order.expression) ? 'counts' : 'is DISTINCT'}, rows can only be ordered by what is returned: use a column's alias or repeat its expression.`,
      );
    }
    checkReturnExpression(order.expression, sorts, 'ORDER BY');
    if (order.expression.type === 'variable' && sorts.get(order.expression.name) === 'path') throw invalid('Rows cannot be ordered by a variable-length relationship.');
  }
}

function describe(expression: ReturnExpression): string {
  if (expression.type === 'variable') return expression.name;
  if (expression.type === 'property') return `${expression.variable}.${expression.property}`;
  return `count(${expression.distinct ? 'DISTINCT ' : ''}${expression.argument ? describe(expression.argument) : '*'})`;
}
