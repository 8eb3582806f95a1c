import { generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { App } from '../src/app.ts';
import type { ScenarioResult } from './run.ts';
import { EMPIRE_INGEST_PATH } from '../src/domains/empire/ingest/endpoints.ts';
import { type EmpireEvent, signedBytesOf } from '../src/domains/empire/ingest/service.ts';
import { loadSeedCorpus } from '../src/domains/agent-api/service.ts';
import { rowsOf } from '../src/platform/db/client.ts';
import { V1 } from '../src/platform/http/registry.ts';
import { eventCount, rebuildRollups, seedHoneypotEvents } from './honeypot-seed.ts';
import { backupVerifyScenario } from './backups.ts';
import { analyticsQueryScenarios } from './analytics-query.ts';
import { costRollupScenarios } from './cost-rollup.ts';
import { complianceEvaluateScenario } from './compliance-evaluate.ts';
import { auditScenarios } from './audit.ts';
import { regionDigestScenario } from './region-digest.ts';
import { graphMaterialiseScenarios } from './graph-materialise.ts';
import { graphQueryScenarios } from './graph-query.ts';
import { graphQueryWorstScenario } from './graph-query-worst.ts';
import { triageRunScenarios } from './triage-run.ts';
import { routerBaitScenario, routerTarpitHoldScenario } from './router.ts';
import { RAW_INSERT_SCENARIO, rawInsertScenario } from './raw-insert.ts';
import { intFromEnv } from './settings.ts';

/**
 * The benchmark scenarios `npm run bench` runs, in this order. To add one, append an object to
 * `scenarios`: a unique `name` (what BENCH_ONLY selects), a one-line `description` (printed and
 * copied into docs/performance.md by hand), an optional `setup` that prepares data before the
 * load starts, and the `request` autocannon repeats on every connection.
 *
 * The first scenario, `healthz`, is the baseline: every other scenario's throughput is reported as
 * a percentage of it (targets read "at least X% of /healthz"), so it always runs.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One HTTP request, repeated for the whole scenario. */
export interface BenchRequest {
  method: HttpMethod;
  /** Path and query, e.g. `/api/observatory/v1/tokens?limit=50`. */
  path: string;
  headers?: Record<string, string>;
  /** A string is sent as it is; anything else is sent as JSON (content-type set unless given). */
  body?: unknown;
  /**
   * Absolute path of a CommonJS module whose export autocannon calls before every request to
   * rewrite it (`(request) => request`), e.g. to sign a fresh body. It runs in the load
   * generator's worker thread, so it gets its parameters from process.env (set them in `setup`).
   */
  setupRequest?: string;
  /**
   * A fixed sequence of paths (with query) sent in turn on every connection instead of `path`,
   * each request built once (the cheap way to vary requests: nothing runs per request).
   */
  paths?: readonly string[];
}

/** What a scenario can use to prepare itself and to build its request. */
export interface BenchContext {
  /** `http://127.0.0.1:<port>` of the app under test. */
  baseUrl: string;
  /** The run's settings (BENCH_DURATION_SEC, BENCH_WARMUP_SEC, BENCH_CONNECTIONS), for scenarios that drive their own load. */
  run: { durationSec: number; warmupSec: number; connections: number };
  /** Plaintext of the admin token (every scope); the app was started with it. */
  adminToken: string;
  /** `{ authorization: 'Bearer <admin token>' }`. */
  adminHeaders: Record<string, string>;
  driver: 'pglite' | 'node-postgres';
  /** The running app, for setups that seed through services rather than HTTP. */
  app: App;
  /**
   * One request over the real socket, with the admin token unless `headers.authorization` is
   * given; throws unless the answer is 2xx. Returns the parsed JSON body (or text).
   */
  api<T = unknown>(method: HttpMethod, path: string, body?: unknown, headers?: Record<string, string>): Promise<T>;
}

export interface Scenario<S = unknown> {
  name: string;
  description: string;
  /** Runs once before the warm-up; what it returns is handed to `request` when that is a function. */
  setup?(ctx: BenchContext): Promise<S>;
  /** Seconds the setup may take beyond the usual allowance (seeding a million events). */
  setupBudgetSec?: number;
  /** Seconds of warm-up for this scenario instead of BENCH_WARMUP_SEC (a cache's steady state). */
  warmupSec?: number;
  /** Concurrent connections for this scenario instead of BENCH_CONNECTIONS (recorded in its result). */
  connections?: number;
  /** Seconds of measured load for this scenario instead of BENCH_DURATION_SEC (a soak). */
  durationSec?: number;
  /** The request autocannon repeats; absent on a one-shot `measure` scenario. */
  request?: BenchRequest | ((ctx: BenchContext, state: S) => BenchRequest);
  /**
   * A one-shot measurement instead of a load run (walk a million audit facts, snapshot and
   * restore a database): it runs once after `setup` and returns named figures (facts per second,
   * seconds to restore, peak heap bytes), which are printed and recorded with the result. A
   * scenario has either `request` or `measure`.
   */
  measure?(ctx: BenchContext, state: S): Promise<Record<string, number>>;
  /**
   * Counters read just before and just after the measured load; their differences are printed
   * and recorded with the result (cache hits, calls recorded and dropped, …).
   */
  counters?(ctx: BenchContext): Promise<Record<string, number>>;
}

/** Keeps `S` checked between a scenario's setup and its request. */
export function defineScenario<S = undefined>(scenario: Scenario<S>): Scenario {
  return scenario as Scenario;
}

export const BASELINE = 'healthz';

export const scenarios: Scenario[] = [
  defineScenario({
    name: BASELINE,
    description: 'GET /healthz: no auth, no database; the cost of Fastify, the hooks and the envelope. The baseline.',
    request: { method: 'GET', path: '/healthz' },
  }),
  defineScenario({
    name: 'tokens-list',
    description:
      'GET /v1/tokens with the admin bearer token: token lookup (hash + join on users) on every call, then the list query.',
    request: (ctx) => ({ method: 'GET', path: `${V1}/tokens`, headers: ctx.adminHeaders }),
  }),
  defineScenario({
    name: 'manifest',
    description:
      'GET /v1/manifest with the admin bearer token: token lookup, then serialising the cached manifest (every endpoint with its schemas).',
    request: (ctx) => ({ method: 'GET', path: `${V1}/manifest`, headers: ctx.adminHeaders }),
  }),
];

// Honeypot: signed ingest, and the rollup reads at two sizes (docs/performance.md, "Honeypot").

const INGEST_PATH = '/api/observatory/honeypot/ingest';
/** Events per request of `ingest-batch-100`: its events/s are req/s × this. */
const INGEST_BATCH = 100;
const SIGNED_INGEST_MODULE = fileURLToPath(new URL('./signed-ingest-request.cjs', import.meta.url));

/** A tenant created through the API, once per run; its signing secret and id. */
const benchTenants = new Map<string, { id: string; secret: string }>();
async function benchTenant(ctx: BenchContext, slug: string): Promise<{ id: string; secret: string }> {
  const known = benchTenants.get(slug);
  if (known) return known;
  const created = await ctx.api<{ tenant: { id: string }; signingSecret: string }>('POST', `${V1}/honeypot/tenants`, { slug, name: `Bench ${slug}` });
  const tenant = { id: created.tenant.id, secret: created.signingSecret };
  benchTenants.set(slug, tenant);
  return tenant;
}

function signedIngest(name: string, batch: number, description: string, connections?: number) {
  return defineScenario({
    name,
    description,
    ...(connections !== undefined ? { connections } : {}),
    setup: async (ctx) => {
      const tenant = await benchTenant(ctx, 'bench-ingest');
      // Read by signed-ingest-request.cjs in autocannon's worker (which copies the environment).
      process.env.BENCH_INGEST_TENANT = 'bench-ingest';
      process.env.BENCH_INGEST_SECRET = tenant.secret;
      process.env.BENCH_INGEST_BATCH = String(batch);
    },
    request: { method: 'POST', path: INGEST_PATH, setupRequest: SIGNED_INGEST_MODULE },
  });
}

/** Seeds `size` events over 30 days into tenant `bench-<label>` (once per run) and rebuilds the rollups. */
async function seeded(ctx: BenchContext, label: string, size: number): Promise<void> {
  const tenant = await benchTenant(ctx, `bench-${label}`);
  if ((await eventCount(ctx.app, tenant.id)) >= size) return;
  const started = performance.now();
  await seedHoneypotEvents(ctx.app, tenant.id, size);
  const seededMs = performance.now() - started;
  const total = await rebuildRollups(ctx.app);
  process.stdout.write(
    `  (seeded ${size.toLocaleString('en')} events into bench-${label} in ${(seededMs / 1000).toFixed(1)} s; ` +
      `rollups rebuilt over ${total.toLocaleString('en')} events in ${((performance.now() - started - seededMs) / 1000).toFixed(1)} s)\n`,
  );
}

function rollupRead(read: 'dashboard' | 'clusters', label: string, size: number, window: '24h' | '30d') {
  return defineScenario({
    name: `${read}-${label}-${window}`,
    description: `GET /v1/honeypot/${read}?tenant=bench-${label}&window=${window}, ${size.toLocaleString('en')} events over 30 days on file for that tenant (read from the rollups).`,
    setupBudgetSec: size >= 1_000_000 ? 900 : 60,
    setup: (ctx) => seeded(ctx, label, size),
    request: (ctx) => ({ method: 'GET', path: `${V1}/honeypot/${read}?tenant=bench-${label}&window=${window}`, headers: ctx.adminHeaders }),
  });
}

scenarios.push(
  signedIngest(
    'ingest-single',
    1,
    'POST /api/observatory/honeypot/ingest, one event per request, freshly signed with a new sender id each time: verify, classify, enrich, store, roll up, sample.',
  ),
  signedIngest(
    'ingest-single-100c',
    1,
    'The same as ingest-single with 100 connections instead of the run\'s default: a fleet of honeypots sending at once. Group commit writes the requests that wait together in one statement, so throughput grows with concurrency. Not the target\'s measurement (that is ingest-single).',
    100,
  ),
  signedIngest(
    'ingest-batch-100',
    INGEST_BATCH,
    'POST /api/observatory/honeypot/ingest, 100 events per request (events/s = req/s × 100), each with a new sender id.',
  ),
  rawInsertScenario({ tenantSlug: 'bench-ingest', scenario: 'ingest-batch-100' }),
  ...(['dashboard', 'clusters'] as const).flatMap((read) => [rollupRead(read, '10k', 10_000, '24h'), rollupRead(read, '10k', 10_000, '30d')]),
  ...(['dashboard', 'clusters'] as const).flatMap((read) => [rollupRead(read, '1m', 1_000_000, '24h'), rollupRead(read, '1m', 1_000_000, '30d')]),
);

// Public agent API: search over the seed corpus plus 100,000 generated topics (docs/performance.md, "Agent API").

const AGENT_SEARCH_MODULE = fileURLToPath(new URL('./agent-search-request.cjs', import.meta.url));
const GENERATED_TOPICS = 100_000;

/** Words of the seed corpus, most frequent first (stop words and short words left out). */
function corpusVocabulary(topics: readonly { title: string; summary: string; body: string }[]): string[] {
  const counts = new Map<string, number>();
  for (const t of topics) {
    for (const word of `${t.title} ${t.summary} ${t.body}`.toLowerCase().match(/[a-z]{4,}/g) ?? []) counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  const stop = new Set(['that', 'with', 'from', 'this', 'which', 'their', 'they', 'have', 'into', 'more', 'also', 'when', 'such', 'than', 'most', 'other', 'each', 'between']);
  return [...counts].filter(([word]) => !stop.has(word)).sort((a, b) => b[1] - a[1]).map(([word]) => word);
}

/**
 * Generates topics from the corpus vocabulary with a fixed seed (the same 100,000 every run): a
 * title of four words, a summary of twelve, a body of sixty, spread over three years.
 */
async function seedGeneratedTopics(ctx: BenchContext, vocabulary: readonly string[]): Promise<void> {
  let state = 20261124;
  const next = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
  const words = (n: number) => Array.from({ length: n }, () => vocabulary[Math.floor(next() ** 1.5 * vocabulary.length)]).join(' ');
  const categories = ['tech', 'finance', 'travel', 'health', 'facts'];
  const start = Date.parse('2023-01-01T00:00:00Z');
  for (let offset = 0; offset < GENERATED_TOPICS; offset += 1000) {
    const topics = Array.from({ length: 1000 }, (_, i) => ({
      slug: `generated-${offset + i}`,
      title: words(4),
      category: categories[(offset + i) % categories.length],
      summary: `${words(12)}.`,
      body: `${words(60)}.`,
      createdAt: new Date(start + Math.floor(next() * 3 * 365 * 86_400_000)).toISOString(),
    }));
    await ctx.api('POST', `${V1}/agent-api/topics`, { topics });
  }
}

/** Seeds the generated topics once per run; returns the corpus vocabulary the searches use. */
async function agentSearchSetup(ctx: BenchContext): Promise<string[]> {
  const vocabulary = corpusVocabulary(loadSeedCorpus()).slice(0, 2000);
  // No admin token: on the public API a bearer token that is not an agent key is refused.
  const listed = await ctx.api<{ total: number }>('GET', '/api/topics?limit=1', undefined, { authorization: '' });
  if (listed.total < GENERATED_TOPICS) {
    const started = performance.now();
    await seedGeneratedTopics(ctx, vocabulary);
    // Autovacuum would do this within a minute of the load; the bench measures the steady state.
    await ctx.app.database.db.execute(sql`VACUUM (ANALYZE) agent_topics`);
    process.stdout.write(`  (generated ${GENERATED_TOPICS.toLocaleString('en')} topics in ${((performance.now() - started) / 1000).toFixed(1)} s, then VACUUM ANALYZE)\n`);
  }
  // The writes left the search index stale: measure it rebuilt, as it serves between writes. A
  // build that lost three times to the seeding's writes leaves the next try to the revision poll
  // (once a second), so wait through a few polls, not just the builds under way.
  const searchIndex = ctx.app.agentApi.searchIndex;
  const deadline = performance.now() + 60_000;
  await searchIndex.settled();
  while (searchIndex.stats().enabled && !searchIndex.stats().ready && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    await searchIndex.settled();
  }
  const index = searchIndex.stats();
  if (index.ready) {
    const perTenThousand = (index.memoryBytes / index.topics) * 10_000;
    process.stdout.write(
      `  (search index: ${index.topics.toLocaleString('en')} topics, built in ${index.lastBuildMs} ms, ${(index.memoryBytes / 2 ** 20).toFixed(1)} MiB, ${(perTenThousand / 2 ** 20).toFixed(2)} MiB per 10,000 topics)\n`,
    );
  } else if (index.enabled) {
    throw new Error('the search index did not become ready after the topics were written');
  }
  return vocabulary;
}

/**
 * Asks every search once, four at a time, before the load. autocannon sends the same sequence on
 * every connection from its start, so during the load a search nobody had asked yet would be asked
 * by all connections at once, queued behind its one database round trip: a convoy independent
 * callers do not form. The measured load then stays within the cache's 60-s lifetime (a scenario
 * longer than about 45 s would see the catalogue expire at once).
 */
async function askEachOnce(ctx: BenchContext, paths: readonly string[]): Promise<void> {
  let next = 0;
  const asker = async () => {
    while (next < paths.length) await ctx.api('GET', paths[next++]!, undefined, { authorization: '' });
  };
  await Promise.all([asker(), asker(), asker(), asker()]);
}

async function agentCounters(ctx: BenchContext): Promise<Record<string, number>> {
  await ctx.app.agentApi.recorder.flush();
  const cache = ctx.app.agentApi.service.cacheStats();
  const recorder = ctx.app.agentApi.recorder.stats();
  const index = ctx.app.agentApi.searchIndex.stats();
  return {
    cacheHits: cache.hits,
    cacheMisses: cache.misses,
    cacheJoined: cache.joined,
    indexAnswered: index.answered,
    indexFellBack: index.fellBack,
    callsRecorded: recorder.recorded,
    callsDropped: recorder.dropped,
  };
}

const SEARCH_CATALOGUE = 1000;
/** The long tail's load, shared by its timed scenario and its soak: every request a fresh draw (bench/agent-search-request.cjs). */
const longTail = {
  setupBudgetSec: 600,
  setup: async (ctx: BenchContext) => {
    process.env.BENCH_SEARCH_WORDS = (await agentSearchSetup(ctx)).join(',');
  },
  counters: agentCounters,
  request: { method: 'GET', path: '/api/agent?query=x', setupRequest: AGENT_SEARCH_MODULE },
} satisfies Partial<Scenario<void>>;
const LONG_TAIL_SOAK = 'agent-search-long-tail-soak';
/** The soak's measured seconds: more than the 60 its peak is compared with. */
const SOAK_SEC = intFromEnv('BENCH_SOAK_SEC', 300, 90, 3600);
/** Draws of the catalogue each connection sends in turn: more than any connection sends in a run. */
const CATALOGUE_DRAWS = 50_000;
const { catalogueDraws } = createRequire(import.meta.url)(AGENT_SEARCH_MODULE) as {
  catalogueDraws(words: readonly string[], size: number, count: number): string[];
};

scenarios.push(
  defineScenario({
    name: 'agent-search',
    description: `GET /api/agent over the seed corpus plus ${GENERATED_TOPICS.toLocaleString('en')} generated topics, anonymous (the bench raises the per-minute limit): a catalogue of ${SEARCH_CATALOGUE.toLocaleString('en')} distinct searches (one or two corpus words, pages 1–3, limit 5 or 10, a category one time in five) asked with Zipf popularity, each asked once before the warm-up so that the load sees the 60-s search cache's steady state. Rate limit, search, and every call recorded as a honeypot event. The target's scenario.`,
    setupBudgetSec: 600,
    warmupSec: 5,
    setup: async (ctx) => {
      const paths = catalogueDraws(await agentSearchSetup(ctx), SEARCH_CATALOGUE, CATALOGUE_DRAWS);
      await askEachOnce(ctx, [...new Set(paths)]);
      return paths;
    },
    counters: agentCounters,
    request: (_ctx, paths: string[]) => ({ method: 'GET', path: paths[0] ?? '/api/agent?query=x', paths }),
  }),
  defineScenario({
    ...longTail,
    name: 'agent-search-long-tail',
    description: `The same corpus and call path as agent-search, but every request a fresh draw of words, pages and filters, so nearly every search misses the cache: the in-process search index answers it (PostgreSQL when the bench runs with BENCH_SEARCH_INDEX=0). Target: 10% of healthz, p99 50 ms.`,
  }),
  defineScenario({
    ...longTail,
    name: LONG_TAIL_SOAK,
    description: `agent-search-long-tail held for ${SOAK_SEC} s (BENCH_SOAK_SEC) with the server's resident memory sampled every second: its peak over the first 60 s against its peak over the whole run (target: within 10%). Every call is recorded, every search a fresh draw, so whatever the answers leave behind (caches, recorded calls, index scratch) shows as growth.`,
    durationSec: SOAK_SEC,
  }),
);

// Empire ingest: signed toolset events in batches of 100 (docs/performance.md, "Empire ingest").

const EMPIRE_MODULE = fileURLToPath(new URL('./empire-ingest-request.cjs', import.meta.url));
const EMPIRE_BATCH = 100;
/** Batches signed before the load: enough for 15,000 events/s over the warm-up and measured load. */
const empireBatchesFor = (seconds: number) => Math.ceil(((seconds + 5) * 15_000) / EMPIRE_BATCH);

async function empireEventCount(ctx: BenchContext): Promise<number> {
  const [row] = rowsOf<{ n: string }>(await ctx.app.database.db.execute(sql`SELECT count(*)::text AS n FROM empire_events WHERE toolset = 'bench-empire'`));
  return Number(row?.n ?? 0);
}

scenarios.push(
  defineScenario({
    name: 'empire-ingest-100',
    description: `POST /api/observatory/empire/ingest, ${EMPIRE_BATCH} events per request (events/s = req/s × ${EMPIRE_BATCH}), each event Ed25519-signed over its RFC 8785 bytes by the toolset's registered key and verified by the server; every event new. Bodies are signed in the setup and handed out in turn by bench/empire-ingest-request.cjs.`,
    setupBudgetSec: 120,
    setup: async (ctx) => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const publicKeyB64 = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url').toString('base64');
      const registered = await ctx.api<{ key: { id: string } }>('POST', `${V1}/provenance/keys`, { toolset: 'bench-empire', publicKeyB64 });
      const keyId = registered.key.id;
      const run = Date.now().toString(36);
      const batches = empireBatchesFor(ctx.run.durationSec + ctx.run.warmupSec);
      const lines: string[] = [];
      const types = ['crawl.started', 'crawl.page', 'crawl.done', 'alert.raised'];
      for (let b = 0; b < batches; b++) {
        const events = Array.from({ length: EMPIRE_BATCH }, (_, i) => {
          const n = b * EMPIRE_BATCH + i;
          const event: EmpireEvent = {
            id: `${run}-${n}`,
            eventType: types[n % types.length]!,
            ts: new Date(Date.now() - 60_000).toISOString(),
            tenant: 'docs-mirror',
            causedBy: i === 0 ? null : `${run}-${n - 1}`,
            payload: { url: `https://example.org/page/${n}`, status: 200, bytes: 1000 + (n % 5000) },
            keyId,
          };
          return { ...event, signatureB64: sign(null, signedBytesOf('bench-empire', event), privateKey).toString('base64') };
        });
        lines.push(JSON.stringify({ toolset: 'bench-empire', events }));
      }
      const file = path.join(os.tmpdir(), `observatory-bench-empire-${process.pid}.jsonl`);
      writeFileSync(file, lines.join('\n'));
      process.env.BENCH_EMPIRE_BODIES = file;
    },
    counters: async (ctx) => ({ eventsStored: await empireEventCount(ctx) }),
    request: (ctx) => ({
      method: 'POST',
      path: EMPIRE_INGEST_PATH,
      headers: { ...ctx.adminHeaders, 'content-type': 'application/json' },
      body: '{}',
      setupRequest: EMPIRE_MODULE,
    }),
  }),
);

scenarios.push(
  defineScenario({
    name: 'empire-lineage-1000',
    description: 'GET {v1}/empire/lineage/{eventId} of the middle event of a 1,000-event causedBy chain (500 causes upstream, 499 effects downstream): two recursive walks and ~1,000 events serialised per request.',
    setup: async (ctx) => {
      const run = `chain-${Date.now().toString(36)}`;
      const ids = new Map<string, string>();
      for (let start = 0; start < 1000; start += 500) {
        const events = Array.from({ length: 500 }, (_, i) => ({ id: `${run}-${start + i}`, eventType: 'step', causedBy: start + i === 0 ? null : `${run}-${start + i - 1}` }));
        const answer = await ctx.api<{ results: { id: string; eventId: string }[] }>('POST', EMPIRE_INGEST_PATH, { toolset: 'bench-lineage', events });
        for (const r of answer.results) ids.set(r.id, r.eventId);
      }
      return ids.get(`${run}-500`)!;
    },
    request: (ctx, eventId: string) => ({ method: 'GET', path: `${V1}/empire/lineage/${eventId}`, headers: ctx.adminHeaders }),
  }),
);

/** Events the dashboard scenarios seed: 30 days of one toolset, 8 tenants, 6 event types. */
const DASHBOARD_EVENTS = 200_000;

/** Seeds `bench-dashboard` once (fixed ids: a second run stores nothing new). */
async function seedDashboardEvents(ctx: BenchContext): Promise<void> {
  const [row] = rowsOf<{ n: string }>(await ctx.app.database.db.execute(sql`SELECT count(*)::text AS n FROM empire_events WHERE toolset = 'bench-dashboard'`));
  if (Number(row?.n ?? 0) >= DASHBOARD_EVENTS) return;
  const now = Date.now();
  // The ingest refuses ts more than 30 days old (spec D3's bound, shared by both ingests); seeding
  // over 29 days plus 23 hours leaves room for a slow seed, and still fills the 30-day window.
  const span = (30 * 24 - 1) * 3_600_000;
  const types = ['crawl.started', 'crawl.page', 'crawl.page', 'crawl.page', 'crawl.done', 'alert.raised'];
  for (let start = 0; start < DASHBOARD_EVENTS; start += 500) {
    const events = Array.from({ length: 500 }, (_, i): EmpireEvent => {
      const n = start + i;
      return {
        id: `dash-${n}`,
        eventType: types[n % types.length]!,
        ts: new Date(now - Math.floor((n / DASHBOARD_EVENTS) * span)).toISOString(),
        tenant: `tenant-${n % 8}`,
        causedBy: n % 3 === 0 ? null : `dash-${n - 1}`,
        payload: { n },
      };
    });
    await ctx.api('POST', EMPIRE_INGEST_PATH, { toolset: 'bench-dashboard', events });
  }
}

scenarios.push(
  defineScenario({
    name: 'empire-dashboard-30d',
    description: `GET {v1}/empire/{toolset}/dashboard?window=30d over a toolset with ${DASHBOARD_EVENTS.toLocaleString('en-US')} events spread over 30 days: one grouping-sets pass over every event of the window, 720 hourly buckets.`,
    setupBudgetSec: 120,
    setup: seedDashboardEvents,
    request: (ctx) => ({ method: 'GET', path: `${V1}/empire/bench-dashboard/dashboard?window=30d`, headers: ctx.adminHeaders }),
  }),
  defineScenario({
    name: 'empire-overview',
    description: 'GET {v1}/empire/overview: every toolset (loose index scan) with 7 days of hourly counts; the bench database holds the dashboard toolset and whatever earlier scenarios stored.',
    setupBudgetSec: 120,
    setup: seedDashboardEvents,
    request: (ctx) => ({ method: 'GET', path: `${V1}/empire/overview`, headers: ctx.adminHeaders }),
  }),
);

// Backups: snapshot and restore-verify at a million events (docs/backups/README.md, "Measured").
scenarios.push(backupVerifyScenario);

// Audit chain: a fact with its inclusion proof at 10k and 1M facts, and one verify walk (docs/audit-chain/README.md, "Performance").
scenarios.push(...auditScenarios);

// Knowledge graph: one incremental materialiser run after 1,000 new events with 10k and 1M events
// already materialised (docs/graph/materialiser.md), and a two-hop query with LIMIT 100 over 10k
// and 1M edges (docs/graph/query.md, "Performance").
scenarios.push(...graphMaterialiseScenarios, ...graphQueryScenarios, graphQueryWorstScenario);

// AI triage: one built-in incident-classifier pass over a 15-minute window with 10k and 1M empire
// events stored (issue 17; bench/triage-run.ts).
scenarios.push(...triageRunScenarios);

// Cost center: the rollup over 90 days of 1M cost records, by toolset and by sku of one toolset
// (docs/cost/README.md, "Performance"; bench/cost-rollup.ts).
scenarios.push(...costRollupScenarios);

// Analytics warehouse: the 90-day query over the rollups of 10k and of 1M honeypot events
// (docs/analytics/performance.md; bench/analytics-query.ts).
scenarios.push(...analyticsQueryScenarios);

// Compliance: one compliance-evaluate job run and the posture read on an almost empty database and
// with 1M honeypot events, 100k audit facts and 50k evaluations stored (target: each ≤ 2× its empty
// time; docs/performance.md, "Compliance evaluation"; bench/compliance-evaluate.ts).
scenarios.push(complianceEvaluateScenario);

// Federation: the region-digest fan-out over three local deployments against the slowest local
// digest (docs/performance.md, "Federation"; bench/region-digest.ts).
scenarios.push(regionDigestScenario);

// The honeypot router: bait pages against a bare Node server, and 10,000 tarpit-held connections
// (packages/router/README.md, "Performance"; bench/router.ts).
scenarios.push(routerBaitScenario, routerTarpitHoldScenario);

/**
 * The targets of docs/performance.md that one run can decide, printed after the scenarios: each
 * reads the figures it needs from this run's results (ratios of scenarios measured side by side),
 * or is skipped when a scenario it needs did not run.
 */
export interface Target {
  name: string;
  goal: string;
  evaluate(results: ReadonlyMap<string, ScenarioResult>): { figure: string; met: boolean } | null;
}

const pct = (n: number) => `${n.toFixed(1)}%`;

export const targets: Target[] = [
  {
    name: 'long-tail search',
    goal: 'agent-search-long-tail ≥ 10% of healthz, p99 ≤ 50 ms',
    evaluate(results) {
      const r = results.get('agent-search-long-tail');
      if (!r || r.pctOfHealthz === null) return null;
      return { figure: `${pct(r.pctOfHealthz)} of healthz, p99 ${r.latencyP99Ms} ms`, met: r.pctOfHealthz >= 10 && r.latencyP99Ms <= 50 };
    },
  },
  {
    name: 'batched signed ingest',
    goal: `ingest-batch-100 events/s ≥ 50% of ${RAW_INSERT_SCENARIO} rows/s`,
    evaluate(results) {
      const signed = results.get('ingest-batch-100');
      const raw = results.get(RAW_INSERT_SCENARIO)?.figures?.rowsPerSec;
      if (!signed || !raw) return null;
      const eventsPerSec = signed.requestsPerSec * INGEST_BATCH;
      const ratio = (eventsPerSec / raw) * 100;
      return { figure: `${Math.round(eventsPerSec).toLocaleString('en')} ÷ ${raw.toLocaleString('en')} = ${pct(ratio)}`, met: ratio >= 50 };
    },
  },
  {
    name: 'single signed event',
    goal: 'ingest-single ≥ 30% of healthz',
    evaluate(results) {
      const r = results.get('ingest-single');
      if (!r || r.pctOfHealthz === null) return null;
      return { figure: `${pct(r.pctOfHealthz)} of healthz`, met: r.pctOfHealthz >= 30 };
    },
  },
  {
    name: 'memory under load',
    goal: `${LONG_TAIL_SOAK}: peak RSS over ${SOAK_SEC} s within 10% of its peak over the first 60 s`,
    evaluate(results) {
      const samples = results.get(LONG_TAIL_SOAK)?.memory?.rssSamples;
      if (!samples || samples.length === 0) return null;
      const first = Math.max(...samples.filter(([sec]) => sec <= 60).map(([, mib]) => mib));
      const whole = Math.max(...samples.map(([, mib]) => mib));
      const growth = (whole / first - 1) * 100;
      return { figure: `${first} MiB at 60 s, ${whole} MiB at ${SOAK_SEC} s (${growth >= 0 ? '+' : ''}${pct(growth)})`, met: growth <= 10 };
    },
  },
];
