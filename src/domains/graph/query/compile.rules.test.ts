import { PgDialect } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { FULL_VISIBILITY, type Visibility } from '../kinds.ts';
import { checkQuery } from './check.ts';
import {
  ANCHORED_PLAN_SETTINGS,
  CUT_SETTINGS,
  MATCH_ROW_CAP,
  PLAN_SETTINGS,
  TRUNCATION_CAUSES,
  WALK_ROW_CAP,
  type CompileOptions,
  compileQuery,
} from './compile.ts';
import { parseQueryText } from './parser.ts';

// The compiler's output pinned as text (docs/graph/query.md, "Semantics"): each query below is
// one branch of compile.ts, and its whole statement and parameters are compared, so a change to
// any keyword, alias, cast or operator the compiler writes shows as a difference here. The
// statements' behaviour over a database is tested in execute.test.ts and fuzz.test.ts.

const dialect = new PgDialect();
const SMALL: Visibility = { kinds: ['Key', 'Toolset'], toolsets: ['t1'] };

function compiled(text: string, visibility: Visibility = FULL_VISIBILITY, extra: Partial<CompileOptions> = {}) {
  const result = compileQuery(checkQuery(parseQueryText(text)), { visibility, rowLimit: 50, ...extra });
  const { sql, params } = dialect.sqlToQuery(result.statement);
  return { sql, params, columns: result.columns, tracksMatch: result.tracksMatch, anchored: result.anchored };
}

/** The WHERE of the inner SELECT (the match's conditions), for queries whose pattern is one node. */
const where = (text: string, visibility: Visibility = FULL_VISIBILITY) => {
  const { sql, params } = compiled(text, visibility);
  return { where: /\nWHERE (.*)\nLIMIT/s.exec(sql)![1], params };
};

describe('constants', () => {
  it('are the documented caps and settings', () => {
    expect(MATCH_ROW_CAP).toBe(100_000);
    expect(WALK_ROW_CAP).toBe(10_000);
    expect(TRUNCATION_CAUSES).toEqual(['match-rows', 'walk-rows']);
    expect(CUT_SETTINGS).toEqual({ 'walk-rows': 'observatory.graph_walk_cut', 'match-rows': 'observatory.graph_match_cut' });
    expect(ANCHORED_PLAN_SETTINGS).toEqual({ join_collapse_limit: '1', from_collapse_limit: '1' });
    expect(PLAN_SETTINGS).toEqual({ enable_mergejoin: 'off', enable_hashjoin: 'off' });
  });
});

describe('whole statements', () => {
  it.each([
    ['one node', 'MATCH (n) RETURN n', FULL_VISIBILITY],
    ['a caller bound to toolsets', 'MATCH (n:Key) RETURN n.key SKIP 3 LIMIT 9', SMALL],
    ['a hidden label', 'MATCH (n:Tenant) RETURN count(*)', SMALL],
    ['fixed edges in every direction', 'MATCH (a)-[r:SIGNED_BY]->(b)<-[s:BY_KEY|SIGNED_BY {note: 1}]-(c)-[t {src: 4}]-(d) RETURN r, s.note, t', FULL_VISIBILITY],
    ['a forward walk', 'MATCH (a)-[p:CAUSED_BY*2..4]->(b) RETURN p, b', FULL_VISIBILITY],
    ['an incoming walk of two types', 'MATCH (a)<-[p:CAUSED_BY|SEEN_ON*1..3]-(b) RETURN a', FULL_VISIBILITY],
    ['an undirected walk', 'MATCH (a)-[p*1..2]-(b) RETURN count(DISTINCT p), count(p)', FULL_VISIBILITY],
    ['a walk backwards from an anchor', "MATCH (a)-[p:CAUSED_BY*1..3]->(b:EmpireEvent {key: 'k'}) RETURN a", FULL_VISIBILITY],
    ['an incoming walk backwards from an anchor', 'MATCH (a)<-[*1..3]-(b {id: 7}) RETURN a', FULL_VISIBILITY],
    ['an undirected walk backwards from an anchor', 'MATCH (a)-[*1..3]-(b {id: 7}) RETURN a', FULL_VISIBILITY],
    ['two parts, each from its best node', "MATCH (a)-->(b {key: 'x'}), (c)-->(d {id: 2})-->(e:Key {key: 'y'}), (f) RETURN a", FULL_VISIBILITY],
    ['counts and grouping', 'MATCH (a)-[r]->(b) RETURN a.kind, count(DISTINCT b.x) AS n, count(r), count(DISTINCT a), b ORDER BY n DESC, a.kind', FULL_VISIBILITY],
    ['DISTINCT ordered by a node', 'MATCH (a)-[r]->(b) RETURN DISTINCT a, r ORDER BY a, r DESC', FULL_VISIBILITY],
    ['a walk between two placed nodes', 'MATCH (a {id: 1})-->(b)-[*1..2]->(a) RETURN a', FULL_VISIBILITY],
    ['parts left after the anchor, the first best of each next', "MATCH (a {id: 1}), (f), (g {key: 'x'}), (h {key: 'y'}), (i) RETURN a", FULL_VISIBILITY],
    ['an untyped relationship before a typed one', 'MATCH (a)-[r]->(b)-[s:SIGNED_BY]->(c) RETURN a', FULL_VISIBILITY],
    ['plain ordered by nodes, aliases and expressions', 'MATCH (a)-[r]->(b) RETURN a AS x, r, b.key ORDER BY x, r, b.key, a.id DESC, b.weight', FULL_VISIBILITY],
  ])('%s', (_name, text, visibility) => {
    const { sql, params, columns, tracksMatch, anchored } = compiled(text, visibility);
    expect({ sql: sql.split('\n'), params, columns, tracksMatch, anchored }).toMatchSnapshot();
  });

  it('uses the caps it is given', () => {
    const { sql, params } = compiled('MATCH (a)-[*1..2]->(b) RETURN b', FULL_VISIBILITY, { caps: { matchRows: 7, walkRows: 3 } });
    expect({ sql: sql.split('\n'), params }).toMatchSnapshot();
  });
});

describe('conditions', () => {
  it.each([
    ['n = m', 'MATCH (n), (m) WHERE n = m RETURN n'],
    ['n <> m', 'MATCH (n), (m) WHERE n <> m RETURN n'],
    ['null', 'MATCH (n) WHERE n.x = null OR null < n.key RETURN n'],
    ['column = string', "MATCH (n) WHERE n.key = 'a' RETURN n"],
    ['string = column', "MATCH (n) WHERE 'a' <> n.kind RETURN n"],
    ['column < integer', 'MATCH (n) WHERE n.id < 3 RETURN n'],
    ['float <= column', 'MATCH (n) WHERE 2.5 <= n.id RETURN n'],
    ['column against another type', "MATCH (n) WHERE n.id > 'x' AND 'x' >= n.id RETURN n"],
    ['json = json', 'MATCH (n) WHERE n.a = n.b AND n.a <> true RETURN n'],
    ['json ordered', 'MATCH (n) WHERE n.a < 1 AND n.a <= 1 AND n.a > 1 AND n.a >= "x" RETURN n'],
    ['string operators', "MATCH (n) WHERE n.key STARTS WITH 'a' AND n.x ENDS WITH n.key AND 'abc' CONTAINS n.y RETURN n"],
    ['string operators on non-strings', "MATCH (n) WHERE n.id STARTS WITH 'a' OR 1 CONTAINS n.x OR n.key ENDS WITH null RETURN n"],
    ['IN', "MATCH (n) WHERE n.key IN [] OR n.key IN ['a', 'b'] OR n.key IN ['a', 1] OR n.x IN ['a', null] OR n.id IN [1] OR n.id IN ['1'] OR n.x IN ['a'] RETURN n"],
    ['a property named like an Object member', 'MATCH (n) WHERE n.constructor IS NULL AND n.toString = 1 RETURN n'],
    ['IS NULL', 'MATCH (n) WHERE n.x IS NULL AND n.key IS NOT NULL AND n.id IS NOT NULL RETURN n'],
    ['boolean connectives', 'MATCH (n) WHERE NOT (n.a = 1 OR n.b = 2) XOR n.c = 3 RETURN n'],
  ])('%s', (_name, text) => {
    expect(where(text)).toMatchSnapshot();
  });
});

describe('anchors', () => {
  const anchoredAt = (text: string) => {
    const { sql, anchored } = compiled(text);
    return anchored ? /^FROM "graph_nodes" AS (n\d+)( CROSS JOIN|\))/m.exec(sql.split('\n').find((line) => line.startsWith('FROM "graph_nodes"'))!)?.[1] ?? 'anchored' : null;
  };

  it('is a node pinned by id, then by label and key, then by key; never by a range, <> or OR', () => {
    expect(anchoredAt("MATCH (a {key: 'x'})-->(b:Key {key: 'y'})-->(c {id: 3}) RETURN a")).toBe('n2');
    expect(anchoredAt("MATCH (a {key: 'x'})-->(b:Key {key: 'y'})-->(c) RETURN a")).toBe('n1');
    expect(anchoredAt("MATCH (a)-->(b {key: 'y'}) RETURN a")).toBe('n1');
    expect(anchoredAt("MATCH (a:Key)-->(b {key: 'y'}) WHERE a.key = 'z' RETURN a")).toBe('n0');
    expect(anchoredAt("MATCH (a)-->(b) WHERE 'z' = b.key AND a.x = 1 RETURN a")).toBe('n1');
    expect(anchoredAt('MATCH (a)-->(b) WHERE b.id = 4 RETURN a')).toBe('n1');
    expect(anchoredAt('MATCH (a)-->(b) WHERE 4 = b.id RETURN a')).toBe('n1');
    expect(anchoredAt('MATCH (a)-[r]->(b) WHERE r.id = 4 RETURN a')).toBeNull();
    expect(anchoredAt("MATCH (a)-->(b) WHERE b.id = '4' OR a.key = 'x' RETURN a")).toBeNull();
    expect(anchoredAt("MATCH (a)-->(b) WHERE b.key <> 'x' AND b.id < 3 AND a.key = 1 AND a.id = 'x' RETURN a")).toBeNull();
    expect(anchoredAt('MATCH (a:Key)-->(b) RETURN a')).toBeNull();
    // Of two nodes pinned as surely, the first in pattern order.
    expect(anchoredAt("MATCH (a {key: 'x'})-->(b {key: 'y'}) RETURN a")).toBe('n0');
    expect(anchoredAt("MATCH (a:Key {key: 'x'})-->(b:Key {key: 'y'}) RETURN a")).toBe('n0');
    expect(anchoredAt('MATCH (a {id: 1})-->(b {id: 2}) RETURN a')).toBe('n0');
    expect(anchoredAt("MATCH (a)-->(b) WHERE b.x = 'k' AND a = b RETURN a")).toBeNull();
  });
});
