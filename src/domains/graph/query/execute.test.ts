import { type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, onServer, type TestDatabase } from '../../../../test/helpers/database.ts';
import type { Database, Db } from '../../../platform/db/client.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { ServiceError } from '../../../platform/errors.ts';
import { FULL_VISIBILITY, NODE_KINDS, type Visibility } from '../kinds.ts';
import { createServerRunner } from './runner.ts';
import { createGraphQueryService, type GraphQueryService } from './service.ts';

/**
 * The query language against a real database (PGlite, or PostgreSQL with DATABASE_URL), over a
 * small graph inserted straight into graph_nodes and graph_edges:
 *
 *   inc-1 (Incident, alpha) CONCERNS ev-1, ev-2 (and ev-3 through a removed edge)
 *   ev-1, ev-2 (alpha), ev-3 (beta): ev-2 CAUSED_BY ev-1, ev-3 CAUSED_BY ev-2, ev-1 CAUSED_BY ev-3 (a cycle)
 *   ev-1, ev-2 SIGNED_BY key-a (alpha); ev-3 SIGNED_BY key-b (beta)
 *   fp-1 SEEN_ON acme, globex; fp-2 SEEN_ON acme (tenants and fingerprints belong to no toolset)
 *   ev-gone (removed) CAUSED_BY ev-1
 */

let testDb: TestDatabase;
let database: Database;
let graph: GraphQueryService;

const NODES: [number, string, string, string | null, Record<string, unknown>, number | null][] = [
  [1, 'Incident', 'inc-1', 'alpha', { severity: 'major' }, null],
  [2, 'EmpireEvent', 'ev-1', 'alpha', { n: 1, type: 'crawl.started' }, null],
  [3, 'EmpireEvent', 'ev-2', 'alpha', { n: 2, type: 'crawl.finished' }, null],
  [4, 'EmpireEvent', 'ev-3', 'beta', { n: '3', type: 'crawl.started', note: null }, null],
  [5, 'Key', 'key-a', 'alpha', {}, null],
  [6, 'Key', 'key-b', 'beta', {}, null],
  [7, 'Tenant', 'acme', null, { name: "Acme's shop" }, null],
  [8, 'Tenant', 'globex', null, { name: 'Globex' }, null],
  [9, 'Fingerprint', 'fp-1', null, { uaClass: 'LIAR' }, null],
  [10, 'Fingerprint', 'fp-2', null, { uaClass: 'BOT' }, null],
  [11, 'Toolset', 'alpha', 'alpha', {}, null],
  [12, 'EmpireEvent', 'ev-gone', 'alpha', { n: 9 }, 2],
];

const EDGES: [number, string, number, number, number | null][] = [
  [1, 'CONCERNS', 1, 2, null],
  [2, 'CONCERNS', 1, 3, null],
  [3, 'SIGNED_BY', 2, 5, null],
  [4, 'SIGNED_BY', 3, 5, null],
  [5, 'SIGNED_BY', 4, 6, null],
  [6, 'CAUSED_BY', 3, 2, null],
  [7, 'CAUSED_BY', 4, 3, null],
  [8, 'CAUSED_BY', 2, 4, null],
  [9, 'SEEN_ON', 9, 7, null],
  [10, 'SEEN_ON', 9, 8, null],
  [11, 'SEEN_ON', 10, 7, null],
  [12, 'CAUSED_BY', 12, 2, null],
  [13, 'CONCERNS', 1, 4, 2],
];

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase());
  for (const [id, kind, key, toolset, props, removed] of NODES) {
    await database.db.execute(sql`INSERT INTO graph_nodes (id, kind, key, toolset, tenant, props, first_run, removed_run, materialised_at)
      VALUES (${id}, ${kind}, ${key}, ${toolset}, NULL, ${JSON.stringify(props)}::jsonb, 1, ${removed}, now())`);
  }
  for (const [id, kind, src, dst, removed] of EDGES) {
    await database.db.execute(sql`INSERT INTO graph_edges (id, kind, src, dst, props, first_run, removed_run, materialised_at)
      VALUES (${id}, ${kind}, ${src}, ${dst}, ${JSON.stringify({ weight: id })}::jsonb, 1, ${removed}, now())`);
  }
  // Planner statistics, as the materialiser leaves them after a run: PGlite has no autovacuum, and
  // the cost ceiling reads the planner's estimates.
  await database.db.execute(sql`ANALYZE graph_nodes, graph_edges`);
  graph = createGraphQueryService({ db: database.db });
});
afterAll(() => testDb.drop());

const run = (query: string, visibility: Visibility = FULL_VISIBILITY, limit?: number) => graph.execute({ query, visibility, ...(limit !== undefined ? { limit } : {}) });
const column = async (query: string, name: string, visibility?: Visibility) => (await run(query, visibility)).rows.map((row) => row[name]);

async function refusal(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  expect((error as ServiceError).status).toBe(400);
  return error as ServiceError;
}

describe('patterns', () => {
  it('follows a relationship out, in, and either way', async () => {
    expect(await column("MATCH (e:EmpireEvent {key: 'ev-2'})-[:CAUSED_BY]->(x) RETURN x.key", 'x.key')).toEqual(['ev-1']);
    expect(await column("MATCH (e:EmpireEvent {key: 'ev-2'})<-[:CAUSED_BY]-(x) RETURN x.key", 'x.key')).toEqual(['ev-3']);
    expect(await column("MATCH (e:EmpireEvent {key: 'ev-2'})-[:CAUSED_BY]-(x) RETURN x.key ORDER BY x.key", 'x.key')).toEqual(['ev-1', 'ev-3']);
    expect(await column("MATCH (e {key: 'ev-2'})-->(x) RETURN x.key ORDER BY x.key", 'x.key')).toEqual(['ev-1', 'key-a']);
    expect(await column("MATCH (e {key: 'ev-2'})--(x) RETURN x.key ORDER BY x.key", 'x.key')).toEqual(['ev-1', 'ev-3', 'inc-1', 'key-a']);
  });

  it('answers which keys signed the events of an incident (two hops), without removed edges', async () => {
    const answer = await run("MATCH (i:Incident)-[:CONCERNS]->(e:EmpireEvent)-[:SIGNED_BY]->(k:Key) WHERE i.key = 'inc-1' RETURN DISTINCT k.key");
    expect(answer.rows).toEqual([{ 'k.key': 'key-a' }]);
    expect(answer.rowCount).toBe(1);
  });

  it('returns whole nodes and edges, and the nodes and edges of each returned match', async () => {
    const answer = await run("MATCH (i:Incident)-[c:CONCERNS]->(e)-[:SIGNED_BY]->(:Key) WHERE e.key = 'ev-1' RETURN i, c");
    expect(answer.rows).toEqual([
      {
        i: { id: 1, kind: 'Incident', key: 'inc-1', props: { severity: 'major' } },
        c: { id: 1, kind: 'CONCERNS', src: 1, dst: 2, props: { weight: 1 } },
      },
    ]);
    // The anonymous Key node and the unnamed SIGNED_BY edge are part of the match too.
    expect(answer.nodes.map((n) => n.key)).toEqual(['inc-1', 'ev-1', 'key-a']);
    expect(answer.edges.map((e) => e.id)).toEqual([1, 3]);
    expect(answer.nodes[2]).toEqual({ id: 5, kind: 'Key', key: 'key-a', props: {} });
  });

  it('finds fingerprints seen on two tenants (two patterns sharing a variable)', async () => {
    expect(await column('MATCH (f:Fingerprint)-[:SEEN_ON]->(t1:Tenant), (f)-[:SEEN_ON]->(t2:Tenant) WHERE t1.key < t2.key RETURN f.key', 'f.key')).toEqual(['fp-1']);
  });

  it('binds distinct relationships to distinct edges', async () => {
    // Without relationship uniqueness fp-1 would reach itself back over the one SEEN_ON edge.
    expect(await column("MATCH (a {key: 'fp-1'})-[:SEEN_ON]-(t)-[:SEEN_ON]-(c) RETURN c.key", 'c.key')).toEqual(['fp-2']);
    expect(await column("MATCH (a {key: 'fp-1'})-[:SEEN_ON]-(t)-[:SEEN_ON*1..1]-(c) RETURN c.key", 'c.key')).toEqual(['fp-2']);
  });

  it('compares whole variables by identity', async () => {
    expect(await column("MATCH (a:Tenant)<--(f)-->(b:Tenant) WHERE a <> b AND a.key = 'acme' RETURN b.key", 'b.key')).toEqual(['globex']);
    expect(await column("MATCH (a:Tenant)<--(f)-->(b:Tenant) WHERE a = b AND a.key = 'acme' RETURN count(*) AS n", 'n')).toEqual([0]);
  });
});

describe('variable length', () => {
  it('walks a cycle without repeating an edge, up to the bound', async () => {
    const answer = await run("MATCH (a:EmpireEvent {key: 'ev-1'})<-[r:CAUSED_BY*]-(b) RETURN b.key, r");
    const byKey = Object.fromEntries(answer.rows.map((row) => [row['b.key'], (row.r as { id: number }[]).map((e) => e.id)]));
    expect(byKey).toEqual({ 'ev-2': [6], 'ev-3': [6, 7], 'ev-1': [6, 7, 8] });
    expect(answer.edges.map((e) => e.id).sort()).toEqual([6, 7, 8]);
    expect(await column("MATCH (a:EmpireEvent {key: 'ev-1'})<-[:CAUSED_BY*2..2]-(b) RETURN b.key", 'b.key')).toEqual(['ev-3']);
    expect(await column("MATCH (a:EmpireEvent {key: 'ev-1'})<-[:CAUSED_BY*0..1]-(b) RETURN b.key ORDER BY b.key", 'b.key')).toEqual(['ev-1', 'ev-2']);
  });

  it('walks a variable-length path from whichever end is pinned, still listing it from its left end', async () => {
    const sorted = (rows: Record<string, unknown>[]) => rows.map((row) => JSON.stringify(row)).sort();
    // Pinned on the right: the walk starts there and goes against the arrows.
    const pinnedRight = await run("MATCH (b)-[r:CAUSED_BY*]->(a:EmpireEvent {key: 'ev-1'}) RETURN b.key, r");
    // Not pinned (STARTS WITH is no anchor): the walk starts on the left, as written.
    const unpinned = await run("MATCH (b)-[r:CAUSED_BY*]->(a:EmpireEvent) WHERE a.key STARTS WITH 'ev-1' RETURN b.key, r");
    expect(sorted(pinnedRight.rows)).toEqual(sorted(unpinned.rows));
    const paths = pinnedRight.rows.map((row) => [row['b.key'], (row.r as { id: number }[]).map((edge) => edge.id)]);
    expect(paths.sort()).toEqual([['ev-1', [8, 7, 6]], ['ev-2', [6]], ['ev-3', [7, 6]]]);
    expect(pinnedRight.edges.map((e) => e.id).sort()).toEqual([6, 7, 8]);
  });

  it('walks either direction and counts the paths', async () => {
    // From ev-1 over the 3-cycle: two ways round, each of length 1, 2 and 3.
    expect(await column("MATCH (a {key: 'ev-1'})-[:CAUSED_BY*1..3]-(b) RETURN count(*) AS paths", 'paths')).toEqual([6]);
  });

  it('applies a property map to every edge walked', async () => {
    expect(await column("MATCH (a {key: 'ev-1'})<-[:CAUSED_BY*1..3 {weight: 6}]-(b) RETURN b.key", 'b.key')).toEqual(['ev-2']);
  });
});

describe('WHERE', () => {
  const keys = (where: string, visibility?: Visibility) => column(`MATCH (n:EmpireEvent) WHERE ${where} RETURN n.key ORDER BY n.key`, 'n.key', visibility);

  it('compares numbers and strings by type, as Cypher does', async () => {
    expect(await keys('n.n > 1')).toEqual(['ev-2']); // ev-3's n is the string '3': no order against a number
    expect(await keys('n.n >= 1 AND n.n <= 2')).toEqual(['ev-1', 'ev-2']);
    expect(await keys("n.n = '3'")).toEqual(['ev-3']);
    expect(await keys('n.n = 3')).toEqual([]);
    expect(await keys("n.n <> '3'")).toEqual(['ev-1', 'ev-2']);
    expect(await keys("n.key < 'ev-2'")).toEqual(['ev-1']);
    expect(await keys('n.id = 3')).toEqual(['ev-2']);
  });

  it('keeps null three-valued: NOT of an unknown comparison is still unknown', async () => {
    expect(await keys('n.missing = 1')).toEqual([]);
    expect(await keys('NOT n.missing = 1')).toEqual([]);
    expect(await keys("NOT n.n = 'x'")).toEqual(['ev-1', 'ev-2', 'ev-3']);
    expect(await keys('n.note IS NULL')).toEqual(['ev-1', 'ev-2', 'ev-3']); // stored JSON null reads as null
    expect(await keys('n.n IS NOT NULL')).toEqual(['ev-1', 'ev-2', 'ev-3']);
    expect(await keys('n.n = null')).toEqual([]);
    expect(await keys('n.n IN [null]')).toEqual([]);
    expect(await keys('NOT n.n IN [1, null]')).toEqual([]);
    expect(await keys('NOT n.n IN [1]')).toEqual(['ev-2', 'ev-3']);
    expect(await keys('n.n IN []')).toEqual([]);
  });

  it('reads IN, string predicates, AND, OR, XOR and parentheses', async () => {
    expect(await keys("n.key IN ['ev-1', 'ev-3', 'nope']")).toEqual(['ev-1', 'ev-3']);
    expect(await keys("n.n IN [2, '3']")).toEqual(['ev-2', 'ev-3']);
    expect(await keys("n.type STARTS WITH 'crawl.s'")).toEqual(['ev-1', 'ev-3']);
    expect(await keys("n.type ENDS WITH 'finished'")).toEqual(['ev-2']);
    expect(await keys("n.key CONTAINS '-2'")).toEqual(['ev-2']);
    expect(await keys("n.n STARTS WITH '1'")).toEqual([]); // a number is not a string
    expect(await keys("n.type STARTS WITH 'crawl' XOR n.key = 'ev-1'")).toEqual(['ev-2', 'ev-3']);
    expect(await keys("(n.key = 'ev-1' OR n.key = 'ev-2') AND NOT n.n = 2")).toEqual(['ev-1']);
  });

  it('treats hostile strings as values', async () => {
    expect(await keys("n.key = '\\'; DROP TABLE graph_nodes; --'")).toEqual([]);
    expect(await column("MATCH (t:Tenant) WHERE t.name = \"Acme's shop\" RETURN t.key", 't.key')).toEqual(['acme']);
    expect(await column("MATCH (t:Tenant) WHERE t.name STARTS WITH 'Acme\\'' RETURN t.key", 't.key')).toEqual(['acme']);
    const counted = rowsOf<{ n: number }>(await database.db.execute(sql`SELECT count(*)::int AS n FROM graph_nodes`));
    expect(counted).toEqual([{ n: NODES.length }]);
  });
});

describe('RETURN, counting, ORDER BY, LIMIT', () => {
  it('groups by the items that do not count', async () => {
    const answer = await run('MATCH (f:Fingerprint)-[:SEEN_ON]->(t:Tenant) RETURN t.key AS tenant, count(f) AS fingerprints ORDER BY fingerprints DESC, tenant');
    expect(answer.rows).toEqual([
      { tenant: 'acme', fingerprints: 2 },
      { tenant: 'globex', fingerprints: 1 },
    ]);
    expect(answer.nodes).toEqual([]);
  });

  it('counts to zero when nothing matches, and counts distinct values', async () => {
    expect((await run('MATCH (n:Attestation) RETURN count(*)')).rows).toEqual([{ 'count(*)': 0 }]);
    expect((await run('MATCH (n:EmpireEvent) RETURN count(DISTINCT n.type) AS types, count(n.note) AS notes')).rows).toEqual([{ types: 2, notes: 0 }]);
  });

  it('shows the nodes returned whole by an aggregating query', async () => {
    const answer = await run('MATCH (k:Key)<-[:SIGNED_BY]-(e) RETURN k, count(e) AS signed ORDER BY signed DESC');
    expect(answer.rows.map((row) => [(row.k as { key: string }).key, row.signed])).toEqual([
      ['key-a', 2],
      ['key-b', 1],
    ]);
    expect(answer.nodes.map((n) => n.key)).toEqual(['key-a', 'key-b']);
    expect(answer.edges).toEqual([]);
  });

  it('orders, skips and limits; the request limit caps the query LIMIT', async () => {
    expect(await column('MATCH (n:EmpireEvent) RETURN n.key ORDER BY n.key DESC SKIP 1 LIMIT 1', 'n.key')).toEqual(['ev-2']);
    expect(await column('MATCH (n:EmpireEvent) RETURN n.key AS k ORDER BY k', 'k')).toEqual(['ev-1', 'ev-2', 'ev-3']);
    expect(await column('MATCH (n:EmpireEvent) RETURN n ORDER BY n.n DESC', 'n').then((nodes) => nodes.map((n) => (n as { key: string }).key))).toEqual(['ev-2', 'ev-1', 'ev-3']);
    expect((await run('MATCH (n) RETURN n.key LIMIT 5', FULL_VISIBILITY, 2)).rowCount).toBe(2);
    expect((await run('MATCH (n) RETURN n.key LIMIT 1', FULL_VISIBILITY, 2)).rowCount).toBe(1);
    expect((await run('MATCH (n) RETURN n.key')).rowCount).toBe(NODES.length - 1);
  });

  it('keys rows by alias, or by the item as written', async () => {
    expect((await run("MATCH (n:Tenant {key: 'acme'}) RETURN n.key AS tenant, n.name, count( * )")).rows).toEqual([{ tenant: 'acme', 'n.name': "Acme's shop", 'count( * )': 1 }]);
    expect((await run("MATCH (n:Tenant {key: 'acme'}) RETURN *")).rows).toEqual([{ n: { id: 7, kind: 'Tenant', key: 'acme', props: { name: "Acme's shop" } } }]);
  });

  it('refuses a bad request limit', async () => {
    for (const limit of [0, 1001, 1.5]) expect((await refusal(run('MATCH (n) RETURN n', FULL_VISIBILITY, limit))).reason).toBe('invalid-limit');
  });
});

describe('visibility', () => {
  const noHoneypot: Visibility = { kinds: NODE_KINDS.filter((k) => !['Tenant', 'Fingerprint', 'Cluster'].includes(k)), toolsets: null };
  const alphaOnly: Visibility = { kinds: NODE_KINDS, toolsets: ['alpha'] };

  it('hides kinds the caller\'s scopes do not allow, by label or not', async () => {
    expect((await run('MATCH (t:Tenant) RETURN t', noHoneypot)).rows).toEqual([]);
    expect((await run('MATCH (f)-[:SEEN_ON]->(t) RETURN f, t', noHoneypot)).rows).toEqual([]);
    expect(await column('MATCH (n) RETURN DISTINCT n.kind AS kind ORDER BY kind', 'kind', noHoneypot)).toEqual(['EmpireEvent', 'Incident', 'Key', 'Toolset']);
    expect((await run('MATCH (t:Tenant) RETURN count(*) AS n', noHoneypot)).rows).toEqual([{ n: 0 }]);
  });

  it('shows a toolset-bound caller only its toolsets\' nodes and the nodes of no toolset', async () => {
    expect(await column('MATCH (n:EmpireEvent) RETURN n.key ORDER BY n.key', 'n.key', alphaOnly)).toEqual(['ev-1', 'ev-2']);
    expect(await column('MATCH (n) RETURN count(*) AS n', 'n', alphaOnly)).toEqual([9]);
    expect(await column('MATCH (e)-[:SIGNED_BY]->(k:Key) RETURN DISTINCT k.key', 'k.key', alphaOnly)).toEqual(['key-a']);
  });

  it('never walks a variable-length path through a hidden node', async () => {
    const walk = "MATCH (a {key: 'ev-1'})<-[:CAUSED_BY*1..5]-(b) RETURN b.key ORDER BY b.key";
    expect(await column(walk, 'b.key')).toEqual(['ev-1', 'ev-2', 'ev-3']);
    // ev-3 is beta's: the walk stops at ev-2, so ev-1 is not reached round the cycle either.
    expect(await column(walk, 'b.key', alphaOnly)).toEqual(['ev-2']);
    const keysTouched = (await run("MATCH (a {key: 'ev-1'})-[*1..5]-(b) RETURN b", alphaOnly)).nodes.map((n) => n.key);
    expect(keysTouched).not.toContain('ev-3');
    expect(keysTouched).not.toContain('key-b');
  });

  it('never shows removed nodes or edges', async () => {
    expect(await column('MATCH (n:EmpireEvent) RETURN count(*) AS n', 'n')).toEqual([3]);
    expect(await column("MATCH (n {key: 'ev-gone'}) RETURN n", 'n')).toEqual([]);
    expect(await column("MATCH (i:Incident)-[:CONCERNS]->(e) RETURN e.key ORDER BY e.key", 'e.key')).toEqual(['ev-1', 'ev-2']);
    expect(await column("MATCH (a {key: 'ev-1'})<-[:CAUSED_BY*1..2]-(b) RETURN b.key ORDER BY b.key", 'b.key')).toEqual(['ev-2', 'ev-3']);
  });
});

describe('limits', () => {
  /** Seven nodes of a cross product whose condition (placed above every join) no row meets: 12^7 combinations, none kept. */
  const endless = "MATCH (a), (b), (c), (d), (e), (f), (g) WHERE a.key = 'x' OR b.key = 'x' OR c.key = 'x' OR d.key = 'x' OR e.key = 'x' OR f.key = 'x' OR g.key = 'x' RETURN count(*) AS n";

  it('stops a statement that outlives the timeout with a 400 query-timeout, and the next query runs', async () => {
    const hurried = createGraphQueryService({ db: database.db, statementTimeoutMs: 300 });
    try {
      const error = await refusal(hurried.execute({ query: endless, visibility: FULL_VISIBILITY }));
      expect(error.reason).toBe('query-timeout');
      expect(error.details).toEqual({ timeoutMs: 300 });
      expect(error.human).toMatch(/Narrow the pattern/);
      // The connection (or, on PGlite, a fresh worker) is healthy afterwards.
      expect((await hurried.execute({ query: 'MATCH (n:Tenant) RETURN count(*) AS n', visibility: FULL_VISIBILITY })).rows).toEqual([{ n: 2 }]);
    } finally {
      await hurried.close();
    }
  });

  it('keeps the event loop free while a query runs (on PGlite it runs on a worker thread)', async () => {
    const hurried = createGraphQueryService({ db: database.db, statementTimeoutMs: 400 });
    try {
      await hurried.execute({ query: 'MATCH (n:Tenant) RETURN count(*) AS n', visibility: FULL_VISIBILITY }); // the worker is up
      let ticks = 0;
      const ticking = setInterval(() => ticks++, 5);
      const refused = refusal(hurried.execute({ query: endless, visibility: FULL_VISIBILITY }));
      expect((await refused).reason).toBe('query-timeout');
      clearInterval(ticking);
      // Blocked for the 400 ms, the loop would fire the 5 ms timer once or twice; free, dozens of times.
      expect(ticks).toBeGreaterThan(15);
    } finally {
      await hurried.close();
    }
  });

  it('cuts a match past the match cap and says so', async () => {
    const capped = createGraphQueryService({ db: database.db, caps: { matchRows: 10, walkRows: 1000 } });
    try {
      const cross = await capped.execute({ query: 'MATCH (a), (b) RETURN count(*) AS n', visibility: FULL_VISIBILITY });
      expect(cross.rows).toEqual([{ n: 10 }]);
      expect(cross).toMatchObject({ truncated: true, truncatedBy: ['match-rows'] });
      const ordered = await capped.execute({ query: 'MATCH (a), (b) RETURN a.key, b.key ORDER BY a.key LIMIT 3', visibility: FULL_VISIBILITY });
      expect(ordered).toMatchObject({ rowCount: 3, truncated: true, truncatedBy: ['match-rows'] });
      // Under the cap, or stopped by LIMIT before reaching it, an answer is whole.
      expect(await capped.execute({ query: 'MATCH (n:Tenant) RETURN count(*) AS n', visibility: FULL_VISIBILITY })).toMatchObject({ rows: [{ n: 2 }], truncated: false, truncatedBy: [] });
      expect(await capped.execute({ query: 'MATCH (a), (b) RETURN a.key LIMIT 5', visibility: FULL_VISIBILITY })).toMatchObject({ rowCount: 5, truncated: false });
    } finally {
      await capped.close();
    }
  });

  it('cuts a variable-length walk past the walk cap and says so', async () => {
    const capped = createGraphQueryService({ db: database.db, caps: { matchRows: 1000, walkRows: 3 } });
    try {
      const walk = "MATCH (a {key: 'ev-1'})-[*1..5]-(b) RETURN count(*) AS n";
      const whole = await run(walk);
      expect(whole.truncated).toBe(false);
      expect(whole.rows[0]!.n).toBeGreaterThan(3);
      const cut = await capped.execute({ query: walk, visibility: FULL_VISIBILITY });
      expect(cut).toMatchObject({ rows: [{ n: 3 }], truncated: true, truncatedBy: ['walk-rows'] });
    } finally {
      await capped.close();
    }
  });

  it('answers the issue\'s stalling patterns, cut at the caps, instead of running for minutes', async () => {
    for (const query of ['MATCH (a)-[*1..5]-(b) RETURN count(*) AS n', 'MATCH (a)-[*1..5]-(b)-[*1..2]-(c) RETURN count(*) AS n', 'MATCH (a), (b), (c) RETURN count(*) AS n']) {
      const capped = createGraphQueryService({ db: database.db, caps: { matchRows: 500, walkRows: 50 } });
      try {
        const answer = await capped.execute({ query, visibility: FULL_VISIBILITY });
        expect(answer.rows[0]!.n, query).toBeLessThanOrEqual(500);
        expect(answer.truncated, query).toBe(true);
      } finally {
        await capped.close();
      }
    }
  });

  it('runs in a read-only transaction: settings, the statement, then the read of what it cut', async () => {
    const dialect = new PgDialect();
    const statements: string[] = [];
    const bind = (target: object, value: unknown) => (typeof value === 'function' ? value.bind(target) : value);
    const recordingTx = (tx: Db) =>
      new Proxy(tx, {
        get: (target, property) =>
          property === 'execute'
            ? (query: SQL) => {
                statements.push(dialect.sqlToQuery(query).sql);
                return target.execute(query);
              }
            : bind(target, Reflect.get(target, property)),
      });
    const recordingDb = new Proxy(database.db, {
      get: (target, property) =>
        property === 'transaction'
          ? (work: (tx: Db) => Promise<unknown>) => target.transaction((tx) => work(recordingTx(tx as unknown as Db)))
          : bind(target, Reflect.get(target, property)),
    });
    const probe = createGraphQueryService({ db: recordingDb, runner: createServerRunner(recordingDb, { statementTimeoutMs: 4321 }) });
    const answer = await probe.execute({ query: "MATCH (i:Incident {key: 'inc-1'})-[:CONCERNS]->(e) RETURN i.key, e.key ORDER BY e.key", visibility: FULL_VISIBILITY });
    expect(answer.rows).toEqual([{ 'i.key': 'inc-1', 'e.key': 'ev-1' }, { 'i.key': 'inc-1', 'e.key': 'ev-2' }]);
    expect(answer.nodes.map((n) => n.key)).toEqual(['inc-1', 'ev-1', 'ev-2']);
    expect(answer.edges.map((e) => e.id)).toEqual([1, 2]);
    expect(statements[0]).toMatch(/^SELECT set_config\('transaction_read_only', \$1, true\), set_config\('statement_timeout', \$2, true\)/);
    expect(statements[0]).toContain("set_config('enable_hashjoin'");
    expect(statements[0]).toContain("set_config('join_collapse_limit'");
    // The rows, and the nodes and edges of their matches, come from one statement.
    expect(statements.slice(1)).toEqual([expect.stringContaining('"graph_nodes" AS n0'), expect.stringMatching(/^SELECT current_setting\('observatory.graph_walk_cut', true\)/)]);
    statements.length = 0;
    await probe.execute({ query: 'MATCH (i:Incident) RETURN i.key', visibility: FULL_VISIBILITY });
    expect(statements[0]).toContain("set_config('enable_hashjoin'");
    expect(statements[0]).not.toContain('join_collapse_limit');
  });
});
