import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../src/platform/db/client.ts';
import { V1 } from '../src/platform/http/registry.ts';
import { type BenchContext, defineScenario, type Scenario } from './scenarios.ts';

/**
 * The graph query language (docs/graph/query.md, "Performance"): a two-hop pattern with LIMIT 100,
 * "the fingerprints that share a tenant with this one", over a graph of 10,000 and of 1,000,000
 * edges. Target: p95 at 1M at most 3× p95 at 10k, which holds when the query is answered by index
 * lookups that stop at the 100th row rather than by scans that grow with the graph.
 *
 * The graph is seeded straight into graph_nodes and graph_edges (as the materialiser would leave
 * it) in batches of INSERT … SELECT over generate_series: `edges / 4` fingerprints, each SEEN_ON 4
 * of 50 tenants, so a tenant is shared by `edges / 50` fingerprints and the second hop has far more
 * than 100 candidates at both sizes. Each size has its own key prefix, so the 1M graph does not
 * disturb the 10k one and a second run finds its graph already seeded.
 */

const TENANTS = 50;
const TENANTS_PER_FINGERPRINT = 4;
const BATCH = 50_000;

const QUERY_PATH = `${V1}/empire/graph/query`;

const prefixOf = (edges: number) => `bench-graph-${edges >= 1_000_000 ? `${edges / 1_000_000}m` : `${edges / 1000}k`}`;

async function seedGraph(ctx: BenchContext, edges: number): Promise<void> {
  const db = ctx.app.database.db;
  const prefix = prefixOf(edges);
  const fingerprints = Math.ceil(edges / TENANTS_PER_FINGERPRINT);
  const lastKey = `${prefix}-fp-${fingerprints - 1}`;
  const [done] = rowsOf<{ n: number }>(
    await db.execute(sql`SELECT count(*)::int AS n FROM graph_edges e JOIN graph_nodes f ON f.id = e.src WHERE f.kind = 'Fingerprint' AND f.key = ${lastKey}`),
  );
  if ((done?.n ?? 0) === TENANTS_PER_FINGERPRINT) return;

  const started = performance.now();
  await db.execute(sql`INSERT INTO graph_nodes (kind, key, toolset, tenant, props, first_run, materialised_at)
    SELECT 'Tenant', ${prefix} || '-tenant-' || i, NULL, ${prefix} || '-tenant-' || i, jsonb_build_object('name', 'Bench tenant ' || i), 0, now()
    FROM generate_series(0, ${TENANTS - 1}::int) AS i
    ON CONFLICT (kind, key) DO NOTHING`);
  for (let from = 0; from < fingerprints; from += BATCH) {
    const to = Math.min(from + BATCH, fingerprints) - 1;
    await db.execute(sql`INSERT INTO graph_nodes (kind, key, toolset, tenant, props, first_run, materialised_at)
      SELECT 'Fingerprint', ${prefix} || '-fp-' || i, NULL, NULL,
             jsonb_build_object('uaClass', (ARRAY['LIAR', 'UNVERIFIED_AGENT', 'BROWSER', 'VERIFIED_AGENT'])[1 + i % 4], 'events', i % 97), 0, now()
      FROM generate_series(${from}::int, ${to}::int) AS i
      ON CONFLICT (kind, key) DO NOTHING`);
    // Tenant offsets 0, 13, 26, 39 (mod 50) are distinct, so each fingerprint's four edges are too.
    await db.execute(sql`INSERT INTO graph_edges (kind, src, dst, props, first_run, materialised_at)
      SELECT 'SEEN_ON', f.id, t.id, jsonb_build_object('events', 1 + (i + j) % 11), 0, now()
      FROM generate_series(${from}::int, ${to}::int) AS i
      CROSS JOIN generate_series(0, ${TENANTS_PER_FINGERPRINT - 1}::int) AS j
      JOIN graph_nodes f ON f.kind = 'Fingerprint' AND f.key = ${prefix} || '-fp-' || i
      JOIN graph_nodes t ON t.kind = 'Tenant' AND t.key = ${prefix} || '-tenant-' || ((i * 7 + j * 13) % ${TENANTS}::int)
      ON CONFLICT (kind, src, dst) DO NOTHING`);
  }
  await db.execute(sql`VACUUM (ANALYZE) graph_nodes`);
  await db.execute(sql`VACUUM (ANALYZE) graph_edges`);
  process.stdout.write(
    `  (graph: ${(fingerprints * TENANTS_PER_FINGERPRINT).toLocaleString('en')} SEEN_ON edges between ${fingerprints.toLocaleString('en')} fingerprints and ${TENANTS} tenants under ${prefix} in ${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
  );
}

/** The two-hop query the scenario sends: fingerprints sharing a tenant with one fingerprint of the graph. */
export function twoHopQuery(edges: number): string {
  const prefix = prefixOf(edges);
  return `MATCH (f:Fingerprint {key: '${prefix}-fp-17'})-[:SEEN_ON]->(t:Tenant)<-[:SEEN_ON]-(other:Fingerprint) RETURN t.key AS tenant, other.key AS fingerprint LIMIT 100`;
}

function twoHopScenario(edges: number): Scenario {
  return defineScenario({
    name: `graph-query-2hop-${prefixOf(edges).replace('bench-graph-', '')}`,
    description: `POST /v1/empire/graph/query with a two-hop pattern (fingerprints sharing a tenant with one fingerprint) and LIMIT 100, over a graph of ${edges.toLocaleString('en')} SEEN_ON edges: parse, check, compile, plan and run one parameterised statement in a read-only transaction, then fetch the matched nodes and edges. Target: p95 at 1M at most 3× p95 at 10k.`,
    setupBudgetSec: edges >= 1_000_000 ? 1200 : 60,
    setup: async (ctx) => {
      await seedGraph(ctx, edges);
      // One request before the load: the answer must be 100 rows, or the scenario measures nothing.
      const answer = await ctx.api<{ rowCount: number }>('POST', QUERY_PATH, { query: twoHopQuery(edges), limit: 100 });
      if (answer.rowCount !== 100) throw new Error(`graph-query-2hop: expected 100 rows, got ${answer.rowCount}`);
    },
    request: (ctx) => ({ method: 'POST', path: QUERY_PATH, headers: ctx.adminHeaders, body: { query: twoHopQuery(edges), limit: 100 } }),
  });
}

export const graphQueryScenarios: Scenario[] = [twoHopScenario(10_000), twoHopScenario(1_000_000)];
