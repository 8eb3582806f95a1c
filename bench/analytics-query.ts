import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { queryDailySql, type WarehouseQuery } from '../src/domains/analytics/warehouse/repository.ts';
import { dayNumber, dayText } from '../src/platform/days.ts';
import { type Db, rowsOf } from '../src/platform/db/client.ts';
import { V1 } from '../src/platform/http/registry.ts';
import { type BenchContext, defineScenario, type Scenario } from './scenarios.ts';

/**
 * The analytics warehouse query (docs/analytics/performance.md; issue 18, "Bench scenarios"):
 * `GET {v1}/analytics/query?metric=honeypot.events&from=…&to=…&dims=workspaceId` over 90 days,
 * with 10,000 (`analytics-query-90d-10k`) and with 1,000,000 (`analytics-query-90d-1m`) honeypot
 * events behind the warehouse. Target: p95 at 1M at most 2× p95 at 10k, which holds when the query
 * reads the rollup rows of `analytics_daily` (days × tenants, the same at both sizes) and never the
 * events.
 *
 * What is stored (straight into honeypot_events, bulk INSERT … SELECT over generate_series, 100,000
 * events a statement): 20 tenants `bench-aq-00` … `bench-aq-19` (rows of honeypot_tenants, inserted
 * once), and event i of `size` belongs to tenant i mod 20 on day (i div 20) mod 90 of the 90 days
 * 2026-05-03 to 2026-08-01 (exclusive), at second (i × 7919) mod 86400 of that day. So both sizes
 * fill every one of the 20 × 90 = 1,800 (tenant, day) cells: about 5.6 events a cell at 10k, 556 at
 * 1M. The class follows a hash of i (hashint4): 10% LIAR, 15% KNOWN_LLM_AGENT, 10%
 * VERIFIED_CRAWLER, 30% BROWSER, 20% UNKNOWN_BOT, 15% UNKNOWN; user agent, vendor, proof, path,
 * ASN/country, JA4 and fingerprint follow the class and the hash plausibly; every NOT NULL column is
 * filled. received_at is the seeding time (a backfill: the ingest itself refuses event times more
 * than 30 days old), so the rollup's watermark sees the events as new. honeypot_fingerprints is not
 * filled: the rollup does not read it. The days lie months before the run so that no other
 * scenario's honeypot events (all within the last 30 days) share them.
 *
 * Between sizes: each scenario's setup deletes the events of the 20 bench tenants first (the 1M
 * scenario removes the 10k events), seeds its own, and runs the rollup; the same days are rolled
 * again and replaced whole, so the warehouse holds only the current size's rows and the query
 * (every workspace, no filter) answers 1,800 series points at both sizes.
 *
 * The rollup is the real job: `POST {v1}/ops/jobs/analytics-rollup/run` with the admin token (the
 * scheduler's own code path and run record). It runs once before seeding, to roll whatever earlier
 * scenarios left in the other sources (cost records, empire events) and move every watermark, and
 * once after seeding, timed: its duration, the honeypot-events source's days and rows, and the
 * resulting warehouse rows are printed. Then VACUUM (ANALYZE) of the tables written, as autovacuum
 * would do within a minute, and EXPLAIN ANALYZE of the warehouse statement the endpoint runs (built
 * by the repository's own `queryDailySql`).
 *
 * Four connections, as the cost rollup: an analytics query is a chart on an operator's page, not a
 * hot path.
 */

const TENANTS = 20;
const TENANT_PREFIX = 'bench-aq-';
const RANGE_DAYS = 90;
/** The day after the last seeded day (exclusive end of the queried range): fixed, so every run stores the same days. */
const END_DAY = '2026-08-01';
const FROM = dayText(dayNumber(END_DAY)! - RANGE_DAYS);
const TO = END_DAY;
const CHUNK = 100_000;
const CONNECTIONS = 4;
const JOB = 'analytics-rollup';
/** The rollup over a million events takes seconds; the bench's api() helper gives up after 10. */
const JOB_TIMEOUT_MS = 15 * 60_000;

const QUERY: WarehouseQuery = { metric: 'honeypot.events', from: FROM, to: TO, dims: ['workspaceId'], filters: {}, toolsets: null };
const QUERY_PATH = `${V1}/analytics/query?${new URLSearchParams({ metric: QUERY.metric, from: FROM, to: TO, dims: 'workspaceId' }).toString()}`;

const labelOf = (size: number) => (size >= 1_000_000 ? `${size / 1_000_000}m` : `${size / 1000}k`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function count(db: Db, query: ReturnType<typeof sql>): Promise<number> {
  const [row] = rowsOf<{ n: unknown }>(await db.execute(query));
  return Number(row?.n ?? 0);
}

/** The 20 bench tenants (inserted once), as ids in slug order. */
async function benchTenants(db: Db): Promise<string[]> {
  await db.execute(sql`
    INSERT INTO honeypot_tenants (id, slug, name, signing_secret, created_at)
    SELECT gen_random_uuid(), ${TENANT_PREFIX} || lpad(t::text, 2, '0'), 'Analytics bench tenant ' || t, md5('bench-aq-secret-' || t) || md5('salt-' || t), now()
    FROM generate_series(0, ${TENANTS - 1}::int) AS t
    ON CONFLICT (slug) DO NOTHING`);
  const rows = rowsOf<{ id: string }>(await db.execute(sql`SELECT id::text AS id FROM honeypot_tenants WHERE slug LIKE ${`${TENANT_PREFIX}%`} ORDER BY slug`));
  if (rows.length !== TENANTS) throw new Error(`analytics-query: expected ${TENANTS} bench tenants, found ${rows.length}`);
  return rows.map((r) => r.id);
}

async function seedEvents(ctx: BenchContext, size: number): Promise<{ seededMs: number; deleted: number }> {
  const db = ctx.app.database.db;
  const ids = await benchTenants(db);
  const tenantArray = sql.raw(`ARRAY[${ids.map((id) => `'${id}'`).join(',')}]::uuid[]`);
  const inBench = sql`tenant_id = ANY(${tenantArray})`;
  const started = performance.now();
  const deleted = await count(db, sql`SELECT count(*) AS n FROM honeypot_events WHERE ${inBench}`);
  if (deleted > 0) await db.execute(sql`DELETE FROM honeypot_events WHERE ${inBench}`);
  const first = `${FROM}T00:00:00.000Z`;
  for (let from = 0; from < size; from += CHUNK) {
    const to = Math.min(from + CHUNK, size) - 1;
    await db.execute(sql`
      INSERT INTO honeypot_events (id, tenant_id, sender_id, ts, received_at, method, path, query, ua_raw, ip_hash, ja4, asn, country,
        attribution_source, referer, headers, ua_class, vendor_id, proof, evidence, fingerprint_id, schema_version, body_bytes)
      SELECT gen_random_uuid(), (${tenantArray})[1 + i % ${TENANTS}::int], NULL,
        ${first}::timestamptz + ((i / ${TENANTS}::int) % ${RANGE_DAYS}::int) * interval '1 day' + ((i::bigint * 7919) % 86400) * interval '1 second',
        now(),
        CASE WHEN h % 50 = 7 THEN 'HEAD' ELSE 'GET' END,
        (ARRAY['/honeypot/topics/', '/q/', '/agents/', '/docs/'])[1 + (h / 100) % 4] || 'bait-' || ((h / 400) % 3000),
        CASE WHEN h % 20 = 3 THEN 'page=' || (1 + h % 5) ELSE NULL END,
        CASE WHEN c < 25 THEN 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ' || (ARRAY['GPTBot/1.2', 'ClaudeBot/1.0', 'PerplexityBot/1.0', 'Google-Extended/1.0'])[1 + v] || ')'
             WHEN c < 35 THEN 'Mozilla/5.0 (compatible; ' || (ARRAY['Googlebot/2.1', 'bingbot/2.0', 'Applebot/0.1', 'DuckDuckBot/1.1'])[1 + v] || ')'
             WHEN c < 65 THEN 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/' || (120 + h % 12) || '.0.0.0 Safari/537.36'
             WHEN c < 85 THEN (ARRAY['python-requests/2.31.0', 'curl/8.5.0', 'Go-http-client/2.0', 'Scrapy/2.11.0'])[1 + v]
             ELSE 'Mozilla/5.0' END,
        md5('ip-' || (h % 50000)) || md5('key-' || (h % 50000)),
        CASE WHEN c < 65 THEN 't13d' || lpad((h % 41)::text, 4, '0') || '_8daaf6152771_02713d6af862' ELSE NULL END,
        CASE WHEN h % 10 = 0 THEN NULL ELSE 1000 + h % 300 END,
        CASE WHEN h % 10 = 0 THEN NULL ELSE (ARRAY['US', 'DE', 'FR', 'GB', 'NL', 'JP', 'SG', 'IN', 'BR', 'CA'])[1 + (h / 10) % 10] END,
        CASE WHEN h % 10 = 0 THEN NULL ELSE 'geoip' END,
        CASE WHEN h % 7 = 0 THEN 'https://search.example/?q=' || (h % 100) ELSE NULL END,
        '{"accept": "text/html,*/*;q=0.8", "accept-language": "en"}'::jsonb,
        CASE WHEN c < 10 THEN 'LIAR' WHEN c < 25 THEN 'KNOWN_LLM_AGENT' WHEN c < 35 THEN 'VERIFIED_CRAWLER'
             WHEN c < 65 THEN 'BROWSER' WHEN c < 85 THEN 'UNKNOWN_BOT' ELSE 'UNKNOWN' END,
        CASE WHEN c < 25 THEN (ARRAY['openai', 'anthropic', 'perplexity', 'google'])[1 + v]
             WHEN c < 35 THEN (ARRAY['google', 'microsoft', 'apple', 'duckduckgo'])[1 + v] ELSE NULL END,
        CASE WHEN c >= 10 AND c < 35 THEN 'ip-range:' || (20 + v) || '.' || (h % 250) || '.0.0/16' ELSE NULL END,
        CASE WHEN c < 35 THEN jsonb_build_object((ARRAY['openai', 'anthropic', 'perplexity', 'google'])[1 + v], c >= 10) ELSE '{}'::jsonb END,
        left(md5('aq-fp-' || (i % ${TENANTS}::int) || '-' || (h % 400)), 16),
        1,
        CASE WHEN h % 50 = 7 THEN 0 ELSE 200 + h % 800 END
      FROM (
        SELECT i, h, h % 100 AS c, (h / 1000) % 4 AS v
        FROM (SELECT i, hashint4(i) & 1048575 AS h FROM generate_series(${from}::int, ${to}::int) AS i) hashed
      ) e`);
  }
  // As autovacuum would, but now: its pass over a million fresh rows would otherwise land in the rollup or the load.
  await db.execute(sql`VACUUM (ANALYZE) honeypot_events`);
  return { seededMs: performance.now() - started, deleted };
}

interface JobRunAnswer {
  run: { outcome: string; durationMs: number | null; errorText: string | null; stats: { sources?: Record<string, { days: number; rows: number }> } };
}

/** Runs the analytics-rollup job through the API, as an operator would; throws unless it succeeded. */
async function runRollup(ctx: BenchContext): Promise<{ wallMs: number; run: JobRunAnswer['run'] }> {
  const started = performance.now();
  const response = await fetch(`${ctx.baseUrl}${V1}/ops/jobs/${JOB}/run`, {
    method: 'POST',
    headers: { ...ctx.adminHeaders, 'content-type': 'application/json' },
    body: '{}',
    signal: AbortSignal.timeout(JOB_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ops/jobs/${JOB}/run answered ${response.status}: ${text.slice(0, 300)}`);
  const { run } = JSON.parse(text) as JobRunAnswer;
  if (run.outcome !== 'ok') throw new Error(`${JOB} ended ${run.outcome}: ${run.errorText ?? ''}`);
  return { wallMs: performance.now() - started, run };
}

interface PlanNode {
  'Node Type': string;
  Strategy?: string;
  'Parallel Aware'?: boolean;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Heap Fetches'?: number;
  Plans?: PlanNode[];
}

/** EXPLAIN ANALYZE of the statement the endpoint runs: the path through the plan, its index, heap fetches, and the time. */
async function explainQuery(db: Db): Promise<string> {
  const result = await db.execute(sql`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${queryDailySql(QUERY)}`);
  const [row] = rowsOf<Record<string, unknown>>(result);
  const raw = Object.values(row ?? {})[0];
  const [plan] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode; 'Execution Time': number; 'Planning Time': number }];
  const steps: string[] = [];
  const walk = (node: PlanNode) => {
    const kind = `${node['Parallel Aware'] ? 'Parallel ' : ''}${node.Strategy === 'Hashed' ? 'Hash' : node.Strategy === 'Sorted' ? 'Group' : ''}${node['Node Type']}`;
    const fetches = node['Heap Fetches'] !== undefined ? `, ${node['Heap Fetches'].toLocaleString('en')} heap fetches` : '';
    steps.push(`${kind}${node['Index Name'] ? ` on ${node['Index Name']}` : ''} (${((node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1)).toLocaleString('en')} rows${fetches})`);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan.Plan);
  return `${steps.join(' ← ')}; planning ${plan['Planning Time'].toFixed(1)} ms, execution ${plan['Execution Time'].toFixed(1)} ms`;
}

async function setup(ctx: BenchContext, size: number, name: string): Promise<void> {
  const db = ctx.app.database.db;
  const before = await runRollup(ctx);
  process.stdout.write(`  (${name}: catch-up rollup of what earlier scenarios left in ${seconds(before.wallMs)})\n`);

  const { seededMs, deleted } = await seedEvents(ctx, size);
  process.stdout.write(
    `  (${name}: ${size.toLocaleString('en')} honeypot events over ${TENANTS} tenants × ${RANGE_DAYS} days ${FROM} to ${TO} seeded in ${seconds(seededMs)}` +
      `${deleted > 0 ? `, after deleting the ${deleted.toLocaleString('en')} of the previous size` : ''})\n`,
  );

  const { wallMs, run } = await runRollup(ctx);
  const honeypot = run.stats.sources?.['honeypot-events'];
  const others = Object.entries(run.stats.sources ?? {})
    .filter(([source, s]) => source !== 'honeypot-events' && s.days > 0)
    .map(([source, s]) => `${source} ${s.days} days`);
  await db.execute(sql`VACUUM (ANALYZE) analytics_daily`);
  const inRange = sql`day >= ${FROM}::date AND day < ${TO}::date`;
  const events = await count(db, sql`SELECT count(*) AS n FROM analytics_daily WHERE metric = 'honeypot.events' AND ${inRange}`);
  const liars = await count(db, sql`SELECT count(*) AS n FROM analytics_daily WHERE metric = 'honeypot.liar-events' AND ${inRange}`);
  const total = await count(db, sql`SELECT count(*) AS n FROM analytics_daily`);
  process.stdout.write(
    `  (${name}: ${JOB} ran in ${run.durationMs ?? '?'} ms (${seconds(wallMs)} through the API): honeypot-events ${honeypot?.days ?? 0} days, ${(honeypot?.rows ?? 0).toLocaleString('en')} rows` +
      `${others.length > 0 ? `; also ${others.join(', ')}` : ''}. Warehouse: ${events.toLocaleString('en')} honeypot.events and ${liars.toLocaleString('en')} honeypot.liar-events rows in the range, ${total.toLocaleString('en')} rows in analytics_daily)\n`,
  );

  // One request before the load: the answer must hold every bench cell with every seeded event.
  const answer = await ctx.api<{ total: { count: number }; series: { dimWorkspaceId: string; count: number }[] }>('GET', QUERY_PATH);
  const bench = answer.series.filter((p) => p.dimWorkspaceId.startsWith(TENANT_PREFIX));
  const benchEvents = bench.reduce((sum, p) => sum + p.count, 0);
  if (bench.length !== TENANTS * RANGE_DAYS || benchEvents !== size) {
    throw new Error(`${name}: expected ${TENANTS * RANGE_DAYS} bench points summing to ${size}, got ${bench.length} summing to ${benchEvents}`);
  }
  process.stdout.write(`  (${name}: ${answer.series.length.toLocaleString('en')} series points, ${answer.total.count.toLocaleString('en')} events; plan: ${await explainQuery(db)})\n`);
}

function queryScenario(size: number): Scenario {
  const name = `analytics-query-90d-${labelOf(size)}`;
  return defineScenario({
    name,
    description: `GET /v1/analytics/query?metric=honeypot.events over ${RANGE_DAYS} days with dims=workspaceId, after the analytics-rollup job rolled ${size.toLocaleString('en')} honeypot events of ${TENANTS} tenants into the warehouse: ${(TENANTS * RANGE_DAYS).toLocaleString('en')} rollup rows read and answered at both sizes. ${CONNECTIONS} connections. Target: p95 at 1M at most 2× p95 at 10k.`,
    connections: CONNECTIONS,
    setupBudgetSec: size >= 1_000_000 ? 900 : 120,
    setup: (ctx) => setup(ctx, size, name),
    request: (ctx) => ({ method: 'GET', path: QUERY_PATH, headers: ctx.adminHeaders }),
  });
}

export const analyticsQueryScenarios: Scenario[] = [queryScenario(10_000), queryScenario(1_000_000)];
