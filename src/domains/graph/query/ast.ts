/**
 * The parsed form of a graph query (docs/graph/query.md, "The AST"). The parser
 * (cypher.peggy) builds exactly these shapes: plain JSON, no positions, no classes, so the
 * endpoint can return it as `ast` and a saved query can be compared by value. Changing a shape
 * changes a public response: add fields, do not rename them.
 */

export type LiteralValue = string | number | boolean | null;

export interface QueryAst {
  type: 'query';
  /** The comma-separated path patterns of the one MATCH clause. */
  match: PathPattern[];
  where: Expression | null;
  return: ReturnClause;
  orderBy: OrderItem[];
  skip: number | null;
  limit: number | null;
}

/** `(a)-[r]->(b)<-[s]-(c)`: a start node, then each hop's relationship and the node it reaches. */
export interface PathPattern {
  type: 'path';
  start: NodePattern;
  hops: Hop[];
}

export interface Hop {
  relationship: RelationshipPattern;
  node: NodePattern;
}

export interface PropertyEntry {
  key: string;
  value: LiteralValue;
}

export interface NodePattern {
  type: 'node';
  variable: string | null;
  /** The node kind (`:Incident`), or null for any visible kind. */
  label: string | null;
  /** `{key: 'x'}`: each entry is an equality the node must satisfy. */
  properties: PropertyEntry[];
}

/** `out`: `-[]->`; `in`: `<-[]-`; `either`: `-[]-` (or `<-[]->`). */
export type Direction = 'out' | 'in' | 'either';

export interface RelationshipPattern {
  type: 'relationship';
  variable: string | null;
  /** Edge kinds (`:A|B`); empty: any kind. */
  types: string[];
  direction: Direction;
  /** null: exactly one edge; otherwise a variable-length path of `min..max` edges. */
  length: { min: number; max: number } | null;
  properties: PropertyEntry[];
}

export type ComparisonOperator = '=' | '<>' | '<' | '<=' | '>' | '>=';
export type StringOperator = 'STARTS WITH' | 'ENDS WITH' | 'CONTAINS';

export interface VariableRef {
  type: 'variable';
  name: string;
}

export interface PropertyRef {
  type: 'property';
  variable: string;
  property: string;
}

export interface Literal {
  type: 'literal';
  value: LiteralValue;
}

export type Operand = VariableRef | PropertyRef | Literal;

export type Expression =
  | { type: 'comparison'; operator: ComparisonOperator; left: Operand; right: Operand }
  | { type: 'string-match'; operator: StringOperator; left: Operand; right: Operand }
  | { type: 'in'; operand: Operand; list: LiteralValue[] }
  | { type: 'is-null'; operand: Operand; negated: boolean }
  | { type: 'and' | 'or' | 'xor'; left: Expression; right: Expression }
  | { type: 'not'; operand: Expression };

/** `count(*)` has argument null. */
export interface CountCall {
  type: 'count';
  distinct: boolean;
  argument: VariableRef | PropertyRef | null;
}

export type ReturnExpression = VariableRef | PropertyRef | CountCall;

export interface ReturnItem {
  expression: ReturnExpression;
  alias: string | null;
  /** The item as written (whitespace kept), the row key when there is no alias. */
  text: string;
}

export interface ReturnClause {
  distinct: boolean;
  /** `RETURN *`: every named variable, in order of first appearance. */
  star: boolean;
  items: ReturnItem[];
}

export interface OrderItem {
  /** A bare variable may name a return alias (aliases win, as in Cypher). */
  expression: ReturnExpression;
  descending: boolean;
}
