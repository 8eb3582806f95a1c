import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { createGraphMaterialiser } from '../src/domains/graph/materialiser/service.ts';
import { rowsOf } from '../src/platform/db/client.ts';
import { systemClock } from '../src/platform/clock.ts';
import { V1 } from '../src/platform/http/registry.ts';
import { graphSources } from '../test/helpers/graph-sources.ts';
import { eventCount, seedHoneypotEvents } from './honeypot-seed.ts';
import type { BenchContext, Scenario } from './scenarios.ts';

/**
 * The knowledge-graph materialiser's incremental run (docs/graph/materialiser.md, "Performance"):
 * one run after 1,000 new honeypot events, with 10,000 and with 1,000,000 events already
 * materialised. Target: the run at 1M takes at most twice the run at 10k (a run costs what
 * changed, not what the graph or the event history holds).
 *
 * The events are seeded straight into the database (bench/honeypot-seed.ts: 2,000 fingerprints,
 * 40 JA4 clusters, 30 claimed vendors, received over the last 30 days) for one tenant; the graph
 * is then rebuilt from nothing by the materialiser itself (runs until drained), so it holds every
 * event in the database. The rebuild's `now` is a minute past the latest received_at of any stream
 * source (and past the wall clock): rows left by an earlier scenario (the 10k scenario's 1,000 new
 * events, received "in the future" of the wall clock) are read by the rebuild, not by the measured
 * run. The 1,000 new events are copies of random seeded ones with new ids, received after that
 * rebuild's cutoff and before the measured run's; the measured run must read exactly them and
 * nothing else (the scenario fails otherwise). Before the new events, one unmeasured run with
 * nothing to read warms the connection and caches, alike at both sizes.
 *
 * Honeypot events are aggregated (docs/graph/materialiser.md), so the graph itself is about the
 * same size at both sizes (≈ 2,000 fingerprints, their edges, clusters and vendors): what grows
 * with the history is the number of events read to build it and the row versions its merges left
 * in graph_nodes and graph_edges (`graphTablesBytes`). `graphNodes`/`graphEdges` are the whole
 * live graph after the measured run; the `run…` figures are the measured run's own (events it
 * read, nodes and edges it added). The scenario calls the service (the code the job runs), not HTTP.
 */

const TENANT = 'graph-bench';
const NEW_EVENTS = 1000;
const MINUTE = 60_000;
/** The 10k run's time, for the 1M scenario's ratio. */
let smallRunMs: number | null = null;

async function benchTenantId(ctx: BenchContext): Promise<string> {
  const found = async () => rowsOf<{ id: string }>(await ctx.app.database.db.execute(sql`SELECT id::text AS id FROM honeypot_tenants WHERE slug = ${TENANT}`))[0]?.id;
  const known = await found();
  if (known) return known;
  await ctx.api('POST', `${V1}/honeypot/tenants`, { slug: TENANT, name: 'Graph materialiser bench' });
  return (await found())!;
}

function materialiserFor(ctx: BenchContext) {
  return createGraphMaterialiser({
    db: ctx.app.database.db,
    clock: systemClock,
    log: pino({ level: 'silent' }),
    vendors: () => ctx.app.honeypot.registry.current.vendors,
    sources: graphSources,
  });
}

/** The latest received_at (or accepted_at) of any stream source, as epoch ms; 0 when all are empty. */
async function latestReceived(ctx: BenchContext): Promise<number> {
  const [row] = rowsOf<{ ms: unknown }>(
    await ctx.app.database.db.execute(sql`SELECT coalesce(extract(epoch FROM greatest((SELECT max(received_at) FROM honeypot_events),
      (SELECT max(received_at) FROM empire_events), (SELECT max(accepted_at) FROM provenance_attestations))) * 1000, 0)::float8 AS ms`),
  );
  return Math.ceil(Number(row?.ms ?? 0));
}

interface State {
  tenantId: string;
  /** The instant the rebuild stands for: every seeded event is received before its cutoff. */
  rebuiltAt: number;
}

function scenario(name: string, size: number): Scenario {
  return {
    name,
    description: `One graph-materialise run after ${NEW_EVENTS.toLocaleString('en')} new honeypot events, with ${size.toLocaleString('en')} events already materialised (aggregated into fingerprint, cluster and vendor nodes); target: the 1M run at most 2× the 10k run.`,
    setupBudgetSec: size >= 1_000_000 ? 1800 : 180,
    setup: async (ctx): Promise<State> => {
      const tenantId = await benchTenantId(ctx);
      const have = await eventCount(ctx.app, tenantId);
      if (have < size) await seedHoneypotEvents(ctx.app, tenantId, size - have);
      const db = ctx.app.database.db;
      // The graph from nothing, so it holds every seeded event whatever ran before.
      for (const table of ['graph_edges', 'graph_nodes', 'graph_runs', 'graph_kind_state']) await db.execute(sql`DELETE FROM ${sql.identifier(table)}`);
      // Past every row already received (an earlier scenario's new events too) and past the wall clock.
      const rebuiltAt = Math.max(Date.now(), await latestReceived(ctx)) + MINUTE + 1000;
      const materialiser = materialiserFor(ctx);
      const started = performance.now();
      let runs = 0;
      for (;;) {
        const stats = await materialiser.run(new Date(rebuiltAt), 'manual');
        runs += 1;
        if (stats.drained === true) break;
      }
      for (const table of ['graph_nodes', 'graph_edges', 'honeypot_events']) await db.execute(sql`VACUUM (ANALYZE) ${sql.identifier(table)}`);
      process.stdout.write(`  (graph rebuilt from ${(await eventCount(ctx.app, tenantId)).toLocaleString('en')} events in ${runs} runs, ${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
      return { tenantId, rebuiltAt };
    },
    measure: async (ctx, state) => {
      const { tenantId, rebuiltAt } = state as State;
      const db = ctx.app.database.db;
      const materialiser = materialiserFor(ctx);
      // Unmeasured, with nothing new to read: warms the connection and the catalog caches at both sizes alike.
      const idle = await materialiser.run(new Date(rebuiltAt + 1000), 'manual');
      if (Number(idle.honeypotEventsRead) !== 0) throw new Error(`${name}: the warm-up run read ${String(idle.honeypotEventsRead)} events after the rebuild`);
      // Received after the rebuild's cutoff (rebuiltAt − 60 s), before the measured run's.
      const receivedAt = new Date(rebuiltAt + 30_000).toISOString();
      await db.execute(sql`
        INSERT INTO honeypot_events (id, tenant_id, sender_id, ts, received_at, method, path, query, ua_raw, ip_hash, ja4, asn, country,
          attribution_source, referer, headers, ua_class, vendor_id, proof, evidence, fingerprint_id, schema_version, body_bytes)
        SELECT gen_random_uuid(), tenant_id, NULL, ts, ${receivedAt}::timestamptz, method, path, query, ua_raw, ip_hash, ja4, asn, country,
          attribution_source, referer, headers, ua_class, vendor_id, proof, evidence, fingerprint_id, schema_version, body_bytes
        FROM honeypot_events WHERE tenant_id = ${tenantId}::uuid AND received_at < ${new Date(rebuiltAt).toISOString()}::timestamptz
        ORDER BY random() LIMIT ${NEW_EVENTS}`);
      const started = performance.now();
      const stats = await materialiser.run(new Date(rebuiltAt + 2 * MINUTE), 'manual');
      const runMs = performance.now() - started;
      if (size < 1_000_000) smallRunMs = runMs;
      const read = { honeypot: Number(stats.honeypotEventsRead), empire: Number(stats.empireEventsRead), attestations: Number(stats.attestationsRead) };
      if (read.honeypot !== NEW_EVENTS || read.empire !== 0 || read.attestations !== 0) {
        throw new Error(`${name}: the measured run read ${JSON.stringify(read)}, not exactly ${NEW_EVENTS} new honeypot events`);
      }
      const [sizes] = rowsOf<{ events: unknown; bytes: unknown }>(
        await db.execute(sql`SELECT (SELECT count(*) FROM honeypot_events) AS events,
          pg_total_relation_size('graph_nodes') + pg_total_relation_size('graph_edges') AS bytes`),
      );
      return {
        runMs: Math.round(runMs),
        runEventsRead: read.honeypot,
        runNodesAdded: Number(stats.nodesAdded),
        runEdgesAdded: Number(stats.edgesAdded),
        eventsMaterialised: Number(sizes?.events ?? 0) - NEW_EVENTS,
        graphNodes: Number(stats.nodes),
        graphEdges: Number(stats.edges),
        graphTablesBytes: Number(sizes?.bytes ?? 0),
        ...(size >= 1_000_000 && smallRunMs !== null ? { ratioTo10k: Math.round((runMs / smallRunMs) * 100) / 100, withinTarget: runMs <= 2 * smallRunMs ? 1 : 0 } : {}),
      };
    },
  };
}

export const graphMaterialiseScenarios: Scenario[] = [scenario('graph-materialise-incremental-10k', 10_000), scenario('graph-materialise-incremental-1m', 1_000_000)];
