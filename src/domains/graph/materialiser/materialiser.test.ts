import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp, testEnv, V1 } from '../../../../test/helpers/app.ts';
import { ingestEmpire, nodeKeyPair, registerKey, signWithNode } from '../../../../test/helpers/empire.ts';
import { CHROME_UA, createTenant, GPTBOT_IP, GPTBOT_UA, signedIngest } from '../../../../test/helpers/honeypot.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { loadConfig } from '../../../platform/config.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { buildServer } from '../../../platform/http/server.ts';
import { createScheduler, type Scheduler } from '../../../platform/jobs/scheduler.ts';
import { createMetrics } from '../../../platform/metrics.ts';
import { createEmpireDomain } from '../../empire/wiring.ts';
import { insertIncident } from '../../empire/incidents/repository.ts';
import { opsEndpoints } from '../../ops/endpoints.ts';
import { createOpsService } from '../../ops/service.ts';
import { accumulate, digestOf } from './digest.ts';
import { graphMaterialiserEndpoints } from './endpoints.ts';
import { graphSources } from '../../../../test/helpers/graph-sources.ts';
import * as repo from './repository.ts';
import { createGraphMaterialiser, type GraphMaterialiser } from './service.ts';

const MINUTE = 60_000;
const SETTLE = 61_000;
const J1 = 't13d1516h2_8daaf6152771_02713d6af862';
/** Fingerprints are JA4 and user agent: the liars get their own JA4, so their own fingerprint. */
const J2 = 't13d1715h2_5b57614c22b0_3d5424432f57';
const clock = new ManualClock('2026-11-26T10:00:00.000Z');
const log = pino({ level: 'silent' });
let t: TestApp;
let graph: GraphMaterialiser;
let server: FastifyInstance;
let scheduler: Scheduler;
let euSecret: string;

/** The materialiser on the app's database, with batches of 7 rows so every run crosses batch boundaries. */
const materialiserWith = (limits: { batchRows?: number; maxRowsPerRun?: number } = { batchRows: 7 }) =>
  createGraphMaterialiser({ db: t.app.database.db, clock, log, vendors: () => t.app.honeypot.registry.current.vendors, sources: graphSources, limits });

const call = (url: string, method: 'GET' | 'POST' = 'GET') =>
  server.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, ...(method === 'POST' ? { payload: {} } : {}) });

const run = () => graph.run(clock.now(), 'manual') as Promise<Record<string, unknown> & { digest: string; materialisationId: string }>;

let sent = 0;
async function honeypot(slug: string, secret: string, events: Record<string, unknown>[]) {
  const res = await signedIngest(t, { slug, secret, unixSeconds: Math.floor(clock.now().getTime() / 1000), body: { events: events.map((e) => ({ id: `hp-${++sent}`, path: '/honeypot/topics/x', ...e })) } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ events: { fingerprintId: string; uaClass: string }[] }>().events;
}

async function empire(toolset: string, events: Parameters<typeof ingestEmpire>[2]) {
  const res = await ingestEmpire(t, toolset, events);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().accepted).toBe(events.length);
  return res.json<{ results: { eventId: string }[] }>().results.map((r) => r.eventId);
}

const q = async <T = Record<string, unknown>>(query: ReturnType<typeof sql>) => rowsOf<T>(await t.app.database.db.execute(query));
const liveNode = async (kind: string, key: string) =>
  (await q<{ props: Record<string, unknown>; toolset: string | null; tenant: string | null }>(sql`SELECT props, toolset, tenant FROM graph_nodes WHERE kind = ${kind} AND key = ${key} AND removed_run IS NULL`))[0];
const liveEdges = async (kind: string) =>
  (
    await q<{ src: string; dst: string; props: Record<string, unknown> }>(
      sql`SELECT s.key AS src, d.key AS dst, e.props FROM graph_edges e JOIN graph_nodes s ON s.id = e.src JOIN graph_nodes d ON d.id = e.dst WHERE e.kind = ${kind} AND e.removed_run IS NULL ORDER BY 1, 2`,
    )
  ).map((r) => ({ ...r, pair: `${r.src}->${r.dst}` }));

/** Every live identity, hashed in TypeScript: an independent from-scratch digest of what the graph holds. */
async function digestOfGraphRows(): Promise<string> {
  const nodes = await q<{ identity: string }>(sql`SELECT 'n|' || kind || '|' || key AS identity FROM graph_nodes WHERE removed_run IS NULL`);
  const edges = await q<{ identity: string }>(
    sql`SELECT 'e|' || e.kind || '|' || s.kind || '|' || s.key || '|' || d.kind || '|' || d.key AS identity FROM graph_edges e JOIN graph_nodes s ON s.id = e.src JOIN graph_nodes d ON d.id = e.dst WHERE e.removed_run IS NULL`,
  );
  return digestOf(accumulate([...nodes, ...edges].map((r) => r.identity)), nodes.length, edges.length);
}

let fingerprints: { gpt: string; liar: string; chrome: string };
let events: { e1: string; e2: string; e3: string; signed: string };
let keyId: string;
let incidentId: string;

beforeAll(async () => {
  t = await startTestApp({ clock });
  graph = materialiserWith();
  const metrics = createMetrics(() => t.app.database.poolStats());
  scheduler = createScheduler({ db: t.app.database.db, clock, log, metrics, jobs: graph.jobs() });
  const ops = createOpsService({ db: t.app.database.db, clock, audit: t.app.audit, scheduler, config: loadConfig(testEnv()) });
  // The graph endpoints and the job-run endpoint on their own server until app.ts wires them in.
  server = buildServer({ endpoints: [...graphMaterialiserEndpoints(graph), ...opsEndpoints(ops)], credentials: t.app.identity.credentials, clock, metrics, metricsToken: null, logger: log, trustProxy: false });
  await server.ready();
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

describe('before any run', () => {
  it('reports no lag, no runs and unknown badges', async () => {
    expect(await graph.lagSec()).toBeNull();
    const slo = (await call(`${V1}/empire/graph/slo`)).json();
    expect(slo).toMatchObject({ schema: 'svc-empire-graph-slo.v1', worstLagSec: null, worstLagKind: null, overallBadge: 'unknown' });
    expect(slo.perKind).toHaveLength(9);
    expect(slo.perKind.every((k: { badge: string; lagSec: unknown }) => k.badge === 'unknown' && k.lagSec === null)).toBe(true);
    const status = (await call(`${V1}/empire/graph/materialiser`)).json();
    expect(status).toMatchObject({ latestRun: null, recentRuns: [], totals: { nodes: 0, edges: 0 }, oldestMaterialisedAt: null, oldestLagSec: null });
  });
});

describe('a seeded fleet', () => {
  beforeAll(async () => {
    euSecret = await createTenant(t, 'edge-eu', 'Edge EU');
    const usSecret = await createTenant(t, 'edge-us', 'Edge US');
    const eu = await honeypot('edge-eu', euSecret, [
      { ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: J1 },
      { ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: J1 },
      { ua: GPTBOT_UA, ip: '203.0.113.9', ja4: J2 },
      { ua: GPTBOT_UA, ip: '203.0.113.9', ja4: J2 },
      { ua: CHROME_UA, ip: '198.51.100.4' },
    ]);
    await honeypot('edge-us', usSecret, [{ ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: J1 }]);
    expect(eu.map((e) => e.uaClass)).toEqual(['KNOWN_LLM_AGENT', 'KNOWN_LLM_AGENT', 'LIAR', 'LIAR', 'BROWSER']);
    fingerprints = { gpt: eu[0]!.fingerprintId, liar: eu[2]!.fingerprintId, chrome: eu[4]!.fingerprintId };

    const pair = nodeKeyPair();
    keyId = await registerKey(t, 'crawler-lab', pair.publicKeyB64);
    const [e1, e2, e3] = await empire('crawler-lab', [
      { id: 'c-1', eventType: 'crawl.started', tenant: 'edge-eu', payload: { fingerprintId: fingerprints.liar } },
      { id: 'c-2', eventType: 'crawl.page', tenant: 'ghost-tenant', causedBy: 'c-1' },
      // Its cause, c-9, arrives only later.
      { id: 'c-3', eventType: 'crawl.page', causedBy: 'c-9' },
    ]);
    const [signed] = await empire('crawler-lab', [signWithNode('crawler-lab', { id: 'c-4', eventType: 'crawl.signed', keyId }, pair.privateKey)]);
    events = { e1: e1!, e2: e2!, e3: e3!, signed: signed! };
    incidentId = randomUUID();
    await insertIncident(t.app.database.db, {
      id: incidentId,
      toolset: 'crawler-lab',
      severity: 'minor',
      title: 'crawler-lab surge',
      status: 'open',
      source: 'test',
      eventIds: [e1!, 'not-an-event'],
      details: {},
      openedAt: clock.now(),
      resolvedAt: null,
    });
  });

  it('waits out the settle margin: rows received within 60 s of now are left for the next run', async () => {
    const early = await run();
    expect(early).toMatchObject({ honeypotEventsRead: 0, empireEventsRead: 0, attestationsRead: 0 });
    // Whole-compared sources are in at once.
    expect(await liveNode('Tenant', 'edge-eu')).toMatchObject({ props: { registered: true, name: 'Edge EU', disabled: false } });
    expect(await liveNode('Incident', incidentId)).toMatchObject({ toolset: 'crawler-lab', props: { status: 'open', severity: 'minor' } });
    expect(await liveEdges('CONCERNS')).toEqual([]);
    expect(await liveNode('Vendor', 'openai-gptbot')).toBeDefined();
  });

  it('builds fingerprints, clusters and vendor claims from the honeypot events, aggregated', async () => {
    clock.advance(SETTLE);
    const stats = await run();
    expect(stats).toMatchObject({ honeypotEventsRead: 6, empireEventsRead: 4, attestationsRead: 4, drained: true });

    // One node per fingerprint across the fleet: GPTBot on edge-eu (2 events) and edge-us (1) is one client.
    const gpt = await liveNode('Fingerprint', fingerprints.gpt);
    expect(gpt).toMatchObject({ tenant: null, props: { fingerprintId: fingerprints.gpt, events: 3, liarEvents: 0, lastUaClass: 'KNOWN_LLM_AGENT' } });
    expect(await liveNode('Fingerprint', fingerprints.liar)).toMatchObject({ props: { events: 2, liarEvents: 2 } });
    expect(await liveNode('Cluster', J1)).toMatchObject({ props: { ja4: J1, events: 3 } });
    expect(await liveNode('Cluster', J2)).toMatchObject({ props: { ja4: J2, events: 2 } });
    const seenOn = await liveEdges('SEEN_ON');
    expect(seenOn.map((e) => e.dst).sort()).toEqual(['edge-eu', 'edge-eu', 'edge-eu', 'edge-us']);
    // Per tenant counts live on the SEEN_ON edges.
    expect(seenOn.filter((e) => e.src === fingerprints.gpt).map((e) => [e.dst, e.props.events]).sort()).toEqual([['edge-eu', 2], ['edge-us', 1]]);
    expect((await liveEdges('IN_CLUSTER')).map((e) => e.dst).sort()).toEqual([J1, J2]);
    const claims = await liveEdges('CLAIMS');
    expect(claims.map((e) => e.dst)).toEqual(['openai-gptbot', 'openai-gptbot']);
    expect(claims.find((e) => e.src === fingerprints.liar)!.props).toMatchObject({ events: 2, liarEvents: 2 });
    // One node per fingerprint, not per event (nor per tenant).
    expect((await q<{ n: number }>(sql`SELECT count(*)::int AS n FROM graph_nodes WHERE kind = 'Fingerprint'`))[0]!.n).toBe(3);
  });

  it('builds events with their toolset, tenants, fingerprint, key, attestation, causes and incidents', async () => {
    expect(await liveNode('EmpireEvent', events.e1)).toMatchObject({ toolset: 'crawler-lab', tenant: 'edge-eu', props: { senderId: 'c-1', eventType: 'crawl.started', compatMode: true } });
    expect((await liveEdges('EMITTED_BY')).map((e) => e.dst)).toEqual(['crawler-lab', 'crawler-lab', 'crawler-lab', 'crawler-lab']);
    expect((await liveEdges('CAUSED_BY')).map((e) => e.pair)).toEqual([`${events.e2}->${events.e1}`]);
    expect((await liveEdges('FROM_TENANT')).map((e) => e.dst).sort()).toEqual(['edge-eu', 'ghost-tenant']);
    // A tenant an event names but no honeypot registered: a node all the same, marked unregistered.
    expect(await liveNode('Tenant', 'ghost-tenant')).toMatchObject({ props: { slug: 'ghost-tenant', registered: false } });
    expect((await liveEdges('ABOUT')).map((e) => e.pair)).toEqual([`${events.e1}->${fingerprints.liar}`]);
    expect((await liveEdges('SIGNED_BY')).map((e) => e.pair)).toEqual([`${events.signed}->${keyId}`]);
    expect(await liveEdges('ATTESTS')).toHaveLength(4);
    expect((await liveEdges('BY_KEY')).map((e) => e.dst)).toEqual([keyId]);
    expect((await liveEdges('BELONGS_TO')).map((e) => e.pair)).toEqual([`${keyId}->crawler-lab`]);
    expect(await liveNode('Key', keyId)).toMatchObject({ toolset: 'crawler-lab', props: { registered: true, status: 'active' } });
    // The incident's event is in the graph now; the id that names no event links nothing.
    expect((await liveEdges('CONCERNS')).map((e) => e.pair)).toEqual([`${incidentId}->${events.e1}`]);
    expect((await liveEdges('ON_TOOLSET')).map((e) => e.pair)).toEqual([`${incidentId}->crawler-lab`]);
  });

  it('keeps secrets, IP hashes and IPs out of props', async () => {
    const props = JSON.stringify(await q(sql`SELECT props FROM graph_nodes UNION ALL SELECT props FROM graph_edges`));
    for (const { ip_hash } of await q<{ ip_hash: string }>(sql`SELECT ip_hash FROM honeypot_events`)) expect(props).not.toContain(ip_hash);
    for (const ip of [GPTBOT_IP, '203.0.113.9', '198.51.100.4']) expect(props).not.toContain(ip);
    expect(props).not.toContain(euSecret);
    const [key] = await q<{ public_key_b64: string }>(sql`SELECT public_key_b64 FROM provenance_keys`);
    expect(props).not.toContain(key!.public_key_b64);
  });

  it('links a cause that arrives after its effect', async () => {
    const [e9] = await empire('crawler-lab', [{ id: 'c-9', eventType: 'crawl.started' }]);
    clock.advance(SETTLE);
    expect(await run()).toMatchObject({ empireEventsRead: 1, honeypotEventsRead: 0 });
    expect((await liveEdges('CAUSED_BY')).map((e) => e.pair).sort()).toEqual([`${events.e2}->${events.e1}`, `${events.e3}->${e9}`].sort());
  });

  it('reads only new rows: a run with nothing new reads 0, adds nothing and keeps the digest', async () => {
    clock.advance(MINUTE);
    const first = await run();
    clock.advance(MINUTE);
    const second = await run();
    expect(second).toMatchObject({ honeypotEventsRead: 0, empireEventsRead: 0, attestationsRead: 0, nodesAdded: 0, nodesRemoved: 0, edgesAdded: 0, edgesRemoved: 0, registryNodesWritten: 0 });
    expect(second.digest).toBe(first.digest);
    expect(second.nodes).toBe(first.nodes);
    // Counts grow with the new rows only: 3 more events of an existing fingerprint.
    await honeypot('edge-eu', euSecret, [{ ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: J1 }, { ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: J1 }, { ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: J1 }]);
    clock.advance(SETTLE);
    const third = await run();
    expect(third).toMatchObject({ honeypotEventsRead: 3, nodesAdded: 0, edgesAdded: 0 });
    expect(third.digest).toBe(first.digest);
    expect(await liveNode('Fingerprint', fingerprints.gpt)).toMatchObject({ props: { events: 6 } });
    expect(await liveNode('Cluster', J1)).toMatchObject({ props: { events: 6 } });
  });

  it('stores a digest equal to a from-scratch hash of the graph and to a rebuild from nothing', async () => {
    clock.advance(MINUTE);
    const latest = await run();
    expect(await digestOfGraphRows()).toBe(latest.digest);
    const replayed = await graph.replay(latest.materialisationId);
    expect(replayed).toMatchObject({ matches: true, storedDigest: latest.digest, liveDigest: latest.digest, addedNodes: [], removedNodes: [], addedEdges: [], removedEdges: [] });

    // Rebuild from nothing at the same instant, in one large batch: the same set, so the same digest.
    const saved = await q(sql`SELECT count(*)::int AS n FROM graph_nodes`);
    const TABLES = ['graph_edges', 'graph_nodes', 'graph_runs', 'graph_kind_state'];
    const each = async (statement: (table: string) => string) => {
      for (const table of TABLES) await t.app.database.db.execute(sql.raw(statement(table)));
    };
    await each((table) => `CREATE TABLE saved_${table} AS SELECT * FROM ${table}`);
    await each((table) => `DELETE FROM ${table}`);
    const rebuilt = (await materialiserWith({ batchRows: 5000 }).run(clock.now(), 'manual')) as typeof latest;
    expect(rebuilt.digest).toBe(latest.digest);
    expect([rebuilt.nodes, rebuilt.edges]).toEqual([latest.nodes, latest.edges]);
    await each((table) => `DELETE FROM ${table}`);
    await each((table) => `INSERT INTO ${table} SELECT * FROM saved_${table}`);
    await each((table) => `DROP TABLE saved_${table}`);
    expect(await q(sql`SELECT count(*)::int AS n FROM graph_nodes`)).toEqual(saved);
  });

  it('works off a backlog in bounded batches and runs, reporting the lag of what is left', async () => {
    const many = Array.from({ length: 24 }, (_, i) => ({ ua: `tool-${i}/1.0`, ip: `198.51.100.${10 + i}` }));
    await honeypot('edge-eu', euSecret, many.slice(0, 12));
    const firstBatchAt = clock.now();
    clock.advance(MINUTE);
    await honeypot('edge-eu', euSecret, many.slice(12));
    clock.advance(SETTLE);
    const capped = materialiserWith({ batchRows: 5, maxRowsPerRun: 12 });
    const partial = await capped.run(clock.now(), 'manual');
    expect(partial).toMatchObject({ honeypotEventsRead: 12, drained: false, nodesAdded: 12 });
    // Fingerprints are reflected only up to the last event read: the first request's receive time.
    expect(await capped.lagSec('Fingerprint')).toBe(Math.floor((clock.now().getTime() - firstBatchAt.getTime()) / 1000));
    const rest = await capped.run(clock.now(), 'manual');
    expect(rest).toMatchObject({ honeypotEventsRead: 12, drained: true, nodesAdded: 12 });
    expect(await capped.lagSec('Fingerprint')).toBe(60);
    expect(await digestOfGraphRows()).toBe(rest.digest);
  });

  it('marks a vanished incident and its edges removed; an unregistered key still named stays', async () => {
    await t.app.database.db.execute(sql`DELETE FROM empire_incidents WHERE id = ${incidentId}::uuid`);
    await t.app.database.db.execute(sql`DELETE FROM provenance_keys WHERE id = ${keyId}::uuid`);
    clock.advance(MINUTE);
    const stats = await run();
    expect(stats).toMatchObject({ nodesRemoved: 1, edgesRemoved: 3 });
    expect(await liveNode('Incident', incidentId)).toBeUndefined();
    expect(await liveEdges('CONCERNS')).toEqual([]);
    expect(await liveEdges('BELONGS_TO')).toEqual([]);
    expect(await liveNode('Key', keyId)).toMatchObject({ props: { keyId, registered: false } });
    expect(await digestOfGraphRows()).toBe(stats.digest);
    expect(await graph.replay(stats.materialisationId as string)).toMatchObject({ matches: true });
  });

  it('answers the status, SLO and job endpoints', async () => {
    const status = await call(`${V1}/empire/graph/materialiser?recent=2`);
    expect(status.statusCode, status.body).toBe(200);
    const body = status.json();
    expect(body.recentRuns).toHaveLength(2);
    expect(body.latestRun).toMatchObject({ outcome: 'ok', trigger: 'manual', errorText: null, stats: { nodesRemoved: 1 } });
    expect(body.latestRun.digest).toMatch(/^[0-9a-f]{64}$/);
    const nodeCounts = Object.fromEntries(body.nodesByKind.map((k: { kind: string; count: number }) => [k.kind, k.count]));
    // edge-eu, edge-us, ghost-tenant and the agent API's own tenant.
    expect(nodeCounts).toMatchObject({ Tenant: 4, Cluster: 2, Incident: 0, Key: 1, Toolset: 1 });
    expect(body.totals.nodes).toBe(body.nodesByKind.reduce((n: number, k: { count: number }) => n + k.count, 0));
    expect(body.edgesByKind).toHaveLength(13);
    expect(body.totals).toEqual({ nodes: body.latestRun.stats.nodes, edges: body.latestRun.stats.edges });
    // Stream kinds are reflected up to the run's now − 60 s: they are the oldest.
    expect(body.oldestLagSec).toBe(60);
    expect(body.oldestMaterialisedAt).toBe(new Date(clock.now().getTime() - 60_000).toISOString());
    expect((await call(`${V1}/empire/graph/materialiser?recent=101`)).statusCode).toBe(400);
    expect((await call(`${V1}/empire/graph/materialiser`)).json().recentRuns.length).toBeLessThanOrEqual(10);

    const slo = (await call(`${V1}/empire/graph/slo`)).json();
    expect(slo).toMatchObject({ worstLagSec: 60, worstLagKind: 'Fingerprint', overallBadge: 'green' });
    expect(slo.perKind.find((k: { kind: string }) => k.kind === 'Tenant')).toMatchObject({ badge: 'green', count: 4, lagSec: 0, oldestMaterialisedAt: clock.now().toISOString() });
    clock.advance(29 * MINUTE);
    expect((await call(`${V1}/empire/graph/slo`)).json()).toMatchObject({ worstLagSec: 30 * 60, overallBadge: 'yellow' });
    clock.advance(MINUTE);
    expect((await call(`${V1}/empire/graph/slo`)).json()).toMatchObject({ overallBadge: 'red' });

    const job = await call(`${V1}/ops/jobs/graph-materialise/run`, 'POST');
    expect(job.statusCode, job.body).toBe(200);
    expect(job.json().run).toMatchObject({ outcome: 'ok', stats: { nodesAdded: 0, drained: true } });
    const [recorded] = await repo.recentRuns(t.app.database.db, 1);
    expect(recorded).toMatchObject({ id: job.json().run.stats.materialisationId, trigger: 'manual', outcome: 'ok' });
    expect((await call(`${V1}/empire/graph/slo`)).json()).toMatchObject({ worstLagSec: 60, overallBadge: 'green' });
    expect(graph.jobs()[0]).toMatchObject({ name: 'graph-materialise', schedule: '* * * * *' });
    expect(scheduler.nextRunAt('graph-materialise', new Date('2026-11-26T12:00:30.000Z'))?.toISOString()).toBe('2026-11-26T12:01:00.000Z');
  });

  it('records a failed run with its error and leaves the graph as it was', async () => {
    const before = await repo.lastOkRun(t.app.database.db);
    const broken = createGraphMaterialiser({
      db: t.app.database.db,
      clock,
      log,
      vendors: () => {
        throw new Error('vendor registry unreadable');
      },
      sources: graphSources,
    });
    await expect(broken.run(clock.now(), 'schedule')).rejects.toThrow('vendor registry unreadable');
    const [failed] = await repo.recentRuns(t.app.database.db, 1);
    expect(failed).toMatchObject({ outcome: 'error', trigger: 'schedule', errorText: 'vendor registry unreadable', digest: null });
    expect(failed!.finishedAt).not.toBeNull();
    expect((await repo.lastOkRun(t.app.database.db))?.id).toBe(before?.id);
    expect((await call(`${V1}/empire/graph/replay/${failed!.id}`)).statusCode).toBe(404);
  });

  it('replay finds graph rows tampered with, and sources tampered with', async () => {
    clock.advance(MINUTE);
    const latest = await run();
    const url = `${V1}/empire/graph/replay/${latest.materialisationId}`;
    const clean = await call(url);
    expect(clean.statusCode, clean.body).toBe(200);
    expect(clean.json()).toMatchObject({ schema: 'svc-empire-graph-replay.v1', materialisationId: latest.materialisationId, matches: true, storedDigest: latest.digest, liveAt: clock.now().toISOString() });

    // An edge deleted from the graph: the sources still give it.
    await t.app.database.db.execute(sql`DELETE FROM graph_edges WHERE kind = 'CAUSED_BY' AND src = (SELECT id FROM graph_nodes WHERE kind = 'EmpireEvent' AND key = ${events.e2})`);
    const graphTampered = (await call(url)).json();
    expect(graphTampered).toMatchObject({ matches: false, liveDigest: latest.digest, addedNodes: [], removedNodes: [], removedEdges: [] });
    expect(graphTampered.addedEdges).toEqual([`e|CAUSED_BY|EmpireEvent|${events.e2}|EmpireEvent|${events.e1}`]);

    // An event deleted from the source: the graph still holds it and its edges.
    await t.app.database.db.execute(sql`DELETE FROM empire_events WHERE event_id = ${events.signed}::uuid`);
    const sourceTampered = (await call(url)).json();
    expect(sourceTampered.matches).toBe(false);
    expect(sourceTampered.liveDigest).not.toBe(latest.digest);
    expect(sourceTampered.removedNodes).toEqual([`n|EmpireEvent|${events.signed}`]);
    expect(sourceTampered.removedEdges.sort()).toEqual(
      [
        `e|ATTESTS|Attestation|${(await q<{ key: string }>(sql`SELECT s.key FROM graph_edges e JOIN graph_nodes s ON s.id = e.src JOIN graph_nodes d ON d.id = e.dst WHERE e.kind = 'ATTESTS' AND d.key = ${events.signed}`))[0]!.key}|EmpireEvent|${events.signed}`,
        `e|EMITTED_BY|EmpireEvent|${events.signed}|Toolset|crawler-lab`,
        `e|SIGNED_BY|EmpireEvent|${events.signed}|Key|${keyId}`,
      ].sort(),
    );
  });

  it('answers 404 for an unknown materialisation and 400 for an id that is not a uuid', async () => {
    const unknown = await call(`${V1}/empire/graph/replay/${randomUUID()}`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ reason: 'not-found' });
    const bad = await call(`${V1}/empire/graph/replay/not-a-uuid`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().field).toBe('path.materialisationId');
  });
});

describe('graph_lag_gte alert rules', () => {
  it('fire from the real lag once the materialiser stops, and not while it keeps up', async () => {
    const rule = await t.call({
      method: 'POST',
      url: `${V1}/empire/lag-lab/alerts`,
      payload: { name: 'Graph behind', predicate: { kind: 'graph_lag_gte', lagSec: 600 }, destinations: [{ kind: 'webhook', url: 'https://alerts.example.com/graph', secret: 'graph-hook-secret-0123456789' }] },
    });
    expect(rule.statusCode, rule.body).toBe(200);
    const empireDomain = createEmpireDomain({ db: t.app.database.db, clock, audit: t.app.audit, config: loadConfig(testEnv()), log, outbound: t.app.outbound, provenance: t.app.provenance.service, graphLag: graph.lagSec });
    try {
      const evaluate = empireDomain.jobs().find((j) => j.name === 'empire-alert-evaluate')!;
      const firedNow = async () => (await evaluate.run({ now: clock.now(), db: t.app.database.db, log, trigger: 'manual' })).fired;
      // Keeping up: a run every minute, the lag stays near the settle margin.
      for (let minute = 0; minute < 8; minute++) {
        clock.advance(MINUTE);
        await run();
        expect(await firedNow()).toBe(0);
      }
      // Stopped: no run for 10 minutes; the stream kinds are now 11 minutes behind.
      clock.advance(10 * MINUTE);
      expect(await graph.lagSec()).toBe(11 * 60);
      expect(await firedNow()).toBe(1);
      const deliveries = await q<{ payload: { details: { observed: { lagSec: number } } } }>(
        sql`SELECT payload FROM outbound_deliveries WHERE source_id = ${rule.json().id} ORDER BY created_at`,
      );
      expect(deliveries[0]!.payload.details.observed.lagSec).toBe(660);
    } finally {
      await empireDomain.close();
    }
  }, 120_000); // eight runs and nine evaluations on a shared machine
});
