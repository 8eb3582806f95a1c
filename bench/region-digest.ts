import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { V1 } from '../src/platform/http/registry.ts';
import { type BenchContext, defineScenario } from './scenarios.ts';
import { startArguments } from '../test/helpers/process.ts';

/**
 * `region-digest-3`: the federation fan-out (`POST {v1}/empire/region-digest`) over three local
 * deployments against the slowest single local digest (`GET {v1}/empire/region-digest` of each);
 * target: the fan-out within 1.5 × the slowest local digest, because the peers are asked in
 * parallel (docs/federation/README.md, "Bridge"; docs/performance.md, "Federation").
 *
 * The three deployments are real processes (`src/main.ts`, as `npm start` runs it), each on its own
 * database: on PGlite each with its own data directory, on PostgreSQL each a fresh database on the
 * bench's server. They share a bridge token and list 127.0.0.1 as a peer host; `alpha` registers
 * all three. Before measuring, each runs `compliance-evaluate` and `graph-materialise` once, so its
 * compliance and graph digests read real rows. Then, one call at a time: RUNS reads of each local
 * digest after WARMUP unmeasured ones, RUNS rounds of the three local digests asked at once by the
 * bench (the floor any fan-out meets on this machine: three deployments' work on its cores at
 * once), and RUNS fan-outs from `alpha` after WARMUP unmeasured ones; medians compared. The bench
 * app itself is not used.
 */

const REGIONS = ['alpha', 'bravo', 'charlie'] as const;
const WARMUP = 10;
const RUNS = 31;
const TARGET_RATIO = 1.5;
const ADMIN = 'svctok_benchfederationadminbenchfederationadmin0';
const BRIDGE = 'bench-federation-bridge-token-0123456789abcdef';
const READY_TIMEOUT_MS = 180_000;

interface Deployment {
  region: string;
  port: number;
  base: string;
  child: ChildProcess;
  stderr: () => string;
  cleanup: () => Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const round1 = (n: number) => Math.round(n * 10) / 10;

async function call(base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ ms: number; json: any }> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
  return { ms, json: JSON.parse(text) };
}

async function startDeployment(ctx: BenchContext, region: string, port: number, allowedPorts: string): Promise<Deployment> {
  let storage: Record<string, string>;
  let cleanup: () => Promise<void>;
  if (ctx.driver === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), `observatory-bench-${region}-`));
    storage = { DATA_DIR: dir };
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const server = process.env.DATABASE_URL!;
    const name = `obs_bench_fed_${region}_${process.pid}`;
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(server);
    url.pathname = `/${name}`;
    storage = { DATABASE_URL: url.toString() };
    cleanup = async () => {
      const c = new pg.Client({ connectionString: server });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
  }
  const child = spawn(process.execPath, startArguments(), {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      OBSERVATORY_ADMIN_TOKEN: ADMIN,
      OBSERVATORY_SCHEDULER: '0',
      OBSERVATORY_PUBLIC_URL: `http://127.0.0.1:${port}`,
      OBSERVATORY_REGION: region,
      OBSERVATORY_BRIDGE_TOKEN: BRIDGE,
      OBSERVATORY_BRIDGE_PEER_HOSTS: '127.0.0.1',
      OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
      OBSERVATORY_OUTBOUND_ALLOWED_PORTS: allowedPorts,
      OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0',
      ...storage,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d) => (err += String(d)));
  return { region, port, base: `http://127.0.0.1:${port}`, child, stderr: () => err, cleanup };
}

async function waitReady(d: Deployment): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${d.base}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`region-digest-3: ${d.region} never became ready: ${d.stderr().slice(-2000)}`);
}

async function stop(d: Deployment): Promise<void> {
  if (d.child.exitCode === null) {
    const exited = new Promise((resolve) => d.child.once('exit', resolve));
    d.child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
    if (d.child.exitCode === null) d.child.kill('SIGKILL');
  }
  await d.cleanup();
}

export const regionDigestScenario = defineScenario({
  name: 'region-digest-3',
  description: `POST {v1}/empire/region-digest fanning out over three local deployments (real processes, one database each) against the slowest GET {v1}/empire/region-digest of the three; medians of ${RUNS} calls after ${WARMUP} unmeasured, one at a time; target: within ${TARGET_RATIO}×.`,
  setupBudgetSec: 600,
  async measure(ctx) {
    const ports = [await freePort(), await freePort(), await freePort()];
    const allowed = ports.join(',');
    const deployments: Deployment[] = [];
    try {
      for (const [i, region] of REGIONS.entries()) deployments.push(await startDeployment(ctx, region, ports[i]!, allowed));
      await Promise.all(deployments.map(waitReady));
      const [alpha] = deployments;
      for (const d of deployments) {
        await call(alpha!.base, 'POST', `${V1}/empire/regions`, { key: d.region, baseUrl: d.base, isPrimary: d.region === 'alpha' });
        await call(d.base, 'POST', `${V1}/ops/jobs/compliance-evaluate/run`, {});
        await call(d.base, 'POST', `${V1}/ops/jobs/graph-materialise/run`, {});
      }
      const localMedians: Record<string, number> = {};
      for (const d of deployments) {
        for (let i = 0; i < WARMUP; i++) await call(d.base, 'GET', `${V1}/empire/region-digest`);
        const runs: number[] = [];
        for (let i = 0; i < RUNS; i++) runs.push((await call(d.base, 'GET', `${V1}/empire/region-digest`)).ms);
        localMedians[d.region] = median(runs);
      }
      // The floor of any fan-out on this machine: the three local digests asked at once by the
      // bench itself (no federation code involved), as the fan-out asks them.
      const together = () => Promise.all(deployments.map((d) => call(d.base, 'GET', `${V1}/empire/region-digest`)));
      for (let i = 0; i < WARMUP; i++) await together();
      const parallel: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const started = performance.now();
        await together();
        parallel.push(performance.now() - started);
      }
      for (let i = 0; i < WARMUP; i++) await call(alpha!.base, 'POST', `${V1}/empire/region-digest`, {});
      const fanOuts: number[] = [];
      let last: any = null;
      for (let i = 0; i < RUNS; i++) {
        const { ms, json } = await call(alpha!.base, 'POST', `${V1}/empire/region-digest`, {});
        fanOuts.push(ms);
        last = json;
      }
      if (last.participating.length !== 3 || last.failed.length !== 0 || last.migrationParity !== 'matched') {
        throw new Error(`region-digest-3: the fan-out did not reach every region: ${JSON.stringify(last)}`);
      }
      const slowestLocalMs = Math.max(...Object.values(localMedians));
      const fanOutMs = median(fanOuts);
      const parallelLocalsMs = median(parallel);
      const ratio = fanOutMs / slowestLocalMs;
      process.stdout.write(
        `  (region-digest-3: local medians ${Object.entries(localMedians).map(([r, ms]) => `${r} ${round1(ms)} ms`).join(', ')}; fan-out median ${round1(fanOutMs)} ms; ` +
          `ratio ${ratio.toFixed(2)} (target ≤ ${TARGET_RATIO}) ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'})\n`,
      );
      return {
        alphaLocalMs: round1(localMedians.alpha!),
        bravoLocalMs: round1(localMedians.bravo!),
        charlieLocalMs: round1(localMedians.charlie!),
        slowestLocalMs: round1(slowestLocalMs),
        parallelLocalsMs: round1(parallelLocalsMs),
        fanOutMs: round1(fanOutMs),
        ratio: Math.round(ratio * 100) / 100,
        targetRatio: TARGET_RATIO,
        targetMet: ratio <= TARGET_RATIO ? 1 : 0,
      };
    } finally {
      for (const d of deployments) await stop(d).catch(() => {});
    }
  },
});
