import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../../../test/helpers/database.ts';
import type { Database } from '../../../../platform/db/client.ts';
import { withTransaction } from '../../../../platform/db/transaction.ts';
import { FULL_VISIBILITY, type NodeKind, type Visibility } from '../../kinds.ts';
import * as graphRepo from '../../materialiser/repository.ts';
import type { NodeSpec } from '../../materialiser/sources.ts';
import { createServerRunner } from '../runner.ts';
import { createGraphQueryService, type GraphQueryService } from '../service.ts';
import { createReplicaRunner } from './replica.ts';

/**
 * The embedded database's query replica (replica.ts) answers exactly what the database itself
 * answers, after any sequence of the materialiser's writes: nodes and edges added, changed,
 * removed and brought back, in batches smaller than the changes. Run on both drivers: the replica
 * reads whichever database it is given (it is the default on PGlite only).
 */

let testDb: TestDatabase;
let database: Database;
let direct: GraphQueryService;
let replicated: GraphQueryService;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase());
  direct = createGraphQueryService({ db: database.db, runner: createServerRunner(database.db, { statementTimeoutMs: 5000 }) });
  // Batches of 3 rows: every catch-up below crosses batch boundaries.
  replicated = createGraphQueryService({ db: database.db, runner: createReplicaRunner({ db: database.db, statementTimeoutMs: 5000, batchRows: 3 }) });
});
afterAll(async () => {
  await replicated?.close();
  await testDb.drop();
});

const KINDS: NodeKind[] = ['Tenant', 'Key', 'EmpireEvent'];
const KEYS = ['a', 'b', 'c', 'd', 'e'];

type Step =
  | { op: 'node'; kind: NodeKind; key: string; weight: number; namedBy: string[] | null }
  | { op: 'edge'; from: number; to: number }
  | { op: 'remove-node'; pick: number }
  | { op: 'remove-edge'; pick: number }
  | { op: 'query' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('node' as const), kind: fc.constantFrom(...KINDS), key: fc.constantFrom(...KEYS), weight: fc.integer({ min: 0, max: 9 }), namedBy: fc.option(fc.subarray(['t1', 't2'], { minLength: 1 }), { nil: null }) }),
  fc.record({ op: fc.constant('edge' as const), from: fc.nat(), to: fc.nat() }),
  fc.record({ op: fc.constant('remove-node' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('remove-edge' as const), pick: fc.nat() }),
  fc.constant({ op: 'query' as const }),
);

let seq = 1;

async function apply(s: Step): Promise<void> {
  const db = database.db;
  const run = { seq: ++seq, at: new Date('2026-11-27T10:00:00Z') };
  await withTransaction(db, async (tx) => {
    if (s.op === 'node') {
      const spec: NodeSpec = { kind: s.kind, key: s.key, toolset: s.kind === 'Tenant' ? null : 't1', tenant: null, props: { weight: s.weight }, namedBy: s.namedBy };
      await graphRepo.writeNodes(tx, [spec], s.weight % 2 === 0 ? 'replace' : 'ensure', run);
      return;
    }
    const live = [...(await graphRepo.liveNodesOf(tx, 'Tenant')), ...(await graphRepo.liveNodesOf(tx, 'Key')), ...(await graphRepo.liveNodesOf(tx, 'EmpireEvent'))].sort((a, b) => a.id - b.id);
    if (live.length === 0) return;
    if (s.op === 'edge') {
      const [from, to] = [live[s.from % live.length]!, live[s.to % live.length]!];
      await graphRepo.writeEdges(tx, [{ kind: 'CAUSED_BY', src: from, dst: to, props: { events: 1 } }], 'merge', new Map([[`${from.kind}|${from.key}`, from.id], [`${to.kind}|${to.key}`, to.id]]), run);
    } else if (s.op === 'remove-node') {
      await graphRepo.markNodesRemoved(tx, [live[s.pick % live.length]!.id], run.seq);
    } else if (s.op === 'remove-edge') {
      const edges = await graphRepo.liveEdgesFrom(tx, live[s.pick % live.length]!.kind, ['CAUSED_BY']);
      if (edges.length > 0) await graphRepo.markEdgesRemoved(tx, [edges[s.pick % edges.length]!.id], run.seq);
    }
  });
}

const QUERIES = ['MATCH (n) RETURN n ORDER BY n.id', 'MATCH (a)-[r]->(b) RETURN a.key, r, b.key ORDER BY r.id', 'MATCH (a)-[*1..3]->(b) RETURN a.id, b.id, count(*) AS paths ORDER BY a.id, b.id'];
const BOUND: Visibility = { kinds: FULL_VISIBILITY.kinds, toolsets: ['t2'] };

async function same(): Promise<void> {
  for (const query of QUERIES) {
    for (const visibility of [FULL_VISIBILITY, BOUND]) {
      const [expected, actual] = await Promise.all([direct.execute({ query, visibility, limit: 1000 }), replicated.execute({ query, visibility, limit: 1000 })]);
      expect(actual.rows, query).toEqual(expected.rows);
      expect(actual.nodes, query).toEqual(expected.nodes);
      expect(actual.edges, query).toEqual(expected.edges);
    }
  }
}

describe('the query replica', () => {
  it('answers like the database after any sequence of graph writes', { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        for (const s of steps) {
          if (s.op === 'query') await same();
          else await apply(s);
        }
        await same();
      }),
      { numRuns: 15 },
    );
  });

  it('starts again from a full copy after a query is abandoned', async () => {
    const hurried = createGraphQueryService({ db: database.db, runner: createReplicaRunner({ db: database.db, statementTimeoutMs: 200 }) });
    try {
      // Fifteen live nodes: the eight-way product below has 15^8 combinations, and none is kept.
      for (const kind of KINDS) for (const key of KEYS) await apply({ op: 'node', kind, key, weight: 2, namedBy: null });
      const endless = "MATCH (a), (b), (c), (d), (e), (f), (g), (h) WHERE a.key = 'x' OR b.key = 'x' OR c.key = 'x' OR d.key = 'x' OR e.key = 'x' OR f.key = 'x' OR g.key = 'x' OR h.key = 'x' RETURN count(*)";
      await expect(hurried.execute({ query: endless, visibility: FULL_VISIBILITY })).rejects.toMatchObject({ reason: 'query-timeout' });
      const query = 'MATCH (n) RETURN n ORDER BY n.id';
      expect((await hurried.execute({ query, visibility: FULL_VISIBILITY, limit: 1000 })).rows).toEqual((await direct.execute({ query, visibility: FULL_VISIBILITY, limit: 1000 })).rows);
    } finally {
      await hurried.close();
    }
  });
});
