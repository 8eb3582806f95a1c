import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../src/platform/db/client.ts';
import { V1 } from '../src/platform/http/registry.ts';
import { type BenchContext, defineScenario, type Scenario } from './scenarios.ts';

/**
 * A built-in triage pass (docs/triage/README.md; issue 17, "Tests and speed"): `POST {v1}/empire/triage/proposals`
 * with `windowMinutes: 15`, the incident classifier on the built-in engine, over the last 15 minutes
 * with 10,000 and with 1,000,000 empire events stored. Target: p95 at 1M at most 2× p95 at 10k,
 * which holds when every read of the pass is bounded by its window (`received_at` indexes) rather
 * than by the history.
 *
 * What is stored (straight into the tables, bulk INSERT … SELECT over generate_series, as the graph
 * benches do):
 * - history: empire events until the whole empire_events table holds `size − 400` rows (rows earlier
 *   scenarios left count too), spread over the 30 days before the window, for 4 toolsets
 *   (`triage-web`, `-api`, `-db`, `-mail`) and 6 event types; a quarter of them from 3 source
 *   tenants every toolset sees, most of the rest from 3 tenants of each toolset's own, every 10th
 *   without a tenant; all received at least 20 minutes before the setup ends, so none is in the
 *   window;
 * - the window, the same at both sizes and seeded last (received 1 s to 9 min before the setup
 *   ends, so it stays inside the 15-minute window for the whole measurement): 400 empire events,
 *   200 of `triage-web` (a rate spike against its forecast) and about 67 of each other toolset, the
 *   same tenants (the 3 shared ones are cross-toolset tenants); 200 honeypot events: 160 of
 *   `triage-hp-a`, 120 of them LIAR events of 6 fingerprints (a liar flood), with one tarpit
 *   triggered, and 40 ordinary ones of `triage-hp-b`; besides, 1,000 older honeypot events of each;
 * - a forecast row per bench toolset with a baseline of 240 events an hour (60 expected in 15
 *   minutes), inserted rather than computed, so the classifier sees the same forecast at both
 *   sizes (a forecaster run over the two histories would give two baselines, hence different
 *   proposals and different work per pass). The forecast history is not what this scenario
 *   varies: each size adds one row per toolset.
 * The window events of a previous size are deleted first, so each size's window holds exactly its
 * own.
 *
 * Every pass writes a run (with its replay envelope, about 7 KB of user message) and its five
 * proposals: the spike, the flood and the three cross-toolset tenants. Only the setup's check pass
 * stores them `pending`; every pass
 * of the load proposes the same dedupe keys, so its proposals are `auto-rejected`
 * (`duplicate-of-pending`). That costs the same per pass (the same rows are written; the dedupe is
 * one lookup on the pending-key index), so the load is steady: later passes are no cheaper or
 * dearer than the first. The 1M scenario finds the 10k scenario's pending proposals and starts
 * auto-rejected from its first pass.
 *
 * Four connections: a triage pass is a job every 15 minutes or an operator's click, and the passes'
 * stores are serialised by the proposal writers' advisory lock; 20 connections would measure the
 * queue behind that lock and the shared CPU rather than a pass.
 */

const TOOLSETS = ['triage-web', 'triage-api', 'triage-db', 'triage-mail'] as const;
/** Source tenants: a quarter of the events come from tenants every toolset sees, the rest from each toolset's own. */
const SHARED_TENANTS = 3;
const OWN_TENANTS = 3;
const EVENT_TYPES = ['session.start', 'page.view', 'page.view', 'page.view', 'login.fail', 'export.done'];
const HONEYPOT_TENANTS = ['triage-hp-a', 'triage-hp-b'] as const;
const WINDOW_EVENTS = 400;
const SPIKE_EVENTS = 200;
const HONEYPOT_HISTORY = 1000;
const CHUNK = 100_000;
const CONNECTIONS = 4;
const TRIAGE_PATH = `${V1}/empire/triage/proposals`;

const toolsetArray = sql.raw(`ARRAY[${TOOLSETS.map((t) => `'${t}'`).join(',')}]`);
const typeArray = sql.raw(`ARRAY[${EVENT_TYPES.map((t) => `'${t}'`).join(',')}]`);

const labelOf = (size: number) => (size >= 1_000_000 ? `${size / 1_000_000}m` : `${size / 1000}k`);

async function count(ctx: BenchContext, query: ReturnType<typeof sql>): Promise<number> {
  const [row] = rowsOf<{ n: unknown }>(await ctx.app.database.db.execute(query));
  return Number(row?.n ?? 0);
}

/** The bench's honeypot tenants (created through the API once), by slug. */
async function honeypotTenants(ctx: BenchContext): Promise<Map<string, string>> {
  const db = ctx.app.database.db;
  const found = async () =>
    new Map(rowsOf<{ slug: string; id: string }>(await db.execute(sql`SELECT slug, id::text AS id FROM honeypot_tenants WHERE slug IN ('triage-hp-a', 'triage-hp-b')`)).map((r) => [r.slug, r.id]));
  let tenants = await found();
  for (const slug of HONEYPOT_TENANTS) if (!tenants.has(slug)) await ctx.api('POST', `${V1}/honeypot/tenants`, { slug, name: `Triage bench ${slug}` });
  tenants = await found();
  return tenants;
}

/** Empire events received between `oldestAgo` and `newestAgo` before now, `n` of them, spread over the bench toolsets and tenants. */
async function insertEmpireEvents(ctx: BenchContext, n: number, prefix: string, newestAgo: string, spanSec: number, toolsetOf: ReturnType<typeof sql>) {
  await ctx.app.database.db.execute(sql`
    INSERT INTO empire_events (event_id, toolset, sender_id, event_type, ts, tenant, caused_by, payload, event_hash, compat_mode, schema_version, received_at, body_bytes)
    SELECT gen_random_uuid(), toolset, ${prefix} || gen_random_uuid()::text, (${typeArray})[1 + (i * 7) % ${EVENT_TYPES.length}],
      received_at - (i % 5) * interval '1 second',
      CASE WHEN i % 10 = 0 THEN NULL WHEN i % 4 = 0 THEN 'tenant-' || (i / 12) % ${SHARED_TENANTS} ELSE toolset || '-tenant-' || i % ${OWN_TENANTS} END, NULL,
      jsonb_build_object('n', i, 'path', '/page/' || (i % 500)), md5(i::text), true, 1, received_at, 180 + i % 200
    FROM (SELECT i, ${toolsetOf} AS toolset, now() - ${newestAgo}::interval - random() * ${spanSec} * interval '1 second' AS received_at
      FROM generate_series(1, ${n}) AS i) g`);
}

async function insertHoneypotEvents(ctx: BenchContext, tenantId: string, n: number, liar: number, prefix: string, newestAgo: string, spanSec: number) {
  await ctx.app.database.db.execute(sql`
    INSERT INTO honeypot_events (id, tenant_id, sender_id, ts, received_at, method, path, query, ua_raw, ip_hash, ja4, asn, country,
      attribution_source, referer, headers, ua_class, vendor_id, proof, evidence, fingerprint_id, schema_version, body_bytes)
    SELECT gen_random_uuid(), ${tenantId}::uuid, ${prefix} || gen_random_uuid()::text, received_at, received_at, 'GET', '/honeypot/topics/bait-' || (i % 40), NULL,
      CASE WHEN i <= ${liar} THEN 'Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)' ELSE 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' END,
      md5(i::text || ${prefix}), 't13d' || lpad((i % 6)::text, 4, '0') || '_8daaf6152771_02713d6af862', 64500 + i % 6, 'NL', 'geoip', NULL, '{}'::jsonb,
      CASE WHEN i <= ${liar} THEN 'LIAR' ELSE 'BROWSER' END, NULL, NULL, '{}'::jsonb,
      CASE WHEN i <= ${liar} THEN 'triage-liar-' || (i % 6) ELSE 'triage-browser-' || (i % 20) END, 1, 200
    FROM (SELECT i, now() - ${newestAgo}::interval - random() * ${spanSec} * interval '1 second' AS received_at FROM generate_series(1, ${n}) AS i) g`);
}

/**
 * `ctx.api` after a long seed. PGlite runs on this thread, so seeding a million rows holds the
 * event loop for a minute or more: the server's idle-connection timeout (35 s) of the keep-alive
 * socket fetch used last is overdue and fires only once the loop turns again, which can close the
 * socket under the next call ("fetch failed"). A short pause lets it fire first; a call that still
 * finds its socket closed is sent once more.
 */
async function apiAfterSeeding<T>(ctx: BenchContext, method: 'POST', path: string, body: unknown): Promise<T> {
  await new Promise((resolve) => setTimeout(resolve, 100));
  try {
    return await ctx.api<T>(method, path, body);
  } catch (error) {
    if (!(error instanceof TypeError && error.message === 'fetch failed')) throw error;
    return ctx.api<T>(method, path, body);
  }
}

interface State {
  storedEvents: number;
  windowEvents: number;
}

async function setup(ctx: BenchContext, size: number): Promise<State> {
  const db = ctx.app.database.db;
  const started = performance.now();
  const tenants = await honeypotTenants(ctx);
  const hpA = tenants.get('triage-hp-a')!;
  const hpB = tenants.get('triage-hp-b')!;

  // The previous size's window goes; its history stays (the 1M history tops up the 10k one).
  await db.execute(sql`DELETE FROM empire_events WHERE toolset = ANY(${toolsetArray}) AND sender_id LIKE 'win-%'`);
  await db.execute(sql`DELETE FROM honeypot_events WHERE tenant_id IN (${hpA}::uuid, ${hpB}::uuid) AND sender_id LIKE 'win-%'`);
  await db.execute(sql`DELETE FROM honeypot_tarpits WHERE tenant_id = ${hpA}::uuid`);

  const have = await count(ctx, sql`SELECT count(*) AS n FROM empire_events`);
  const missing = size - WINDOW_EVENTS - have;
  // History: received over the 30 days before 20 minutes ago (the window is the last 15).
  for (let done = 0; done < missing; done += CHUNK) {
    await insertEmpireEvents(ctx, Math.min(CHUNK, missing - done), 'hist-', '20 minutes', 30 * 86_400, sql`(${toolsetArray})[1 + i % ${TOOLSETS.length}]`);
  }
  if ((await count(ctx, sql`SELECT count(*) AS n FROM honeypot_events WHERE tenant_id = ${hpA}::uuid AND sender_id LIKE 'hist-%'`)) === 0) {
    await insertHoneypotEvents(ctx, hpA, HONEYPOT_HISTORY, 250, 'hist-', '20 minutes', 30 * 86_400);
    await insertHoneypotEvents(ctx, hpB, HONEYPOT_HISTORY, 0, 'hist-', '20 minutes', 30 * 86_400);
  }
  const seededMs = performance.now() - started;
  // As autovacuum would, but now (the planner needs the new rows' statistics; a vacuum mid-load would skew the figures).
  await db.execute(sql`VACUUM (ANALYZE) empire_events`);
  await db.execute(sql`VACUUM (ANALYZE) honeypot_events`);

  // The forecast the classifier compares with: 240 an hour for every bench toolset.
  await db.execute(sql`
    INSERT INTO empire_forecasts (id, run_id, toolset, score, level, direction, details, computed_at)
    SELECT gen_random_uuid(), '00000000-0000-4000-8000-00000000b7a6'::uuid, t, 0.1, 'none', 'surge',
      jsonb_build_object('z', 0.2, 'recentMean', 250, 'baselineMean', 240, 'scale', 20), now()
    FROM unnest(${toolsetArray}) AS t`);

  // The window, last: 200 events of triage-web (3.3× the 60 expected), 200 over the other three.
  await insertEmpireEvents(ctx, SPIKE_EVENTS, 'win-', '1 second', 9 * 60, sql`${TOOLSETS[0]}::text`);
  await insertEmpireEvents(ctx, WINDOW_EVENTS - SPIKE_EVENTS, 'win-', '1 second', 9 * 60, sql`(${toolsetArray})[2 + i % ${TOOLSETS.length - 1}]`);
  await insertHoneypotEvents(ctx, hpA, 160, 120, 'win-', '1 second', 9 * 60);
  await insertHoneypotEvents(ctx, hpB, 40, 0, 'win-', '1 second', 9 * 60);
  await db.execute(sql`
    INSERT INTO honeypot_tarpits (id, tenant_id, fingerprint_id, triggered_at, expires_at, delay_ms, reason, liar_event_count, active, ended_at)
    VALUES (gen_random_uuid(), ${hpA}::uuid, 'triage-liar-1', now() - interval '3 minutes', now() + interval '57 minutes', 5000, 'liar-threshold', 5, false, now())`);

  const storedEvents = await count(ctx, sql`SELECT count(*) AS n FROM empire_events`);
  const windowEvents = await count(ctx, sql`SELECT count(*) AS n FROM empire_events WHERE received_at >= now() - interval '15 minutes'`);
  const windowHoneypot = await count(ctx, sql`SELECT count(*) AS n FROM honeypot_events WHERE received_at >= now() - interval '15 minutes'`);

  // One pass before the load: it must see the window and propose, or the scenario measures nothing.
  const check = await apiAfterSeeding<{ proposalCount: number; autoRejected: number; runId: string }>(ctx, 'POST', TRIAGE_PATH, { windowMinutes: 15 });
  const proposals = check.proposalCount + check.autoRejected;
  if (proposals === 0) throw new Error(`triage-run-${labelOf(size)}: the check pass proposed nothing`);
  const [envelope] = rowsOf<{ bytes: unknown }>(await db.execute(sql`SELECT octet_length(user_message) AS bytes FROM triage_runs WHERE id = ${check.runId}::uuid`));
  const subjects = rowsOf<{ subject: string }>(await db.execute(sql`SELECT split_part(title, ' — ', 1) AS subject FROM triage_proposals WHERE run_id = ${check.runId}::uuid ORDER BY title`));
  process.stdout.write(
    `  (triage: ${storedEvents.toLocaleString('en')} empire events stored (${Math.max(0, missing).toLocaleString('en')} seeded in ${(seededMs / 1000).toFixed(1)} s), ` +
      `${windowEvents.toLocaleString('en')} of them and ${windowHoneypot.toLocaleString('en')} honeypot events in the last 15 min; ` +
      `check pass: ${check.proposalCount} pending + ${check.autoRejected} auto-rejected (${subjects.map((r) => r.subject).join('; ')}), user message ${Number(envelope?.bytes ?? 0).toLocaleString('en')} bytes)\n`,
  );
  return { storedEvents, windowEvents };
}

function scenario(size: number): Scenario {
  return defineScenario<State>({
    name: `triage-run-${labelOf(size)}`,
    description: `POST /v1/empire/triage/proposals {windowMinutes: 15}: one built-in incident-classifier pass (window reads, forecasts, open incidents, evidence check, run and proposals stored) with ${size.toLocaleString('en')} empire events stored and 400 empire + 200 honeypot events in the window; ${CONNECTIONS} connections. Target: p95 at 1M at most 2× p95 at 10k.`,
    setupBudgetSec: size >= 1_000_000 ? 1200 : 120,
    connections: CONNECTIONS,
    setup: (ctx) => setup(ctx, size),
    counters: async (ctx) => ({
      runsStored: await count(ctx, sql`SELECT count(*) AS n FROM triage_runs WHERE agent = 'incident-classifier'`),
      proposalsPending: await count(ctx, sql`SELECT count(*) AS n FROM triage_proposals WHERE status = 'pending'`),
      proposalsAutoRejected: await count(ctx, sql`SELECT count(*) AS n FROM triage_proposals WHERE status = 'auto-rejected'`),
    }),
    request: (ctx) => ({ method: 'POST', path: TRIAGE_PATH, headers: ctx.adminHeaders, body: { windowMinutes: 15 } }),
  });
}

export const triageRunScenarios: Scenario[] = [scenario(10_000), scenario(1_000_000)];
