import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../platform/errors.ts';
import { EDGE_KIND_NAMES, NODE_KINDS } from '../kinds.ts';
import type { OrderItem, QueryAst, ReturnItem } from './ast.ts';
import { checkQuery, isAggregate, MAX_HOPS, MAX_RELATIONSHIPS, orderNamesItem, returnItemsOf, variableSorts } from './check.ts';
import { parseQueryText } from './parser.ts';

/**
 * The read check of graph queries (check.ts), rule by rule: what it accepts, and for what it
 * refuses, the exact `invalid-query` message (a message is the product here: it says what to
 * change). Queries are parsed by the real parser; the few shapes the grammar cannot produce are
 * built as ASTs, since the check also guards ASTs built some other way.
 */

const parse = (text: string): QueryAst => parseQueryText(text);
const check = (text: string): QueryAst => checkQuery(parse(text));

function refusal(query: string | QueryAst): string {
  try {
    checkQuery(typeof query === 'string' ? parse(query) : query);
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).status).toBe(400);
    expect((error as ServiceError).reason).toBe('invalid-query');
    return (error as ServiceError).message;
  }
  throw new Error(`expected ${typeof query === 'string' ? query : 'the AST'} to be refused`);
}

const NODES = NODE_KINDS.join(', ');
const EDGES = EDGE_KIND_NAMES.join(', ');
const LONE_HIGH = '\uD800';
const LONE_LOW = '\uDC00';

describe('labels and relationship types', () => {
  it('accepts every known label and type, and none other, naming the known ones', () => {
    for (const kind of NODE_KINDS) expect(() => check(`MATCH (n:${kind}) RETURN n`)).not.toThrow();
    for (const type of EDGE_KIND_NAMES) expect(() => check(`MATCH (a)-[:${type}]->(b) RETURN a`)).not.toThrow();
    expect(refusal('MATCH (n:Nope) RETURN n')).toBe(`Unknown label "Nope". The known labels are: ${NODES}.`);
    expect(refusal('MATCH (a)-[:NOPE]->(b) RETURN a')).toBe(`Unknown relationship type "NOPE". The known relationship types are: ${EDGES}.`);
  });

  it('points at the name that differs only in case', () => {
    expect(refusal('MATCH (n:incident) RETURN n')).toBe(`Unknown label "incident" (names are case-sensitive: did you mean Incident?). The known labels are: ${NODES}.`);
    expect(refusal('MATCH (a)-[:seen_on]->(b) RETURN a')).toBe(`Unknown relationship type "seen_on" (names are case-sensitive: did you mean SEEN_ON?). The known relationship types are: ${EDGES}.`);
  });

  it('checks every node and every relationship of every pattern, not just the first', () => {
    expect(refusal('MATCH (a:Tenant)-[:SEEN_ON]->(b:Tenant)-[:SEEN_ON]->(c:Bad) RETURN a')).toContain('Unknown label "Bad"');
    expect(refusal('MATCH (a)-[:SEEN_ON]->(b)-[:BAD]->(c) RETURN a')).toContain('Unknown relationship type "BAD"');
    expect(refusal('MATCH (a:Tenant), (b:Bad) RETURN a')).toContain('Unknown label "Bad"');
    expect(refusal('MATCH (a)-[:SEEN_ON|BAD]->(b) RETURN a')).toContain('Unknown relationship type "BAD"');
  });
});

describe('values and names the graph cannot hold', () => {
  const valueMessage = 'A string in the query contains U+0000 or an unpaired surrogate; no value in the graph can contain one.';

  it('refuses U+0000 and unpaired surrogates in node and relationship property maps, in WHERE and in IN lists', () => {
    for (const bad of ['a\u0000b', `x${LONE_HIGH}`, `${LONE_LOW}x`]) {
      expect(refusal(`MATCH (n {key: '${bad}'}) RETURN n`)).toBe(valueMessage);
      expect(refusal(`MATCH (a)-[r:SEEN_ON {key: '${bad}'}]->(b) RETURN a`)).toBe(valueMessage);
      expect(refusal(`MATCH (n) WHERE n.key = '${bad}' RETURN n`)).toBe(valueMessage);
      expect(refusal(`MATCH (n) WHERE n.key IN ['ok', '${bad}'] RETURN n`)).toBe(valueMessage);
    }
  });

  it('accepts a paired surrogate (an emoji) and ordinary text', () => {
    expect(() => check("MATCH (n {key: 'a\uD83D\uDE00b'}) WHERE n.key IN ['x', 'y'] RETURN n")).not.toThrow();
  });

  it('refuses a property name the graph cannot hold, in maps, in WHERE and in RETURN', () => {
    const ast = parse("MATCH (n {key: 'a'})-[r:SEEN_ON {key: 'b'}]->(m) WHERE n.key = 'c' RETURN n.key");
    const nameMessage = 'A property name contains U+0000 or an unpaired surrogate, which the graph cannot hold.';
    const inNode = structuredClone(ast);
    inNode.match[0]!.start.properties[0]!.key = `k${LONE_HIGH}`;
    expect(refusal(inNode)).toBe(nameMessage);
    const inRelationship = structuredClone(ast);
    inRelationship.match[0]!.hops[0]!.relationship.properties[0]!.key = 'k\u0000';
    expect(refusal(inRelationship)).toBe(nameMessage);
    const inWhere = structuredClone(ast);
    (inWhere.where as { left: { property: string } }).left.property = `${LONE_LOW}k`;
    expect(refusal(inWhere)).toBe(nameMessage);
    const inReturn = structuredClone(ast);
    (inReturn.return.items[0]!.expression as { property: string }).property = 'k\u0000';
    expect(refusal(inReturn)).toBe(nameMessage);
  });

  it('refuses a number that is not finite (an AST the grammar cannot produce)', () => {
    const ast = parse('MATCH (n {key: 1}) RETURN n');
    ast.match[0]!.start.properties[0]!.value = Number.POSITIVE_INFINITY;
    expect(refusal(ast)).toBe('A number in the query is too large.');
    ast.match[0]!.start.properties[0]!.value = Number.NaN;
    expect(refusal(ast)).toBe('A number in the query is too large.');
    ast.match[0]!.start.properties[0]!.value = 1e308;
    expect(() => checkQuery(ast)).not.toThrow();
  });
});

describe('variable-length relationships', () => {
  const bounds = (text: string) => check(`MATCH (a)-[${text}]->(b) RETURN a`).match[0]!.hops[0]!.relationship.length;

  it('fills in the bounds: a bare * is 1..MAX_HOPS, an open end is MAX_HOPS, an open start is 1', () => {
    expect(MAX_HOPS).toBe(5);
    expect(bounds('*')).toEqual({ min: 1, max: 5 });
    expect(bounds('*..3')).toEqual({ min: 1, max: 3 });
    expect(bounds('*2..')).toEqual({ min: 2, max: 5 });
    expect(bounds('*2..4')).toEqual({ min: 2, max: 4 });
    expect(bounds('*5..5')).toEqual({ min: 5, max: 5 });
    expect(bounds(':SEEN_ON')).toBeNull();
  });

  it('refuses more than MAX_HOPS edges, and a least greater than a most', () => {
    expect(refusal('MATCH (a)-[*1..6]->(b) RETURN a')).toBe('A variable-length relationship may walk at most 5 edges; *1..6 asks for 6.');
    expect(refusal('MATCH (a)-[*..9]->(b) RETURN a')).toBe('A variable-length relationship may walk at most 5 edges; *..9 asks for 9.');
    expect(refusal('MATCH (a)-[*4..2]->(b) RETURN a')).toBe('In *4..2 the least number of edges is greater than the most.');
    expect(refusal('MATCH (a)-[*6..]->(b) RETURN a')).toBe('In *6..5 the least number of edges is greater than the most.');
  });

  it('returns a checked copy and leaves the parsed query as it was', () => {
    const parsed = parse('MATCH (a)-[*]->(b) RETURN a');
    const before = structuredClone(parsed);
    const checked = checkQuery(parsed);
    expect(parsed).toEqual(before);
    expect(checked).not.toBe(parsed);
    expect(checked.match[0]!.hops[0]!.relationship.length).toEqual({ min: 1, max: 5 });
  });
});

describe('variables', () => {
  it('knows what each variable stands for, in order of first appearance', () => {
    expect([...variableSorts(parse('MATCH (a)-[r:SEEN_ON]->(b)-[p*1..2]->(c), (a)-[]->(d) RETURN a'))]).toEqual([
      ['a', 'node'],
      ['r', 'edge'],
      ['b', 'node'],
      ['p', 'path'],
      ['c', 'node'],
      ['d', 'node'],
    ]);
  });

  it('refuses a name used for a node and a relationship, either way round, and a relationship named twice', () => {
    expect(refusal('MATCH (n)-[n]->(m) RETURN m')).toBe('"n" names a node and cannot also name a relationship.');
    expect(refusal('MATCH (a)-[r]->(b), (r) RETURN a')).toBe('"r" names a relationship and cannot also name a node.');
    expect(refusal('MATCH (a)-[r]->(b)-[r]->(c) RETURN a')).toBe(
      'The relationship variable "r" is used twice; each relationship of a MATCH binds a different edge, so give each its own name.',
    );
    expect(refusal('MATCH (a)-[r]->(b), (c)-[r]->(d) RETURN a')).toContain('The relationship variable "r" is used twice');
  });

  it('accepts a node named again, in the same pattern or another', () => {
    expect(() => check('MATCH (a)-[]->(b)-[]->(a), (a)-[]->(c) RETURN a, b, c')).not.toThrow();
  });

  it('accepts MAX_RELATIONSHIPS relationships across patterns and refuses one more', () => {
    expect(MAX_RELATIONSHIPS).toBe(12);
    const chain = (n: number) => `(x0)${Array.from({ length: n }, (_, i) => `-[]->(x${i + 1})`).join('')}`;
    expect(() => check(`MATCH ${chain(12)} RETURN x0`)).not.toThrow();
    expect(refusal(`MATCH ${chain(13)} RETURN x0`)).toBe('The pattern has 13 relationships; at most 12 are accepted.');
    expect(refusal(`MATCH ${chain(7)}, (y0)-[]->(y1)-[]->(y2)-[]->(y3)-[]->(y4)-[]->(y5)-[]->(y6) RETURN x0`)).toBe('The pattern has 13 relationships; at most 12 are accepted.');
  });

  it('refuses a variable WHERE, RETURN or ORDER BY uses that MATCH does not define, listing the ones it does', () => {
    expect(refusal('MATCH (n)-[r]->(m) WHERE x.key = 1 RETURN n')).toBe('Variable "x" in WHERE is not defined in MATCH; the variables are: n, r, m.');
    expect(refusal('MATCH (n) WHERE n.key = 1 AND x IS NULL RETURN n')).toBe('Variable "x" in WHERE is not defined in MATCH; the variables are: n.');
    expect(refusal('MATCH () WHERE x.key = 1 RETURN count(*)')).toBe('Variable "x" in WHERE is not defined in MATCH.');
    expect(refusal('MATCH (n) RETURN x')).toBe('Variable "x" in RETURN is not defined in MATCH; the variables are: n.');
    expect(refusal('MATCH (n) RETURN x.key')).toBe('Variable "x" in RETURN is not defined in MATCH; the variables are: n.');
    expect(refusal('MATCH (n) RETURN count(x.key)')).toBe('Variable "x" in RETURN is not defined in MATCH; the variables are: n.');
    expect(refusal('MATCH (n) RETURN n ORDER BY x.key')).toBe('Variable "x" in ORDER BY is not defined in MATCH; the variables are: n.');
  });

  it('refuses reading a property of a variable-length relationship, wherever it is read', () => {
    const message = '"p" is a variable-length relationship (a list of edges); p.key cannot be read. Put the condition in the relationship\'s property map instead.';
    expect(refusal("MATCH (a)-[p*1..2]->(b) WHERE p.key = 'x' RETURN a")).toBe(message);
    expect(refusal('MATCH (a)-[p*1..2]->(b) RETURN p.key')).toBe(message);
    expect(refusal('MATCH (a)-[p*1..2]->(b) RETURN a ORDER BY p.key')).toBe(message);
    expect(() => check("MATCH (a)-[r]->(b) WHERE r.key = 'x' RETURN r.key ORDER BY r.key")).not.toThrow();
  });
});

describe('WHERE', () => {
  it('compares variables by identity only: = and <> between two of the same kind', () => {
    expect(() => check('MATCH (a)-[]->(b) WHERE a = b OR a <> b RETURN a')).not.toThrow();
    expect(() => check('MATCH (a)-[r]->(b)-[s]->(c) WHERE r <> s RETURN a')).not.toThrow();
    const compareMessage = (name: string) => `A variable (${name}) can only be compared with = or <> to another variable; compare one of its properties instead, e.g. ${name}.key.`;
    expect(refusal('MATCH (a)-[]->(b) WHERE a < b RETURN a')).toBe(compareMessage('a'));
    expect(refusal("MATCH (a) WHERE a = 'x' RETURN a")).toBe(compareMessage('a'));
    expect(refusal("MATCH (a) WHERE 'x' = a RETURN a")).toBe(compareMessage('a'));
    expect(refusal('MATCH (a)-[]->(b) WHERE a.key = b RETURN a')).toBe(compareMessage('b'));
    expect(refusal('MATCH (a)-[r]->(b) WHERE a = r RETURN a')).toBe('"a" is a node and "r" is an edge; they can never be equal.');
    expect(refusal('MATCH (a)-[r]->(b) WHERE r <> b RETURN a')).toBe('"r" is an edge and "b" is a node; they can never be equal.');
    expect(refusal('MATCH (a)-[p*]->(b) WHERE p = a RETURN a')).toBe('A variable-length relationship cannot be compared.');
    expect(refusal('MATCH (a)-[p*]->(b)-[q*]->(c) WHERE a = a AND p = q RETURN a')).toBe('A variable-length relationship cannot be compared.');
    expect(refusal('MATCH (a)-[p*]->(b) WHERE a = p RETURN a')).toBe('A variable-length relationship cannot be compared.');
  });

  it('accepts comparing properties and values in every direction', () => {
    expect(() => check("MATCH (a)-[]->(b) WHERE a.key = b.key AND 'x' < a.key AND a.key >= 3 RETURN a")).not.toThrow();
  });

  it('wants a property, not a variable, in STARTS WITH, CONTAINS, IN and IS NULL', () => {
    const message = 'Use a property of "a" here (e.g. a.key), not the variable itself.';
    expect(refusal("MATCH (a) WHERE a STARTS WITH 'x' RETURN a")).toBe(message);
    expect(refusal("MATCH (a) WHERE a.key CONTAINS a RETURN a")).toBe(message);
    expect(refusal('MATCH (a) WHERE a IN [1, 2] RETURN a')).toBe(message);
    expect(refusal('MATCH (a) WHERE a IS NOT NULL RETURN a')).toBe(message);
    expect(() => check("MATCH (a) WHERE a.key STARTS WITH 'x' AND a.key IN [1] AND a.name IS NULL RETURN a")).not.toThrow();
  });

  it('checks both sides of AND, OR and XOR, and under NOT', () => {
    for (const operator of ['AND', 'OR', 'XOR']) {
      expect(refusal(`MATCH (a) WHERE x.key = 1 ${operator} a.key = 1 RETURN a`)).toContain('Variable "x" in WHERE');
      expect(refusal(`MATCH (a) WHERE a.key = 1 ${operator} x.key = 1 RETURN a`)).toContain('Variable "x" in WHERE');
    }
    expect(refusal('MATCH (a) WHERE NOT x.key = 1 RETURN a')).toContain('Variable "x" in WHERE');
    expect(refusal('MATCH (a) WHERE NOT (a.key = 1 AND NOT x.key = 2) RETURN a')).toContain('Variable "x" in WHERE');
  });
});

describe('RETURN', () => {
  it('refuses two columns of one name, by alias or by text', () => {
    expect(refusal('MATCH (a) RETURN a.key, a.key')).toBe('Two RETURN columns are named "a.key"; give one of them another alias with AS.');
    expect(refusal('MATCH (a)-[]->(b) RETURN a.key AS k, b.key AS k')).toBe('Two RETURN columns are named "k"; give one of them another alias with AS.');
    expect(refusal('MATCH (a)-[]->(b) RETURN a.key AS b, b')).toBe('Two RETURN columns are named "b"; give one of them another alias with AS.');
    expect(() => check('MATCH (a) RETURN a.key, a.key AS again')).not.toThrow();
  });

  it('expands RETURN * to every named variable, and refuses it when there is none', () => {
    const ast = parse('MATCH (a)-[r]->(b) RETURN *');
    expect(returnItemsOf(ast, variableSorts(ast))).toEqual([
      { expression: { type: 'variable', name: 'a' }, alias: null, text: 'a' },
      { expression: { type: 'variable', name: 'r' }, alias: null, text: 'r' },
      { expression: { type: 'variable', name: 'b' }, alias: null, text: 'b' },
    ]);
    const plain = parse('MATCH (a) RETURN a.key AS k');
    expect(returnItemsOf(plain, variableSorts(plain))).toBe(plain.return.items);
    expect(refusal('MATCH () RETURN *')).toBe('RETURN * needs at least one named variable in MATCH, e.g. MATCH (n:Incident) RETURN *.');
    expect(() => check('MATCH (a) RETURN * ORDER BY a.key')).not.toThrow();
  });

  it('calls only count an aggregate', () => {
    expect(isAggregate({ type: 'count', argument: null, distinct: false })).toBe(true);
    expect(isAggregate({ type: 'variable', name: 'a' })).toBe(false);
    expect(isAggregate({ type: 'property', variable: 'a', property: 'key' })).toBe(false);
  });
});

describe('ORDER BY', () => {
  const order = (text: string): OrderItem => parse(`MATCH (a) RETURN a ORDER BY ${text}`).orderBy[0]!;
  const item = (text: string): ReturnItem => parse(`MATCH (a) RETURN ${text}`).return.items[0]!;

  it('names a returned column by its alias or by repeating its expression', () => {
    expect(orderNamesItem(order('k'), item('a.key AS k'))).toBe(true);
    expect(orderNamesItem(order('a.key'), item('a.key AS k'))).toBe(true);
    expect(orderNamesItem(order('a.key'), item('a.key'))).toBe(true);
    expect(orderNamesItem(order('a.name'), item('a.key'))).toBe(false);
    expect(orderNamesItem(order('k'), item('a.key AS j'))).toBe(false);
    expect(orderNamesItem(order('a'), item('a'))).toBe(true);
    expect(orderNamesItem(order('count(*)'), item('count(*) AS n'))).toBe(true);
    expect(orderNamesItem(order('count(DISTINCT a.key)'), item('count(a.key)'))).toBe(false);
  });

  it('takes a name that is both an alias and a returned variable as the alias, as Cypher does', () => {
    // `r` names the second column (a node), not the first (the variable-length relationship).
    expect(() => check('MATCH (a)-[r*1..2]->(b) RETURN r AS x, a AS r ORDER BY r')).not.toThrow();
    expect(refusal('MATCH (a)-[r*1..2]->(b) RETURN a AS x, r AS y ORDER BY y')).toBe('Rows cannot be ordered by a variable-length relationship.');
  });

  it('when RETURN counts or is DISTINCT, orders only by what is returned', () => {
    expect(() => check('MATCH (a) RETURN a.key AS k, count(*) AS n ORDER BY n DESC, k, a.key')).not.toThrow();
    expect(() => check('MATCH (a) RETURN DISTINCT a.key ORDER BY a.key')).not.toThrow();
    expect(refusal('MATCH (a) RETURN a.key, count(*) ORDER BY a.name')).toBe(
      'ORDER BY a.name is not a returned column. When RETURN counts, rows can only be ordered by what is returned: use a column\'s alias or repeat its expression.',
    );
    expect(refusal('MATCH (a) RETURN DISTINCT a.key ORDER BY a.name')).toBe(
      'ORDER BY a.name is not a returned column. When RETURN is DISTINCT, rows can only be ordered by what is returned: use a column\'s alias or repeat its expression.',
    );
    expect(refusal('MATCH (a) RETURN DISTINCT a.key ORDER BY a')).toContain('ORDER BY a is not a returned column. When RETURN is DISTINCT');
    expect(refusal('MATCH (a) RETURN a.key ORDER BY count(*)')).toContain('ORDER BY count(*) is not a returned column. When RETURN counts');
    expect(refusal('MATCH (a) RETURN DISTINCT a.key ORDER BY count(DISTINCT a.name)')).toContain('ORDER BY count(DISTINCT a.name) is not a returned column. When RETURN counts');
    expect(refusal('MATCH (a) RETURN a.key, count(*) ORDER BY count(a.name)')).toContain('ORDER BY count(a.name) is not a returned column. When RETURN counts');
  });

  it('otherwise orders by anything defined, but never by a variable-length relationship', () => {
    expect(() => check('MATCH (a)-[]->(b) RETURN a ORDER BY b.key DESC, b')).not.toThrow();
    const message = 'Rows cannot be ordered by a variable-length relationship.';
    expect(refusal('MATCH (a)-[p*1..2]->(b) RETURN a ORDER BY p')).toBe(message);
    expect(refusal('MATCH (a)-[p*1..2]->(b) RETURN p ORDER BY p')).toBe(message);
    expect(refusal('MATCH (a)-[p*1..2]->(b) RETURN p AS walk ORDER BY walk')).toBe(message);
    expect(refusal('MATCH (a)-[p*1..2]->(b) RETURN DISTINCT p AS walk ORDER BY walk')).toBe(message);
  });

  it('reads a name that is both an alias and a variable as the alias', () => {
    // `p` is the path and the alias of a node: ORDER BY p orders by the node.
    expect(() => check('MATCH (a)-[p*1..2]->(b) RETURN a AS p ORDER BY p')).not.toThrow();
    // `b` is a node and the alias of a.key; with a count, only a returned column may order.
    expect(() => check('MATCH (a)-[p*1..2]->(b) RETURN a.key AS b, count(*) AS n ORDER BY b')).not.toThrow();
  });
});

describe('SKIP and LIMIT', () => {
  it('accepts safe integers and refuses larger ones (an AST the grammar cannot produce)', () => {
    expect(check('MATCH (a) RETURN a SKIP 5 LIMIT 9007199254740991')).toMatchObject({ skip: 5, limit: 9_007_199_254_740_991 });
    const ast = parse('MATCH (a) RETURN a SKIP 1 LIMIT 1');
    expect(refusal({ ...ast, limit: 2 ** 60 })).toBe(`LIMIT ${2 ** 60} is too large.`);
    expect(refusal({ ...ast, skip: 2 ** 60 })).toBe(`SKIP ${2 ** 60} is too large.`);
    expect(refusal({ ...ast, skip: 1.5 })).toBe('SKIP 1.5 is too large.');
    expect(checkQuery({ ...ast, skip: null, limit: null })).toMatchObject({ skip: null, limit: null });
  });
});
