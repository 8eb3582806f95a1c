import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { createMaze, FALLBACK_TOPICS } from '../packages/router/src/maze.ts';
import { freePort } from '../test/helpers/ports.ts';
import { defineScenario } from './scenarios.ts';

/**
 * The honeypot router (packages/router), against a bare Node HTTP server on the same machine in
 * the same run (packages/router/README.md, "Performance"):
 *
 * - `router-bait`: the router serving maze pages at ≥ 50% of the rate a bare `http.createServer`
 *   answers a fixed page of the same size. Each runs in its own process (as deployed), loaded by
 *   the same autocannon over the same 1,000 bait URLs. The router records every request to a
 *   stand-in ingest in a third process that answers at once (so what is measured is the router's
 *   own work: building, queueing, batching and sending each event, and the page; the service's
 *   ingest cost is the ingest scenarios').
 * - `router-tarpit-hold`: 10,000 connections held at once by a tarpit, and what they cost the
 *   router's process (resident memory before and after, per held connection).
 */

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0';
const HELD = 10_000;

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Starts `node <args>` and resolves with the first stdout line that `ready` accepts. */
function start(args: string[], env: Record<string, string>, ready: (line: string) => string | null): Promise<{ child: ChildProcess; value: string }> {
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (chunk) => {
      buffered += String(chunk);
      for (const line of buffered.split('\n')) {
        const value = ready(line);
        if (value !== null) return resolve({ child, value });
      }
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before it was ready`)));
  });
}

/**
 * The stand-in ingest: answers every batch at once, reading only the ids out of it (a regular
 * expression, not a JSON parse), so that it costs the shared CPU little. TARPIT=1 answers every
 * event as a tarpitted liar (a ten-minute delay); otherwise as an honest client.
 */
const STAND_IN = `
const http = require('node:http');
const liar = process.env.TARPIT === '1';
const tail = liar ? '","uaClass":"LIAR","fingerprintId":"fp","tarpit":{"active":true,"delayMs":600000}}' : '","uaClass":"UNKNOWN","fingerprintId":"fp","tarpit":{"active":false,"delayMs":0}}';
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (!req.url.startsWith('/api/observatory/honeypot/ingest')) { res.writeHead(404); return res.end(); }
    const ids = [...Buffer.concat(chunks).toString('utf8').matchAll(/"id":"([^"\\\\]*)"/g)].map((m) => m[1]);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"accepted":' + ids.length + ',"duplicates":0,"events":[' + ids.map((id) => '{"id":"' + id + '","eventId":"' + id + tail).join(',') + ']}');
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
`;

const BARE = `
const http = require('node:http');
const page = 'x'.repeat(Number(process.env.PAGE_BYTES));
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(page) });
  res.end(page);
});
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
`;

const portLine = (line: string) => /^port (\d+)$/.exec(line.trim())?.[1] ?? null;

async function standIn(tarpit = false): Promise<string> {
  const { value } = await start(['-e', STAND_IN], { TARPIT: tarpit ? '1' : '0' }, portLine);
  return `http://127.0.0.1:${value}`;
}

async function startRouter(ingest: string, adminPort: number): Promise<{ child: ChildProcess; url: string }> {
  const { child, value } = await start(
    ['--import', 'tsx', 'packages/router/src/cli.ts'],
    {
      OBSERVATORY_URL: ingest,
      OBSERVATORY_TENANT: 'bench',
      OBSERVATORY_TENANT_SECRET: 'bench-secret',
      ROUTER_PORT: '0',
      ROUTER_HOST: '127.0.0.1',
      ROUTER_ADMIN_PORT: String(adminPort),
      ROUTER_MAX_HELD: String(HELD * 2),
    },
    (line) => {
      try {
        const parsed = JSON.parse(line) as { msg?: string; url?: string };
        return parsed.msg === 'router listening' ? (parsed.url as string) : null;
      } catch {
        return null;
      }
    },
  );
  return { child, url: value };
}

const baitPaths = Array.from({ length: 1000 }, (_, i) => ['/honeypot/topics/llm-pricing/', '/q/', '/agents/'][i % 3] + `bench-${i}`);

function load(url: string, durationSec: number, connections: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url, connections, duration: durationSec, requests: baitPaths.map((path) => ({ method: 'GET', path, headers: { 'user-agent': BROWSER_UA } })) },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    autocannon.track(instance, { renderProgressBar: false, renderResultsTable: false, renderLatencyTable: false });
  });
}

const rssBytes = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
const metrics = async (adminPort: number) => (await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).json()) as { held: number; requests: number; sender: { sent: number; dropped: number } };

export const routerBaitScenario = defineScenario({
  name: 'router-bait',
  description: 'The honeypot router serving maze pages (recording each to a stand-in ingest) against a bare Node HTTP server answering a page of the same size, each in its own process, the same load (target: router ≥ 50% of bare).',
  async measure(ctx) {
    const { durationSec, connections } = ctx.run;
    const pageFor = createMaze({ topics: FALLBACK_TOPICS, agentApiBase: 'http://127.0.0.1:8080', siteName: 'Open Research Archive' });
    const pageBytes = Math.round(baitPaths.slice(0, 30).reduce((sum, p) => sum + Buffer.byteLength(pageFor(p, 'http://127.0.0.1').body), 0) / 30);
    const bare = await start(['-e', BARE], { PAGE_BYTES: String(pageBytes) }, portLine);
    const ingest = await standIn();
    const adminPort = await freePort();
    const router = await startRouter(ingest, adminPort);
    // Warm both (JIT, the router's first verdict) before measuring.
    await load(`http://127.0.0.1:${bare.value}`, 2, connections);
    await load(router.url, 2, connections);
    const bareResult = await load(`http://127.0.0.1:${bare.value}`, durationSec, connections);
    const routerResult = await load(router.url, durationSec, connections);
    const counters = await metrics(adminPort);
    bare.child.kill();
    router.child.kill();
    return {
      pageBytes,
      bareReqPerSec: Math.round(bareResult.requests.average),
      routerReqPerSec: Math.round(routerResult.requests.average),
      routerPctOfBare: Math.round((1000 * routerResult.requests.average) / bareResult.requests.average) / 10,
      bareP99Ms: bareResult.latency.p99,
      routerP99Ms: routerResult.latency.p99,
      routerNon2xx: routerResult.non2xx,
      eventsSent: counters.sender.sent,
      eventsDropped: counters.sender.dropped,
    };
  },
});

export const routerTarpitHoldScenario = defineScenario({
  name: 'router-tarpit-hold',
  description: `${HELD.toLocaleString('en')} connections held at once by the router's tarpit: the router process's resident memory before and after, per held connection.`,
  async measure() {
    const ingest = await standIn(true);
    const adminPort = await freePort();
    const router = await startRouter(ingest, adminPort);
    const { port } = new URL(router.url);
    // Warm up (JIT, the first batches) on short-lived connections, then let it settle.
    await load(router.url, 1, 4);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = rssBytes(router.child.pid as number);
    const sockets: net.Socket[] = [];
    const started = performance.now();
    for (let i = 0; i < HELD; i += 1) {
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(`GET /agents/held-${i} HTTP/1.1\r\nHost: bait\r\nUser-Agent: held-liar-bot\r\n\r\n`);
      sockets.push(socket);
      if (i % 500 === 499) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const deadline = Date.now() + 120_000;
    let held = 0;
    while (Date.now() < deadline) {
      held = (await metrics(adminPort)).held;
      if (held >= HELD) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const openedSec = (performance.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = rssBytes(router.child.pid as number);
    for (const socket of sockets) socket.destroy();
    router.child.kill();
    return {
      held,
      openedInSec: Math.round(openedSec * 10) / 10,
      rssBeforeMiB: Math.round((before / 1048576) * 10) / 10,
      rssAfterMiB: Math.round((after / 1048576) * 10) / 10,
      bytesPerHeld: Math.round((after - before) / Math.max(held, 1)),
    };
  },
});
