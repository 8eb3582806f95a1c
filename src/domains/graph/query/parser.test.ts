import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../platform/errors.ts';
import type { QueryAst } from './ast.ts';
import { checkQuery, MAX_HOPS } from './check.ts';
import { MAX_NESTING, MAX_QUERY_LENGTH, nestingOf, parseQueryText } from './parser.ts';

const parse = (text: string): QueryAst => checkQuery(parseQueryText(text));

/** The 400 a text gives, or a failure when it parses. */
function refusal(text: string): ServiceError & { details: Record<string, unknown> } {
  try {
    parse(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    const refused = error as ServiceError;
    expect(refused.status).toBe(400);
    expect(refused.reason).toBe('invalid-query');
    return refused;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be refused`);
}

const node = (variable: string | null, label: string | null = null, properties: { key: string; value: unknown }[] = []) => ({ type: 'node', variable, label, properties });
const rel = (direction: 'out' | 'in' | 'either', over: Partial<{ variable: string | null; types: string[]; length: { min: number; max: number } | null; properties: unknown[] }> = {}) => ({
  type: 'relationship',
  variable: null,
  types: [],
  direction,
  length: null,
  properties: [],
  ...over,
});
const prop = (variable: string, property: string) => ({ type: 'property', variable, property });
const lit = (value: unknown) => ({ type: 'literal', value });

describe('valid queries', () => {
  it('parses the incident-to-keys example into the documented AST', () => {
    expect(parse("MATCH (i:Incident)-[:CONCERNS]->(e:EmpireEvent)-[:SIGNED_BY]->(k:Key) WHERE i.key = 'inc-7' RETURN DISTINCT k.key")).toEqual({
      type: 'query',
      match: [
        {
          type: 'path',
          start: node('i', 'Incident'),
          hops: [
            { relationship: rel('out', { types: ['CONCERNS'] }), node: node('e', 'EmpireEvent') },
            { relationship: rel('out', { types: ['SIGNED_BY'] }), node: node('k', 'Key') },
          ],
        },
      ],
      where: { type: 'comparison', operator: '=', left: prop('i', 'key'), right: lit('inc-7') },
      return: { distinct: true, star: false, items: [{ expression: prop('k', 'key'), alias: null, text: 'k.key' }] },
      orderBy: [],
      skip: null,
      limit: null,
    });
  });

  it('reads keywords in any case, comments, and a trailing semicolon', () => {
    const ast = parse('match (n:Key) // keys\n/* all of them */ return n order by n.key desc skip 2 limit 3;');
    expect(ast.match[0]!.start).toEqual(node('n', 'Key'));
    expect(ast.orderBy).toEqual([{ expression: prop('n', 'key'), descending: true }]);
    expect([ast.skip, ast.limit]).toEqual([2, 3]);
  });

  it('reads every relationship form and direction', () => {
    const ast = parse('MATCH (a)-->(b)<--(c)--(d)<-->(e)-[r]->(f)<-[:CAUSED_BY|:ABOUT|SIGNED_BY]-(g) RETURN a');
    expect(ast.match[0]!.hops.map((hop) => hop.relationship)).toEqual([
      rel('out'),
      rel('in'),
      rel('either'),
      rel('either'),
      rel('out', { variable: 'r' }),
      rel('in', { types: ['CAUSED_BY', 'ABOUT', 'SIGNED_BY'] }),
    ]);
    expect(ast.match[0]!.hops.map((hop) => hop.node.variable)).toEqual(['b', 'c', 'd', 'e', 'f', 'g']);
  });

  it('fills variable-length bounds: * is 1..MAX_HOPS, *n is exactly n, open ends default', () => {
    const lengths = (text: string) => parse(`MATCH (a)-[${text}]->(b) RETURN a`).match[0]!.hops[0]!.relationship.length;
    expect(lengths('*')).toEqual({ min: 1, max: MAX_HOPS });
    expect(lengths(':CAUSED_BY*2')).toEqual({ min: 2, max: 2 });
    expect(lengths('*1..3')).toEqual({ min: 1, max: 3 });
    expect(lengths('*..3')).toEqual({ min: 1, max: 3 });
    expect(lengths('* 2 ..')).toEqual({ min: 2, max: MAX_HOPS });
    expect(lengths('*0..1')).toEqual({ min: 0, max: 1 });
  });

  it('reads node forms, property maps and literals with escapes', () => {
    const ast = parse(`MATCH (), (:Key), (x), (y:Toolset {key: 'it\\'s', n: -1.5, big: 2e3, huge: 1e300, ok: true, no: false, none: null, u: "\\u00e9\\n\\"q\\""}) RETURN x`);
    expect(ast.match.map((path) => path.start)).toEqual([
      node(null),
      node(null, 'Key'),
      node('x'),
      node('y', 'Toolset', [
        { key: 'key', value: "it's" },
        { key: 'n', value: -1.5 },
        { key: 'big', value: 2000 },
        { key: 'huge', value: 1e300 },
        { key: 'ok', value: true },
        { key: 'no', value: false },
        { key: 'none', value: null },
        { key: 'u', value: 'é\n"q"' },
      ]),
    ]);
  });

  it('builds WHERE with Cypher precedence: NOT over AND over XOR over OR', () => {
    const ast = parse("MATCH (n) WHERE NOT n.a = 1 AND n.b <> 2 OR n.c IN ['x', 3, null] XOR n.d IS NOT NULL RETURN n");
    expect(ast.where).toEqual({
      type: 'or',
      left: {
        type: 'and',
        left: { type: 'not', operand: { type: 'comparison', operator: '=', left: prop('n', 'a'), right: lit(1) } },
        right: { type: 'comparison', operator: '<>', left: prop('n', 'b'), right: lit(2) },
      },
      right: {
        type: 'xor',
        left: { type: 'in', operand: prop('n', 'c'), list: ['x', 3, null] },
        right: { type: 'is-null', operand: prop('n', 'd'), negated: true },
      },
    });
  });

  it('reads parentheses, string predicates and all comparison operators', () => {
    const ast = parse("MATCH (n) WHERE (n.a < 1 OR n.a <= 2) AND (n.a > 3 OR n.a >= 4) AND n.key STARTS WITH 'a' AND n.key ENDS WITH 'b' AND n.key CONTAINS 'c' AND n.x IS NULL RETURN n");
    const text = JSON.stringify(ast.where);
    for (const operator of ['<', '<=', '>', '>=', 'STARTS WITH', 'ENDS WITH', 'CONTAINS']) expect(text).toContain(`"operator":"${operator}"`);
    expect(ast.where!.type).toBe('and');
  });

  it('reads RETURN items, aliases, count forms and RETURN *', () => {
    const ast = parse('MATCH (a)-[r]->(b) RETURN a AS first, b.key, count(*), count(r) AS edges, count(DISTINCT b.kind) AS kinds ORDER BY edges');
    expect(ast.return.items).toEqual([
      { expression: { type: 'variable', name: 'a' }, alias: 'first', text: 'a' },
      { expression: prop('b', 'key'), alias: null, text: 'b.key' },
      { expression: { type: 'count', distinct: false, argument: null }, alias: null, text: 'count(*)' },
      { expression: { type: 'count', distinct: false, argument: { type: 'variable', name: 'r' } }, alias: 'edges', text: 'count(r)' },
      { expression: { type: 'count', distinct: true, argument: prop('b', 'kind') }, alias: 'kinds', text: 'count(DISTINCT b.kind)' },
    ]);
    expect(parse('MATCH (a)-->(b) RETURN *').return).toEqual({ distinct: false, star: true, items: [] });
  });

  it('reads backquoted names and keywords inside longer names', () => {
    const ast = parse('MATCH (`my node`:Key) WHERE `my node`.`first-seen` = 1 RETURN `my node`.order_id AS returned, count(*) AS `count`');
    expect(ast.match[0]!.start.variable).toBe('my node');
    expect(ast.where).toMatchObject({ left: prop('my node', 'first-seen') });
    expect(ast.return.items[0]!.alias).toBe('returned');
  });
});

describe('syntax errors: line, column and what was expected', () => {
  it('points at the token after an unclosed node', () => {
    const error = refusal('MATCH (n RETURN n');
    expect(error.details).toEqual({ line: 1, column: 10, expected: ['")"', '":"', '"{"'], found: 'RETURN' });
    expect(error.human).toBe('line 1, column 10: expected ")", ":" or "{" but "RETURN" found.');
  });

  it('counts lines and columns over several lines', () => {
    const error = refusal('MATCH (n)\nWHERE n.x =\n  RETURN n');
    expect(error.details).toMatchObject({ line: 3, column: 3, expected: ['literal', 'variable'], found: 'RETURN' });
  });

  it('says so when the text ends early', () => {
    expect(refusal('MATCH (n:Key)').details).toMatchObject({ line: 1, column: 14, found: null, expected: expect.arrayContaining(['RETURN', 'WHERE']) });
    expect(refusal('').details).toMatchObject({ line: 1, column: 1, expected: ['MATCH'], found: null });
  });

  it('refuses a comparison without an operator and a bare property as a predicate', () => {
    expect(refusal('MATCH (n) WHERE n.active RETURN n').details).toMatchObject({ line: 1, column: 26, expected: expect.arrayContaining(['comparison operator', 'IN', 'IS', 'STARTS WITH']) });
  });

  it.each([
    ['CREATE (n:Key {key: "x"})', 1, 1],
    ['MATCH (n) DELETE n', 1, 11],
    ['MATCH (n) DETACH DELETE n', 1, 11],
    ['MATCH (n) SET n.key = "x" RETURN n', 1, 11],
    ['MATCH (n) REMOVE n.key RETURN n', 1, 11],
    ['MERGE (n:Key {key: "x"}) RETURN n', 1, 1],
    ['CALL db.labels()', 1, 1],
    ['LOAD CSV FROM "file:///etc/passwd" AS line RETURN line', 1, 1],
    ['MATCH (n) FOREACH (x IN [1] | SET n.a = x) RETURN n', 1, 11],
    ['UNWIND [1, 2] AS x RETURN x', 1, 1],
    ['MATCH (n) WITH n RETURN n', 1, 11],
    ['MATCH (n) RETURN n;\nDROP TABLE graph_nodes', 2, 1],
  ])('refuses the writing query %j at %i:%i', (text, line, column) => {
    const error = refusal(text);
    expect(error.details).toMatchObject({ line, column });
    if (!text.startsWith('MATCH (n) RETURN n;')) expect(error.human).toMatch(/read-only/);
  });

  it('refuses text longer than the limit before parsing it', () => {
    const long = `MATCH (n) WHERE n.key = '${'x'.repeat(MAX_QUERY_LENGTH)}' RETURN n`;
    expect(refusal(long).human).toMatch(new RegExp(`at most ${MAX_QUERY_LENGTH}`));
  });
});

describe('semantic errors', () => {
  it.each([
    ['MATCH (n:Incidnet) RETURN n', /Unknown label "Incidnet".*Incident/],
    ['MATCH (n:incident) RETURN n', /case-sensitive: did you mean Incident/],
    ['MATCH (a)-[:SIGNS]->(b) RETURN a', /Unknown relationship type "SIGNS".*SIGNED_BY/],
    ['MATCH (a)-[:CAUSED_BY*1..9]->(b) RETURN a', new RegExp(`at most ${MAX_HOPS} edges`)],
    ['MATCH (a)-[*3..2]->(b) RETURN a', /greater than the most/],
    ['MATCH (a) WHERE b.key = 1 RETURN a', /Variable "b" in WHERE is not defined.*a/],
    ['MATCH (a) RETURN b', /Variable "b" in RETURN is not defined/],
    ['MATCH (a) RETURN a ORDER BY b.key', /Variable "b" in ORDER BY is not defined/],
    ['MATCH (a)-[a]->(b) RETURN a', /names a node and cannot also name a relationship/],
    ['MATCH (a)-[r]->(b)-[r]->(c) RETURN a', /used twice/],
    ['MATCH (a)-[r]->(b), (r) RETURN a', /names a relationship and cannot also name a node/],
    ['MATCH (a)-[r*1..2]->(b) WHERE r.weight = 1 RETURN a', /variable-length relationship/],
    ['MATCH (a) WHERE a = 1 RETURN a', /can only be compared with = or <> to another variable/],
    ['MATCH (a)-[r]->(b) WHERE a = r RETURN a', /can never be equal/],
    ['MATCH (a) WHERE a IS NULL RETURN a', /not the variable itself/],
    ['MATCH (a) RETURN a.key, a.key', /Two RETURN columns are named "a.key"/],
    ['MATCH (a) RETURN a.key AS x, a.kind AS x', /Two RETURN columns are named "x"/],
    ['MATCH (a) RETURN a.kind, count(*) ORDER BY a.key', /not a returned column.*counts/],
    ['MATCH (a) RETURN DISTINCT a.kind ORDER BY a.key', /not a returned column.*DISTINCT/],
    ['MATCH (a) RETURN a.kind ORDER BY count(*)', /not a returned column/],
    ['MATCH () RETURN *', /RETURN \* needs at least one named variable/],
    ["MATCH (a) WHERE a.key = 'a\\u0000b' RETURN a", /U\+0000/],
    ["MATCH (a {key: 'x\\ud800'}) RETURN a", /unpaired surrogate/],
    ['MATCH (a) WHERE a.n = 123456789012345678901 RETURN a', /^line 1, column 23: the integer 123456789012345678901 is beyond ±2\^53/],
    ['MATCH (a) WHERE a.n = 1e999 RETURN a', /^line 1, column 23: the number 1e999 is too large/],
    ['MATCH (a) RETURN a LIMIT 99999999999999999999', /^line 1, column 26: the integer .* is beyond/],
    [`MATCH (a)${'-->()'.repeat(13)} RETURN a`, /13 relationships; at most 12/],
  ])('%s', (text, human) => {
    expect(refusal(text).human).toMatch(human);
  });

  it('accepts ordering by a returned column in aggregating and DISTINCT queries', () => {
    expect(() => parse('MATCH (a) RETURN a.kind AS kind, count(*) AS n ORDER BY n DESC, kind')).not.toThrow();
    expect(() => parse('MATCH (a) RETURN a.kind, count(*) ORDER BY count(*), a.kind')).not.toThrow();
    expect(() => parse('MATCH (a) RETURN DISTINCT a.kind ORDER BY a.kind')).not.toThrow();
    expect(() => parse('MATCH (a) RETURN a.kind ORDER BY a.key')).not.toThrow();
  });
});

describe('nesting', () => {
  it('refuses 1,900 parentheses and 950 NOTs with a 400, not a stack overflow', () => {
    expect(refusal(`MATCH (n) WHERE ${'('.repeat(1900)}n.key = 'a'${')'.repeat(1900)} RETURN n`).human).toBe(`The query nests brackets 1900 deep; at most ${MAX_NESTING} levels are accepted.`);
    expect(refusal(`MATCH (n) WHERE ${'NOT '.repeat(950)}n.key = 'a' RETURN n`).human).toBe(`The query has 950 NOT operators; at most ${MAX_NESTING} are accepted.`);
  });

  it('accepts nesting up to the limit', () => {
    const depth = MAX_NESTING;
    expect(parse(`MATCH (n) WHERE ${'('.repeat(depth)}n.key = 'a'${')'.repeat(depth)} RETURN n`).where).not.toBeNull();
    expect(parse(`MATCH (n) WHERE ${'NOT '.repeat(MAX_NESTING)}n.key = 'a' RETURN n`).where?.type).toBe('not');
  });

  it('counts brackets and NOT words outside strings, backquoted names and comments only', () => {
    expect(nestingOf("MATCH (n {k: '((( NOT'}) WHERE n.`x(` = \"[[\\\"NOT\" // ((((\n /* NOT ( */ RETURN n")).toEqual({ brackets: 2, nots: 0 });
    expect(nestingOf('MATCH (a)-[r*1..2]->(b) WHERE NOT (a.x IN [1, 2]) AND NOTE = 1 RETURN a')).toEqual({ brackets: 2, nots: 1 });
  });
});
