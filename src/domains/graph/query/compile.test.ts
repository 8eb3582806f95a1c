import { PgDialect } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../platform/errors.ts';
import { FULL_VISIBILITY, type Visibility } from '../kinds.ts';
import { checkQuery } from './check.ts';
import { compileQuery } from './compile.ts';
import { parseQueryText } from './parser.ts';

const dialect = new PgDialect();

function compiled(text: string, visibility: Visibility = FULL_VISIBILITY, rowLimit = 100) {
  const result = compileQuery(checkQuery(parseQueryText(text)), { visibility, rowLimit });
  return { ...dialect.sqlToQuery(result.statement), columns: result.columns, tracksMatch: result.tracksMatch, anchored: result.anchored };
}

/** A string literal as the query text writes it (single-quoted, backslash escapes). */
const quoted = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;

const HOSTILE = [
  "'; DROP TABLE graph_nodes; --",
  "x' OR '1'='1",
  '"; SELECT token_hash FROM api_tokens; --',
  '$1',
  "\\'",
  'Robert\'); DELETE FROM graph_edges;--',
  'çà va 🙂 ℵ \u202e',
  'multi\nline',
  'graph_nodes',
];

describe('user values are bound parameters', () => {
  it.each(HOSTILE)('%j in WHERE, a property map, IN and STARTS WITH never reaches the SQL text', (value) => {
    const text = `MATCH (n:Key {key: ${quoted(value)}})-[:BELONGS_TO {note: ${quoted(value)}}]->(t) WHERE n.label = ${quoted(value)} OR n.key IN [${quoted(value)}, 'b'] OR n.key STARTS WITH ${quoted(value)} OR n.x CONTAINS ${quoted(value)} RETURN n.key`;
    const { sql, params } = compiled(text);
    if (value !== 'graph_nodes' && value !== '$1') expect(sql).not.toContain(value);
    // The value travels as a text parameter or inside a JSON parameter, never in the statement.
    expect(params).toContain(value);
    expect(params).toContain(JSON.stringify(value));
    expect(params.some((p) => typeof p === 'string' && p.includes(JSON.stringify(value).slice(1, -1)) && p.startsWith('['))).toBe(true);
  });

  it('binds property names, labels, relationship types and numbers too', () => {
    const { sql, params } = compiled("MATCH (n:Incident)-[:CONCERNS|ABOUT]->(e) WHERE n.`weird'; name` = 42 AND e.severity >= 3.5 RETURN n.`other name` LIMIT 7");
    for (const name of ["weird'; name", 'other name', 'Incident', 'CONCERNS', 'severity']) {
      expect(sql).not.toContain(name);
      expect(params.some((p) => p === name || (typeof p === 'string' && p.includes(name)))).toBe(true);
    }
    expect(sql.replace(/\$\d+/g, '$')).not.toMatch(/42|3\.5|7/);
    expect(params).toEqual(expect.arrayContaining(['42', '3.5', 7]));
  });

  it('binds the caller\'s visible kinds and toolsets', () => {
    const { sql, params } = compiled('MATCH (n) RETURN n', { kinds: ['Key', 'Toolset'], toolsets: ["crawler'lab", 'tool-2'] });
    expect(sql).not.toMatch(/crawler|Toolset|tool-2/);
    expect(params).toEqual(expect.arrayContaining([JSON.stringify(['Key', 'Toolset']), JSON.stringify(["crawler'lab", 'tool-2'])]));
    expect(sql).toMatch(/n0\.toolset IS NULL OR n0\.toolset = ANY/);
  });

  it('binds the row limit (the smaller of LIMIT and the request\'s) and SKIP', () => {
    const { sql, params } = compiled('MATCH (n) RETURN n SKIP 13', FULL_VISIBILITY, 29);
    expect(sql).toMatch(/LIMIT \$\d+::bigint OFFSET \$\d+::bigint$/);
    expect(params.slice(-2)).toEqual([29, 13]);
    expect(compiled('MATCH (n) RETURN n LIMIT 5', FULL_VISIBILITY, 29).params.slice(-2)).toEqual([5, 0]);
    expect(compiled('MATCH (n) RETURN n LIMIT 500', FULL_VISIBILITY, 29).params.slice(-2)).toEqual([29, 0]);
  });

  it('refuses U+0000 in a literal or a name as a 400 before any SQL is built', () => {
    for (const text of ["MATCH (n) WHERE n.key = 'a\\u0000' RETURN n", "MATCH (n) WHERE n.`a\u0000b` = 1 RETURN n", "MATCH (n) WHERE n.key IN ['\\u0000'] RETURN n"]) {
      expect(() => compiled(text)).toThrow(ServiceError);
    }
  });
});

describe('only the graph tables', () => {
  /** Every relation the statement reads: names after FROM or JOIN, quoted or bare. */
  function relationsRead(sqlText: string): Set<string> {
    const names = new Set<string>();
    for (const match of sqlText.matchAll(/\b(?:FROM|JOIN)\s+(?!LATERAL\b)("?)([A-Za-z_][A-Za-z0-9_]*)\1/gi)) names.add(match[2]!);
    return names;
  }

  it.each([
    'MATCH (n) RETURN n',
    "MATCH (i:Incident)-[:CONCERNS]->(e:EmpireEvent)-[:SIGNED_BY]->(k:Key) WHERE i.key = 'x' RETURN DISTINCT k.key",
    'MATCH (a:EmpireEvent)-[r:CAUSED_BY*1..3]-(b) RETURN r, count(*)',
    "MATCH (f:Fingerprint)-[:SEEN_ON]->(t:Tenant), (f)-[c:IN_CLUSTER]->(x) WHERE t.key IN ['a'] AND NOT x.key ENDS WITH 'z' RETURN f, c ORDER BY f.key DESC LIMIT 5",
  ])('%s reads graph_nodes and graph_edges (and its own walk) only', (text) => {
    const { sql } = compiled(text);
    const allowed = new Set(['graph_nodes', 'graph_edges', 'jsonb_array_elements_text', 'jsonb_array_elements', 'unnest', 'w0', 'w1', 'w2', 'w3']);
    for (const relation of relationsRead(sql)) expect(allowed.has(relation), `${relation} in ${sql}`).toBe(true);
    expect(sql).toMatch(/"graph_nodes"/);
    // Nothing that could reach another schema or run a function with side effects.
    expect(sql).not.toMatch(/api_tokens|sessions|secret|token_hash|ip_address|pg_catalog|information_schema|pg_read|dblink|copy\s/i);
  });
});

describe('what the SQL does', () => {
  it('filters removed rows and applies the visibility rule to every node alias', () => {
    const { sql } = compiled('MATCH (a)-->(b)-[:CAUSED_BY*1..2]->(c) RETURN a', { kinds: ['EmpireEvent'], toolsets: ['t1'] });
    for (const alias of ['n0', 'n1', 'n2', 'wn1']) {
      expect(sql).toContain(`${alias}.removed_run IS NULL`);
      expect(sql).toContain(`${alias}.kind = ANY`);
      expect(sql).toContain(`(${alias}.toolset IS NULL OR ${alias}.toolset = ANY`);
    }
    for (const alias of ['e0', 'we1']) expect(sql).toContain(`${alias}.removed_run IS NULL`);
    expect(sql).toMatch(/WITH RECURSIVE w1/);
  });

  it('makes a label the caller may not see match nothing', () => {
    const { sql } = compiled('MATCH (t:Tenant) RETURN t', { kinds: ['Key'], toolsets: null });
    expect(sql).toMatch(/AND FALSE/);
  });

  it('keeps distinct relationships on distinct edges, skipping pairs whose types cannot meet', () => {
    expect(compiled('MATCH (a)-[r]->(b)-[s]->(c) RETURN a').sql).toContain('e0.id <> e1.id');
    expect(compiled('MATCH (a)-[:SIGNED_BY]->(b)<-[:BY_KEY]-(c) RETURN a').sql).not.toContain('e0.id <> e1.id');
    expect(compiled('MATCH (a)-[r]->(b)-[*1..2]->(c) RETURN a').sql).toContain('NOT (e0.id = ANY(p1.edges))');
    expect(compiled('MATCH (a)-[*1..2]->(b)-[*1..2]->(c) RETURN a').sql).toContain('NOT (p0.edges && p1.edges)');
  });

  it('groups by the non-counting items and tracks matches only for plain queries', () => {
    const grouped = compiled('MATCH (a)-->(b) RETURN a.kind, count(*) AS n, b');
    expect(grouped.sql).toContain('GROUP BY 1, 3');
    expect(grouped.tracksMatch).toBe(false);
    expect(grouped.columns.map((c) => [c.name, c.kind])).toEqual([['a.kind', 'value'], ['n', 'value'], ['b', 'node']]);
    expect(compiled('MATCH (a) RETURN count(*)').sql).not.toContain('GROUP BY');
    expect(compiled('MATCH (a) RETURN DISTINCT a.kind').tracksMatch).toBe(false);
    const plain = compiled('MATCH (a)-[r]->()-[*1..2]->(b) RETURN a, r');
    expect(plain.tracksMatch).toBe(true);
    // The views are built above the match, from the whole rows it hands up (m.n0, m.e0, m.p1).
    expect(plain.sql).toMatch(/to_jsonb\(ARRAY\[jsonb_build_object\('id', \(m\.n0\)\.id.*jsonb_build_object\('id', \(m\.n1\)\.id.*jsonb_build_object\('id', \(m\.n2\)\.id[^\]]*\]\) AS match_nodes/);
    expect(plain.sql).toMatch(/\(jsonb_build_array\(jsonb_build_object\('id', \(m\.e0\)\.id.*?\(m\.e0\)\.props\)\) \|\| \(SELECT coalesce\(jsonb_agg\(.*unnest\(\(m\.p1\)\.edges\).*\)\) AS match_edges/);
    expect(plain.sql).toMatch(/^FROM \(SELECT e0 AS e0, n0 AS n0, n1 AS n1, n2 AS n2, p1 AS p1, row_number\(\) OVER \(\) AS match_rank$/m);
    // A count reads no column of the match: nothing is handed up but the rank.
    expect(compiled('MATCH (a)-->(b) RETURN count(*)').sql).toMatch(/^FROM \(SELECT row_number\(\) OVER \(\) AS match_rank$/m);
  });

  it('writes the joins out from a node pinned by key or id, and leaves an unpinned pattern to the planner', () => {
    const pinned = compiled("MATCH (f:Fingerprint)-[:SEEN_ON]->(t:Tenant {key: 'acme'})<-[:SEEN_ON]-(g) RETURN f, g");
    expect(pinned.anchored).toBe(true);
    expect(pinned.sql).toContain('FROM "graph_nodes" AS n1 CROSS JOIN "graph_edges" AS e0 CROSS JOIN "graph_nodes" AS n0 CROSS JOIN "graph_edges" AS e1 CROSS JOIN "graph_nodes" AS n2\n');
    const byWhere = compiled("MATCH (a)-[:CAUSED_BY*1..3]->(b:EmpireEvent) WHERE b.key = 'ev-1' AND a.n > 1 RETURN a");
    expect(byWhere.anchored).toBe(true);
    // The walk starts at the pinned right end, against the arrow, and prepends each edge.
    expect(byWhere.sql).toMatch(/FROM "graph_nodes" AS n1 CROSS JOIN LATERAL \(WITH RECURSIVE .*SELECT n1\.id, ARRAY\[\]::bigint\[\], 0/s);
    expect(byWhere.sql).toContain('we0.id || w0.edges');
    expect(byWhere.sql).toContain('we0.dst = w0.node_id');
    expect(byWhere.sql).toContain('p0.end_id = n0.id');
    const byId = compiled('MATCH (a)-->(b) WHERE b.id = 42 RETURN a');
    expect(byId.anchored).toBe(true);
    expect(byId.sql).toMatch(/\(n1\.id = \$\d+::bigint\)/);
    expect(byId.sql).toContain('FROM "graph_nodes" AS n1 CROSS JOIN');
    const unpinned = compiled("MATCH (a)-->(b) WHERE b.key STARTS WITH 'x' OR b.id = 42 RETURN a");
    expect(unpinned.anchored).toBe(false);
    expect(unpinned.sql).toContain('FROM "graph_nodes" AS n0, "graph_nodes" AS n1, "graph_edges" AS e0\n');
  });

  it('compares a key with a string natively so the (kind, key) index serves it', () => {
    expect(compiled("MATCH (i:Incident) WHERE i.key = 'x' RETURN i").sql).toMatch(/\(n0\.key = \$\d+::text\)/);
    expect(compiled("MATCH (i:Incident {key: 'x'}) RETURN i").sql).toMatch(/\(n0\.key = \$\d+::text\)/);
  });
});

describe('bounded by construction', () => {
  const capped = (text: string) => {
    const result = compileQuery(checkQuery(parseQueryText(text)), { visibility: FULL_VISIBILITY, rowLimit: 100, caps: { matchRows: 777, walkRows: 33 } });
    return dialect.sqlToQuery(result.statement);
  };

  it('enumerates at most the match cap plus one row, and records a cut instead of going on', () => {
    const { sql, params } = capped('MATCH (a), (b), (c) RETURN count(*)');
    expect(sql).toMatch(/row_number\(\) OVER \(\) AS match_rank\nFROM .*\nLIMIT \$(\d+)::bigint\) AS m\nWHERE CASE WHEN m\.match_rank <= \$(\d+)::bigint THEN true ELSE set_config\('observatory\.graph_match_cut', '1', true\) IS NULL END/s);
    const [, limit, cap] = /LIMIT \$(\d+)::bigint\) AS m\nWHERE CASE WHEN m\.match_rank <= \$(\d+)/.exec(sql)!;
    expect([params[Number(limit) - 1], params[Number(cap) - 1]]).toEqual([778, 777]);
    // Counting, grouping, sorting and LIMIT all work on the matches above the cut.
    expect(sql.indexOf('count(*)')).toBeLessThan(sql.indexOf('AS match_rank'));
  });

  it('cuts every variable-length walk at the walk cap plus one path', () => {
    const { sql, params } = capped('MATCH (a)-[*1..5]-(b)-[*1..2]-(c) RETURN count(*)');
    const walks = [...sql.matchAll(/LIMIT \$(\d+)::bigint\) AS wr(\d)\n\s*WHERE CASE WHEN wr\2\.walk_rank <= \$(\d+)::bigint THEN true ELSE set_config\('observatory\.graph_walk_cut', '1', true\) IS NULL END/g)];
    expect(walks.map((w) => w[2])).toEqual(['0', '1']);
    for (const w of walks) expect([params[Number(w[1]) - 1], params[Number(w[3]) - 1]]).toEqual([34, 33]);
  });

  it('looks each walked node up by its key, not by a join the planner may turn into a scan of every node', () => {
    expect(capped('MATCH (a)-[*1..3]->(b) RETURN b').sql).toContain('CROSS JOIN LATERAL (SELECT wn0.id FROM "graph_nodes" AS wn0 WHERE wn0.id = we0.dst AND');
  });

  it('hides from a bound caller a node that only other toolsets\' events name', () => {
    const { sql } = compiled('MATCH (t:Tenant)<-[*1..2]-(e) RETURN t', { kinds: ['Tenant', 'EmpireEvent'], toolsets: ['t1'] });
    for (const alias of ['n0', 'n1', 'wn0']) expect(sql).toContain(`(${alias}.named_by IS NULL OR ${alias}.named_by && ARRAY(`);
    expect(compiled('MATCH (t:Tenant) RETURN t').sql).not.toContain('named_by');
  });
});
