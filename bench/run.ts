/**
 * `npm run bench`: starts the app in this process on a throwaway database, listens on a real
 * loopback socket, and drives each scenario of bench/scenarios.ts with autocannon, one after
 * another, each for a fixed time after a short warm-up. Prints one line per scenario, writes
 * bench/results/latest.json and bench/results/<stamp>-<driver>.json, and exits 1 when any scenario
 * saw a connection error or a non-2xx answer. See docs/performance.md.
 *
 * Environment:
 *   DATABASE_URL        a PostgreSQL server: a fresh database is created on it and dropped at the
 *                       end; unset, the app runs on PGlite in a new data directory (DATA_DIR) under
 *                       the system temporary directory, removed at the end
 *   BENCH_DURATION_SEC  seconds of measured load per scenario (default 10)
 *   BENCH_WARMUP_SEC    seconds of unmeasured load before each scenario (default 2; 0 = none)
 *   BENCH_CONNECTIONS   concurrent keep-alive connections (default 20)
 *   BENCH_WORKERS       worker threads in the load generator's own process (default 0: its main
 *                       thread); the load generator is always a forked process, so this process's
 *                       resident memory is the server's
 *   BENCH_PGLITE        without DATABASE_URL: `disk` (default) as above, or `memory`, the in-memory
 *                       PGlite earlier runs used (faster, but every stored row counts as RSS)
 *   BENCH_SOAK_SEC      measured seconds of agent-search-long-tail-soak (default 300)
 *   BENCH_ONLY          comma-separated scenario names; the healthz baseline always runs too
 *   DB_POOL_MAX         passed to the app as it is (node-postgres pool size, default 10)
 *   OBSERVATORY_GRAPH_QUERY_CONCURRENCY, OBSERVATORY_MODEL_CALL_CONCURRENCY  passed to the app;
 *                       default the most connections any selected scenario uses (the app's own
 *                       defaults of 4 and 2 would answer 503)
 *   BENCH_SEARCH_INDEX  passed to the app as OBSERVATORY_SEARCH_INDEX; `0` measures the agent
 *                       searches in PostgreSQL
 *   BENCH_AGENT_API_TENANT  passed to the app as OBSERVATORY_AGENT_API_TENANT; `off` measures the
 *                       agent API without recording its calls (what recording costs)
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createLogger } from '../src/platform/logger.ts';
import { type App, createApp } from '../src/app.ts';
import { loadConfig } from '../src/platform/config.ts';
import { createTestDatabase, type TestDatabase } from '../test/helpers/database.ts';
import { BASELINE, type BenchContext, type BenchRequest, type Scenario, scenarios, targets } from './scenarios.ts';
import { BenchError, choiceFromEnv, intFromEnv } from './settings.ts';

const ADMIN_TOKEN = 'svctok_benchadmintokenbenchadmintokenbenchadmin00';
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

interface Settings {
  durationSec: number;
  warmupSec: number;
  connections: number;
  workers: number;
  /** Where PGlite keeps the database when DATABASE_URL is unset. */
  pglite: 'disk' | 'memory';
  selected: Scenario[];
}

function readSettings(): Settings {
  const only = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const known = new Set(scenarios.map((s) => s.name));
  const unknown = only.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new BenchError(`BENCH_ONLY names unknown scenarios: ${unknown.join(', ')} (known: ${[...known].join(', ')})`);
  }
  const wanted = new Set(only);
  return {
    durationSec: intFromEnv('BENCH_DURATION_SEC', 10, 1, 3600),
    warmupSec: intFromEnv('BENCH_WARMUP_SEC', 2, 0, 600),
    connections: intFromEnv('BENCH_CONNECTIONS', 20, 1, 10_000),
    workers: intFromEnv('BENCH_WORKERS', 0, 0, 64),
    pglite: choiceFromEnv('BENCH_PGLITE', ['disk', 'memory']),
    selected: scenarios.filter((s) => s.name === BASELINE || wanted.size === 0 || wanted.has(s.name)),
  };
}

export interface ScenarioResult {
  name: string;
  description: string;
  method: string;
  path: string;
  /** Concurrent connections the load generator kept open. */
  connections: number;
  requestsPerSec: number;
  latencyP50Ms: number;
  latencyP90Ms: number;
  latencyP95Ms: number;
  latencyP99Ms: number;
  latencyMeanMs: number;
  latencyMaxMs: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  totalRequests: number;
  /** Wall time autocannon measured over (its worker mode runs about a second longer than asked). */
  measuredSec: number;
  statusCodes: Record<string, number>;
  /**
   * Share of the measured time the server's event loop was busy (0–1). Near 1: the app is bound
   * by its own thread (JS, PGlite); well below 1: it waits (database round trips, pool). Includes
   * the load generator when BENCH_WORKERS=0.
   */
  serverEventLoopUtilization: number;
  /**
   * CPU time of this process (every thread; on PGlite the database too, on PostgreSQL not) per
   * request over the measured load, in µs; null for a measure scenario. Steadier than req/s on a
   * busy machine: it counts the work a request costs, not how much of the machine the run got.
   */
  serverCpuUsPerRequest: number | null;
  /** This scenario's mean req/s over the healthz scenario's in the same run; null without one. */
  pctOfHealthz: number | null;
  warmup: { totalRequests: number; non2xx: number; errors: number } | null;
  /** The scenario's counters over the measured load (after minus before), if it has any. */
  counters: Record<string, number> | null;
  /** What a one-shot `measure` scenario returned (its load fields are then zero); null otherwise. */
  figures: Record<string, number> | null;
  /** The server's memory during the measured load (this process: the load generator runs in its own). */
  memory: MemoryRecord | null;
}

/** Resident memory and V8 heap sampled every second of a measured load, in MiB. */
export interface MemoryRecord {
  rssStartMiB: number;
  rssPeakMiB: number;
  rssEndMiB: number;
  heapUsedPeakMiB: number;
  /** `[second, rss MiB]` every second from the start of the load. */
  rssSamples: [number, number][];
}

const MIB = 2 ** 20;

/** Samples this process's memory once a second until `stop()`; what a scenario's load did to the server. */
function sampleMemory(): { stop(): MemoryRecord } {
  const started = performance.now();
  const samples: [number, number][] = [];
  let heapUsedPeak = 0;
  const take = () => {
    const usage = process.memoryUsage();
    heapUsedPeak = Math.max(heapUsedPeak, usage.heapUsed);
    samples.push([round((performance.now() - started) / 1000, 1), round(usage.rss / MIB, 1)]);
  };
  take();
  const timer = setInterval(take, 1000);
  return {
    stop() {
      clearInterval(timer);
      take();
      const rss = samples.map(([, mib]) => mib);
      return {
        rssStartMiB: rss[0]!,
        rssPeakMiB: Math.max(...rss),
        rssEndMiB: rss[rss.length - 1]!,
        heapUsedPeakMiB: round(heapUsedPeak / MIB, 1),
        rssSamples: samples,
      };
    },
  };
}

const LOAD_GENERATOR = fileURLToPath(new URL('./load-generator.cjs', import.meta.url));

let current: ChildProcess | null = null;
let abortCurrent: ((error: Error) => void) | null = null;

/**
 * One bounded autocannon run in a forked load generator (bench/load-generator.cjs), so this
 * process's resident memory is the server's; `stopAll` can cut it short. The child inherits the
 * environment as it is now (a scenario's setup passes its request module parameters that way).
 */
function cannon(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const child = fork(LOAD_GENERATOR, [], { execArgv: [], env: process.env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let settled = false;
    const settle = (error: Error | null, result?: autocannon.Result) => {
      if (settled) return;
      settled = true;
      current = null;
      abortCurrent = null;
      if (error) reject(error);
      else resolve(result!);
    };
    current = child;
    abortCurrent = (error) => {
      child.kill();
      settle(error);
    };
    child.on('message', (reply: { result?: autocannon.Result; error?: string }) => {
      settle(reply.error !== undefined ? new BenchError(`load generator: ${reply.error}`) : null, reply.result);
    });
    child.on('error', (error) => settle(error));
    child.on('exit', (code) => settle(new BenchError(`the load generator exited (${code}) without a result`)));
    child.send({ options });
  });
}

function stopAll(reason: string): void {
  current?.send('stop');
  abortCurrent?.(new BenchError(reason));
  current = null;
  abortCurrent = null;
}

function toCannonOptions(baseUrl: string, request: BenchRequest, settings: Settings, durationSec: number, connections: number): autocannon.Options {
  const headers: Record<string, string> = { ...(request.headers ?? {}) };
  let body: string | undefined;
  if (request.body !== undefined) {
    body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  }
  return {
    url: `${baseUrl}${request.path}`,
    method: request.method,
    headers,
    ...(body !== undefined ? { body } : {}),
    connections,
    duration: durationSec,
    timeout: 10,
    ...(settings.workers > 0 ? { workers: settings.workers } : {}),
    // A module path (autocannon loads it in each worker): it rewrites every request before it is sent.
    ...(request.setupRequest ? { requests: [{ setupRequest: request.setupRequest }] } : {}),
    ...(request.paths ? { requests: request.paths.map((path) => ({ method: request.method, path })) } : {}),
  };
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

function statusCounts(result: autocannon.Result): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) out[code] = stat.count ?? 0;
  return out;
}

function formatLine(r: ScenarioResult): string {
  if (r.figures) {
    const figures = Object.entries(r.figures).map(([name, value]) => `${name} ${value.toLocaleString('en')}`);
    return [r.name.padEnd(18), `measured once in ${r.measuredSec.toFixed(1)} s:`, ...figures].join('  ');
  }
  const pct = r.pctOfHealthz === null ? '—' : `${r.pctOfHealthz.toFixed(1)}%`;
  return [
    r.name.padEnd(18),
    `${r.requestsPerSec.toFixed(0).padStart(8)} req/s`,
    `p50 ${r.latencyP50Ms.toFixed(2).padStart(7)} ms`,
    `p95 ${r.latencyP95Ms.toFixed(2).padStart(7)} ms`,
    `p99 ${r.latencyP99Ms.toFixed(2).padStart(7)} ms`,
    `non-2xx ${String(r.non2xx).padStart(5)}`,
    `errors ${String(r.errors).padStart(5)}`,
    `${pct.padStart(7)} of healthz`,
    `loop busy ${(r.serverEventLoopUtilization * 100).toFixed(0).padStart(3)}%`,
    ...(r.serverCpuUsPerRequest !== null ? [`cpu/req ${String(r.serverCpuUsPerRequest).padStart(6)} µs`] : []),
    ...(r.memory ? [`rss ${r.memory.rssPeakMiB.toFixed(0)} MiB`] : []),
  ].join('  ');
}

async function runScenario(
  scenario: Scenario,
  ctx: BenchContext,
  settings: Settings,
  baseline: number | null,
): Promise<ScenarioResult> {
  const state = scenario.setup ? await scenario.setup(ctx) : undefined;
  if (scenario.measure) return measureOnce(scenario, ctx, state);
  if (!scenario.request) throw new BenchError(`scenario ${scenario.name} has neither request nor measure`);
  const request = typeof scenario.request === 'function' ? scenario.request(ctx, state) : scenario.request;
  const connections = scenario.connections ?? settings.connections;

  let warmup: ScenarioResult['warmup'] = null;
  const warmupSec = settings.warmupSec > 0 ? (scenario.warmupSec ?? settings.warmupSec) : 0;
  if (warmupSec > 0) {
    const w = await cannon(toCannonOptions(ctx.baseUrl, request, settings, warmupSec, connections));
    warmup = { totalRequests: w.requests.total, non2xx: w.non2xx, errors: w.errors };
  }
  const countersBefore = scenario.counters ? await scenario.counters(ctx) : null;
  const eluBefore = performance.eventLoopUtilization();
  const cpuBefore = process.cpuUsage();
  const memory = sampleMemory();
  let memoryRecord: MemoryRecord;
  let r: autocannon.Result;
  try {
    r = await cannon(toCannonOptions(ctx.baseUrl, request, settings, scenario.durationSec ?? settings.durationSec, connections));
  } finally {
    memoryRecord = memory.stop();
  }
  const elu = performance.eventLoopUtilization(eluBefore).utilization;
  const cpu = process.cpuUsage(cpuBefore);
  let counters: Record<string, number> | null = null;
  if (scenario.counters && countersBefore) {
    const after = await scenario.counters(ctx);
    counters = Object.fromEntries(Object.entries(after).map(([name, value]) => [name, value - (countersBefore[name] ?? 0)]));
  }
  const requestsPerSec = r.requests.mean;
  return {
    name: scenario.name,
    description: scenario.description,
    method: request.method,
    path: request.path,
    connections,
    requestsPerSec: round(requestsPerSec),
    latencyP50Ms: r.latency.p50,
    latencyP90Ms: r.latency.p90,
    latencyP95Ms: (r.latency as unknown as Record<string, number>).p95 ?? Number.NaN,
    latencyP99Ms: r.latency.p99,
    latencyMeanMs: round(r.latency.mean),
    latencyMaxMs: r.latency.max,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    totalRequests: r.requests.total,
    measuredSec: r.duration,
    statusCodes: statusCounts(r),
    serverEventLoopUtilization: round(elu),
    serverCpuUsPerRequest: r.requests.total > 0 ? Math.round((cpu.user + cpu.system) / r.requests.total) : null,
    pctOfHealthz:
      scenario.name === BASELINE ? 100 : baseline !== null && baseline > 0 ? round((requestsPerSec / baseline) * 100, 1) : null,
    warmup,
    counters,
    figures: null,
    memory: memoryRecord,
  };
}

/** Runs a `measure` scenario once; its load fields are zero and its figures carry the result. */
async function measureOnce(scenario: Scenario, ctx: BenchContext, state: unknown): Promise<ScenarioResult> {
  const eluBefore = performance.eventLoopUtilization();
  const started = performance.now();
  const figures = await scenario.measure!(ctx, state);
  const measuredSec = (performance.now() - started) / 1000;
  return {
    name: scenario.name,
    description: scenario.description,
    method: 'MEASURE',
    path: '',
    connections: 0,
    requestsPerSec: 0,
    latencyP50Ms: 0,
    latencyP90Ms: 0,
    latencyP95Ms: 0,
    latencyP99Ms: 0,
    latencyMeanMs: 0,
    latencyMaxMs: 0,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    totalRequests: 0,
    measuredSec: round(measuredSec),
    statusCodes: {},
    serverEventLoopUtilization: round(performance.eventLoopUtilization(eluBefore).utilization),
    serverCpuUsPerRequest: null,
    pctOfHealthz: null,
    warmup: null,
    counters: null,
    figures,
    memory: null,
  };
}

function machine() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpuCount: cpus.length,
    totalMemoryBytes: os.totalmem(),
    totalMemoryGiB: round(os.totalmem() / 1024 ** 3, 1),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    /** 1-minute load average when the run started: other work on the machine skews the figures. */
    loadAverage1mAtStart: round(os.loadavg()[0] ?? 0),
  };
}

function makeContext(baseUrl: string, app: App, settings: Settings): BenchContext {
  const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` };
  return {
    baseUrl,
    run: { durationSec: settings.durationSec, warmupSec: settings.warmupSec, connections: settings.connections },
    adminToken: ADMIN_TOKEN,
    adminHeaders,
    driver: app.database.driver,
    app,
    async api<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          ...adminHeaders,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await response.text();
      if (!response.ok) throw new BenchError(`setup call ${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
      try {
        return JSON.parse(text) as T;
      } catch {
        return text as T;
      }
    },
  };
}

/** The commit the app was built from, when run inside a git checkout (read-only). */
function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: RESULTS_DIR, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

/** Bounded clean-up: a hung close must not keep the process alive. */
async function withTimeout(label: string, ms: number, work: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      work(),
      new Promise<void>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${label} took longer than ${ms} ms`)), ms);
      }),
    ]);
  } catch (error) {
    process.stderr.write(`bench: ${label} failed: ${error instanceof Error ? error.message : String(error)}\n`);
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<number> {
  const settings = readSettings();
  const started = new Date();

  // A hard ceiling on the whole run, so a hung setup or database never keeps it going.
  const setupBudgetSec = settings.selected.reduce((sum, s) => sum + (s.setupBudgetSec ?? 0), 0);
  const longerSec = settings.selected.reduce((sum, s) => sum + Math.max(0, (s.durationSec ?? 0) - settings.durationSec), 0);
  const budgetMs = (settings.selected.length * (settings.durationSec + settings.warmupSec + 30) + setupBudgetSec + longerSec + 120) * 1000;
  const watchdog = setTimeout(() => {
    process.stderr.write(`bench: still running after ${budgetMs / 1000} s; giving up\n`);
    stopAll('watchdog');
    setTimeout(() => process.exit(1), 15_000).unref();
  }, budgetMs);
  watchdog.unref();

  let interrupted = false;
  const onSignal = (signal: string) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(`\nbench: ${signal}; stopping and cleaning up (again to force)\n`);
    stopAll(`interrupted by ${signal}`);
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  let testDb: TestDatabase | null = null;
  let dataDir: string | null = null;
  let app: App | null = null;
  try {
    // A fresh database: on the DATABASE_URL server a new one, dropped below. Otherwise PGlite in a
    // new data directory on disk, removed below, as `npm start` runs it (DATA_DIR): in memory, every
    // row stored would live in this process's memory and its resident-memory figures would be the
    // data's, not the service's.
    // BENCH_PGLITE=memory keeps the old in-memory run, to compare.
    if (process.env.DATABASE_URL || settings.pglite === 'memory') testDb = await createTestDatabase();
    else dataDir = mkdtempSync(join(os.tmpdir(), 'observatory-bench-'));
    const config = loadConfig({
      LOG_LEVEL: 'warn',
      OBSERVATORY_SCHEDULER: '0',
      OBSERVATORY_ADMIN_TOKEN: ADMIN_TOKEN,
      OBSERVATORY_PUBLIC_URL: 'http://127.0.0.1:8080',
      // The agent-search scenario calls from one IP far beyond the public limits of 20 a minute
      // per (IP, agent_name) and 120 a minute per IP.
      OBSERVATORY_AGENT_API_ANON_PER_MINUTE: '1000000000',
      OBSERVATORY_AGENT_API_IP_PER_MINUTE: '1000000000',
      ...(process.env.BENCH_AGENT_API_TENANT ? { OBSERVATORY_AGENT_API_TENANT: process.env.BENCH_AGENT_API_TENANT } : {}),
      ...(process.env.BENCH_SEARCH_INDEX ? { OBSERVATORY_SEARCH_INDEX: process.env.BENCH_SEARCH_INDEX } : {}),
      HOST: '127.0.0.1',
      PORT: '0',
      ...(testDb?.url ? { DATABASE_URL: testDb.url } : {}),
      ...(dataDir ? { DATA_DIR: dataDir } : {}),
      ...(process.env.DB_POOL_MAX ? { DB_POOL_MAX: process.env.DB_POOL_MAX } : {}),
      // Graph queries have their own work slots (default 4, 503 `overloaded` beyond); the
      // graph-query scenarios send from every connection at once, so the bench gives one slot a
      // connection and measures queueing for the database pool rather than refusals.
      OBSERVATORY_GRAPH_QUERY_CONCURRENCY: process.env.OBSERVATORY_GRAPH_QUERY_CONCURRENCY ?? String(Math.max(settings.connections, ...settings.selected.map((s) => s.connections ?? 0))),
      // Triage runs draw on the model-call pool (default 2, 503 `overloaded` beyond); the triage
      // scenarios measure a pass's reads and writes, so every connection gets a slot, as above.
      OBSERVATORY_MODEL_CALL_CONCURRENCY: process.env.OBSERVATORY_MODEL_CALL_CONCURRENCY ?? String(Math.max(settings.connections, ...settings.selected.map((s) => s.connections ?? 0))),
      // Ingest requests have work slots too (default 64, 503 `overloaded` beyond): ingest-single-100c
      // measures what group commit makes of 100 senders at once, so each connection gets a slot.
      // Refusing past the cap is the concurrency tests' subject, not the bench's.
      OBSERVATORY_INGEST_CONCURRENCY: process.env.OBSERVATORY_INGEST_CONCURRENCY ?? String(Math.max(64, settings.connections, ...settings.selected.map((s) => s.connections ?? 0))),
    });
    // The app opens its own storage, as in production (on a server a pool sized by DB_POOL_MAX,
    // on disk PGlite in DATA_DIR); only the in-memory PGlite is opened here, by the test helper.
    const database = testDb && !testDb.url ? await testDb.open() : undefined;
    app = await createApp({ config, ...(database ? { database } : {}), logger: createLogger(config.logLevel) });
    await app.server.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.server.address();
    if (address === null || typeof address === 'string') throw new BenchError('the server did not bind a TCP port');
    const baseUrl = `http://127.0.0.1:${address.port}`;
    const ctx = makeContext(baseUrl, app, settings);
    const driver = app.database.driver;

    const m = machine();
    process.stdout.write(
      `Observatory bench — driver ${driver}${driver === 'pglite' ? ` (${settings.pglite === 'disk' ? 'on disk' : 'in memory'})` : ''}, ${settings.durationSec} s per scenario after ${settings.warmupSec} s warm-up, ` +
        `${settings.connections} connections, load generator in its own process${settings.workers === 0 ? '' : ` with ${settings.workers} worker thread(s)`}\n` +
        `${m.cpuCount} × ${m.cpuModel}, ${m.totalMemoryGiB} GiB, Node ${m.node}, load average ${m.loadAverage1mAtStart}; server at ${baseUrl}\n\n`,
    );

    const results: ScenarioResult[] = [];
    let baseline: number | null = null;
    for (const scenario of settings.selected) {
      if (interrupted) break;
      const result = await runScenario(scenario, ctx, settings, baseline);
      if (scenario.name === BASELINE) baseline = result.requestsPerSec;
      results.push(result);
      process.stdout.write(`${formatLine(result)}\n`);
      if (result.counters) process.stdout.write(`  (${Object.entries(result.counters).map(([name, value]) => `${name} ${value.toLocaleString('en')}`).join(', ')})\n`);
      if (result.warmup && (result.warmup.errors > 0 || result.warmup.non2xx > 0)) {
        process.stdout.write(`  (warm-up: ${result.warmup.non2xx} non-2xx, ${result.warmup.errors} errors)\n`);
      }
      if (result.non2xx > 0) process.stdout.write(`  status codes: ${JSON.stringify(result.statusCodes)}\n`);
    }
    if (interrupted) throw new BenchError('interrupted; no results written');

    const byName = new Map(results.map((r) => [r.name, r]));
    const decided = targets.flatMap((t) => {
      const outcome = t.evaluate(byName);
      return outcome ? [{ name: t.name, goal: t.goal, ...outcome }] : [];
    });
    if (decided.length > 0) {
      process.stdout.write(`\nTargets (${driver}, this run):\n`);
      for (const t of decided) process.stdout.write(`  ${t.met ? 'met    ' : 'MISSED '} ${t.name.padEnd(22)} ${t.figure}   (goal: ${t.goal})\n`);
    }

    const report = {
      date: started.toISOString(),
      gitCommit: gitCommit(),
      machine: m,
      driver,
      durationSec: settings.durationSec,
      warmupSec: settings.warmupSec,
      connections: settings.connections,
      loadGeneratorWorkers: settings.workers,
      dbPoolMax: driver === 'node-postgres' ? config.dbPoolMax : null,
      pgliteStorage: driver === 'pglite' ? settings.pglite : null,
      loadAverage1mAtEnd: round(os.loadavg()[0] ?? 0),
      scenarios: results,
      targets: decided,
    };
    mkdirSync(RESULTS_DIR, { recursive: true });
    const stamp = started.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
    const json = `${JSON.stringify(report, null, 2)}\n`;
    const named = `${RESULTS_DIR}${stamp}-${driver}.json`;
    writeFileSync(`${RESULTS_DIR}latest.json`, json);
    writeFileSync(named, json);
    process.stdout.write(`\nWrote bench/results/latest.json and bench/results/${stamp}-${driver}.json\n`);

    const failed = results.filter((r) => r.errors > 0 || r.non2xx > 0);
    if (failed.length > 0) {
      process.stderr.write(`bench: FAILED — errors or non-2xx answers in: ${failed.map((r) => r.name).join(', ')}\n`);
      return 1;
    }
    return 0;
  } finally {
    if (app) {
      const a = app;
      await withTimeout('closing the app', 15_000, () => a.close());
    }
    if (testDb) {
      const d = testDb;
      await withTimeout('dropping the throwaway database', 15_000, () => d.drop());
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    clearTimeout(watchdog);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof BenchError || !(error instanceof Error) ? String(error instanceof Error ? error.message : error) : (error.stack ?? error.message)}\n`);
    process.exit(1);
  },
);
