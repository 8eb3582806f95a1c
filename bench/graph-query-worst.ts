import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { sql } from 'drizzle-orm';
import { GRAPH_QUERY_TIMEOUT_MS } from '../src/domains/graph/query/service.ts';
import { rowsOf } from '../src/platform/db/client.ts';
import { V1 } from '../src/platform/http/registry.ts';
import { type BenchContext, defineScenario } from './scenarios.ts';

/**
 * `graph-query-worst` (issue 26): the graph queries that used to stall the service, sent over a
 * 10,000-node graph while /healthz is under load. Each must be answered (cut at the caps, marked
 * truncated) or refused (400) within the statement timeout, and /healthz's p99 while they run must
 * stay within 5× its p99 measured just before, with the same load generator, in the same run
 * (docs/graph/query.md, "Limits"; docs/performance.md).
 *
 * The graph is seeded straight into graph_nodes and graph_edges: 10,000 nodes of five kinds and
 * 20,000 edges between pseudo-random pairs (so walks of any direction branch about four ways at
 * every step, and `*1..5` from every node has far more paths than the caps allow).
 */

const NODES = 10_000;
const EDGES_PER_NODE = 2;
const PREFIX = 'bench-worst';
const HEALTHZ_SEC = 8;
const HEALTHZ_CONNECTIONS = 10;
/** Queries in flight at once while /healthz is measured: enough to keep the graph query path busy the whole time. */
const SENDERS = 2;

/** The patterns the issue reproduced (and what every cap and limit is there for). */
const WORST: { name: string; query: string; expect: 'truncated' | 'refused' }[] = [
  { name: 'walk5', query: 'MATCH (a)-[*1..5]-(b) RETURN count(*) AS n', expect: 'truncated' },
  { name: 'walk5walk2', query: 'MATCH (a)-[*1..5]-(b)-[*1..2]-(c) RETURN count(*) AS n', expect: 'truncated' },
  { name: 'cross3', query: 'MATCH (a),(b),(c) RETURN count(*) AS n', expect: 'truncated' },
  {
    // A cross product whose only condition spans every node, so no row is ever kept: only the timeout stops it.
    name: 'crossNeverMatching',
    query: "MATCH (a),(b),(c),(d) WHERE a.key = 'x' OR b.key = 'x' OR c.key = 'x' OR d.key = 'x' RETURN count(*) AS n",
    expect: 'refused',
  },
  { name: 'parens1900', query: `MATCH (n) WHERE ${'('.repeat(1900)}n.key = 'a'${')'.repeat(1900)} RETURN n`, expect: 'refused' },
  { name: 'nots950', query: `MATCH (n) WHERE ${'NOT '.repeat(950)}n.key = 'a' RETURN n`, expect: 'refused' },
];

async function seedGraph(ctx: BenchContext): Promise<void> {
  const db = ctx.app.database.db;
  const [done] = rowsOf<{ n: number }>(await db.execute(sql`SELECT count(*)::int AS n FROM graph_nodes WHERE key LIKE ${`${PREFIX}-%`}`));
  if ((done?.n ?? 0) >= NODES) return;
  const started = performance.now();
  await db.execute(sql`INSERT INTO graph_nodes (kind, key, toolset, tenant, props, first_run, materialised_at)
    SELECT (ARRAY['Tenant', 'Fingerprint', 'EmpireEvent', 'Key', 'Toolset'])[1 + i % 5], ${PREFIX} || '-' || i, NULL, NULL, jsonb_build_object('n', i), 0, now()
    FROM generate_series(0, ${NODES - 1}::int) AS i ON CONFLICT (kind, key) DO NOTHING`);
  // Pseudo-random pairs from two multiplicative hashes of (i, j): about EDGES_PER_NODE out and in per node.
  await db.execute(sql`INSERT INTO graph_edges (kind, src, dst, props, first_run, materialised_at)
    SELECT (ARRAY['SEEN_ON', 'CAUSED_BY', 'ABOUT'])[1 + (i + j) % 3], s.id, d.id, '{}'::jsonb, 0, now()
    FROM generate_series(0, ${NODES - 1}::int) AS i CROSS JOIN generate_series(0, ${EDGES_PER_NODE - 1}::int) AS j
    JOIN graph_nodes s ON s.key = ${PREFIX} || '-' || i
    JOIN graph_nodes d ON d.key = ${PREFIX} || '-' || ((i::bigint * 7919 + j * 104729 + 13) % ${NODES})
    WHERE s.id <> d.id
    ON CONFLICT (kind, src, dst) DO NOTHING`);
  await db.execute(sql`VACUUM (ANALYZE) graph_nodes`);
  await db.execute(sql`VACUUM (ANALYZE) graph_edges`);
  process.stdout.write(`  (graph: ${NODES.toLocaleString('en')} nodes, about ${(NODES * EDGES_PER_NODE).toLocaleString('en')} edges, in ${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}

function healthzP99(ctx: BenchContext): Promise<{ p99: number; requests: number }> {
  return new Promise((resolve, reject) => {
    autocannon({ url: `${ctx.baseUrl}/healthz`, connections: HEALTHZ_CONNECTIONS, duration: HEALTHZ_SEC, workers: 1 }, (error: unknown, result) => {
      if (error) reject(error instanceof Error ? error : new Error(String(error)));
      else resolve({ p99: result.latency.p99, requests: result.requests.total });
    });
  });
}

interface Outcome {
  status: number;
  reason: string | null;
  truncated: boolean;
  ms: number;
}

async function send(ctx: BenchContext, query: string): Promise<Outcome> {
  const started = performance.now();
  const response = await fetch(`${ctx.baseUrl}${V1}/empire/graph/query`, {
    method: 'POST',
    headers: { ...ctx.adminHeaders, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(120_000),
  });
  const body = (await response.json()) as { reason?: string; truncated?: boolean };
  return { status: response.status, reason: body.reason ?? null, truncated: body.truncated === true, ms: performance.now() - started };
}

/** Whether an answer is what the pattern must get: cut and marked, or a 400. */
function problemOf(pattern: (typeof WORST)[number], outcome: Outcome): string | null {
  if (pattern.expect === 'truncated' && !(outcome.status === 200 && outcome.truncated) && !(outcome.status === 400 && outcome.reason === 'query-timeout')) {
    return `${pattern.name}: expected a truncated answer (or 400 query-timeout), got ${outcome.status} ${outcome.reason ?? ''}`;
  }
  if (pattern.expect === 'refused' && outcome.status !== 400) return `${pattern.name}: expected 400, got ${outcome.status}`;
  return null;
}

export const graphQueryWorstScenario = defineScenario({
  name: 'graph-query-worst',
  description: `The graph queries that stalled the service (variable-length walks, cross products, a never-matching product, deep nesting) over a ${NODES.toLocaleString('en')}-node graph, ${SENDERS} at a time, while /healthz is loaded: each answered (truncated) or refused within the ${GRAPH_QUERY_TIMEOUT_MS / 1000} s statement timeout; /healthz p99 under them over its idle p99 (target at most 5).`,
  setupBudgetSec: 300,
  setup: seedGraph,
  async measure(ctx) {
    // Once each, alone: what each pattern gets and how long it takes (the first also starts the
    // embedded database's query worker and copies the graph to it).
    const alone: Record<string, number> = {};
    for (const pattern of WORST) {
      const outcome = await send(ctx, pattern.query);
      const problem = problemOf(pattern, outcome);
      if (problem) throw new Error(`graph-query-worst: ${problem}`);
      alone[`${pattern.name}Ms`] = Math.round(outcome.ms);
    }

    const idle = await healthzP99(ctx);
    let stop = false;
    let sent = 0;
    let slowestMs = 0;
    const problems: string[] = [];
    const sender = async (offset: number) => {
      for (let i = offset; !stop; i++) {
        const pattern = WORST[i % WORST.length]!;
        const outcome = await send(ctx, pattern.query);
        sent++;
        slowestMs = Math.max(slowestMs, outcome.ms);
        const problem = problemOf(pattern, outcome);
        if (problem) problems.push(problem);
      }
    };
    const senders = Array.from({ length: SENDERS }, (_, i) => sender(i));
    const loaded = await healthzP99(ctx);
    stop = true;
    await Promise.all(senders);
    if (problems.length > 0) throw new Error(`graph-query-worst: ${problems.slice(0, 5).join('; ')}`);
    // Queued behind another sender's query, a query waits up to one timeout before its own starts.
    if (slowestMs > 2 * SENDERS * GRAPH_QUERY_TIMEOUT_MS) throw new Error(`graph-query-worst: a query took ${Math.round(slowestMs)} ms`);
    return {
      ...alone,
      queriesDuringLoad: sent,
      slowestDuringLoadMs: Math.round(slowestMs),
      healthzIdleP99Ms: idle.p99,
      healthzLoadedP99Ms: loaded.p99,
      healthzP99Ratio: Math.round((loaded.p99 / Math.max(idle.p99, 1)) * 100) / 100,
      healthzIdleRequests: idle.requests,
      healthzLoadedRequests: loaded.requests,
    };
  },
});
