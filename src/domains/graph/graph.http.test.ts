import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertIncident } from '../../domains/empire/incidents/repository.ts';
import { ManualClock } from '../../platform/clock.ts';
import { runJob, startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { ingestEmpire, nodeKeyPair, registerKey, signWithNode, tokenBoundTo } from '../../../test/helpers/empire.ts';
import { CHROME_UA, createTenant, GPTBOT_IP, GPTBOT_UA, signedIngest } from '../../../test/helpers/honeypot.ts';

// The knowledge graph end to end through the HTTP API of the whole app (docs/graph/README.md): events
// ingested the way honeypots and toolsets send them, the graph-materialise job run on demand, and
// the operators' questions asked with the query language, by tokens of different reach.

const MINUTE = 60_000;
const J1 = 't13d1516h2_8daaf6152771_02713d6af862';
const clock = new ManualClock('2026-11-26T10:00:00.000Z');
let t: TestApp;
let gptFingerprint: string;
let incidentId: string;
let keyId: string;
const eventIds: Record<string, string> = {};

const query = (body: Record<string, unknown>, token?: string) => t.call({ method: 'POST', url: `${V1}/empire/graph/query`, payload: body, ...(token ? { token } : {}) });
const rowsOf = async (text: string, token?: string) => {
  const res = await query({ query: text }, token);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().rows as Record<string, unknown>[];
};

async function honeypot(slug: string, secret: string, events: Record<string, unknown>[]) {
  const res = await signedIngest(t, { slug, secret, unixSeconds: Math.floor(clock.now().getTime() / 1000), body: { events } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ events: { fingerprintId: string }[] }>().events;
}

beforeAll(async () => {
  t = await startTestApp({ clock });
  const eu = await createTenant(t, 'shop-eu');
  const us = await createTenant(t, 'shop-us');
  await createTenant(t, 'quiet-site');
  const [gpt] = await honeypot('shop-eu', eu, [{ path: '/honeypot/topics/a', ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: J1 }, { path: '/q/x', ua: CHROME_UA, ip: '203.0.113.9' }]);
  await honeypot('shop-us', us, [{ path: '/agents/b', ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: J1 }]);
  gptFingerprint = gpt!.fingerprintId;

  const pair = nodeKeyPair();
  keyId = await registerKey(t, 'crawler-lab', pair.publicKeyB64);
  const signed = (id: string, extra: Record<string, unknown> = {}) => signWithNode('crawler-lab', { id, eventType: 'crawl.page', keyId, tenant: 'shop-eu', ...extra }, pair.privateKey);
  const res = await ingestEmpire(t, 'crawler-lab', [
    signed('c-1', { payload: { fingerprintId: gptFingerprint } }),
    signed('c-2', { causedBy: 'c-1' }),
    signed('c-3', { causedBy: 'c-2' }),
    // A tenant and a fingerprint no honeypot reported: only crawler-lab's event names them.
    signed('c-4', { tenant: 'lab-only-tenant', payload: { fingerprintId: 'lab-only-site/fp_0000000000000001' } }),
  ]);
  expect(res.statusCode, res.body).toBe(200);
  const [c1, c2, c3] = res.json().results.map((r: { eventId: string }) => r.eventId);
  Object.assign(eventIds, { c1, c2, c3 });
  const other = await ingestEmpire(t, 'probe-kit', [{ id: 'p-1', eventType: 'probe.sent', tenant: 'shop-us' }]);
  expect(other.statusCode, other.body).toBe(200);
  eventIds.p1 = other.json().results[0].eventId;

  incidentId = randomUUID();
  await insertIncident(t.app.database.db, {
    id: incidentId,
    toolset: 'crawler-lab',
    severity: 'major',
    title: 'crawl burst',
    status: 'open',
    source: 'test',
    eventIds: [c1, c3],
    details: {},
    openedAt: clock.now(),
    resolvedAt: null,
  });
  // Past the settle margin, so the job reads everything sent above.
  clock.advance(2 * MINUTE);
  await runJob(t, 'graph-materialise');
});
afterAll(async () => t.close());

describe('the knowledge graph through the API', () => {
  it('answers which fingerprints were seen on two tenants', async () => {
    const rows = await rowsOf('MATCH (f:Fingerprint)-[:SEEN_ON]->(a:Tenant), (f)-[:SEEN_ON]->(b:Tenant) WHERE a.key < b.key RETURN f.key AS fingerprint, a.key AS first, b.key AS second');
    expect(rows).toEqual([{ fingerprint: gptFingerprint, first: 'shop-eu', second: 'shop-us' }]);
  });

  it('answers which keys signed the events of an incident', async () => {
    const rows = await rowsOf(`MATCH (i:Incident)-[:CONCERNS]->(e:EmpireEvent)-[:SIGNED_BY]->(k:Key) WHERE i.key = '${incidentId}' RETURN DISTINCT k.key AS key, count(e) AS events`);
    expect(rows).toEqual([{ key: keyId, events: 2 }]);
  });

  it('answers which tenants share a JA4 cluster, and walks lineage with a variable-length pattern', async () => {
    const shared = await rowsOf('MATCH (t1:Tenant)<-[:SEEN_ON]-(:Fingerprint)-[:IN_CLUSTER]->(c:Cluster) RETURN c.key AS ja4, count(DISTINCT t1) AS tenants');
    expect(shared).toEqual([{ ja4: J1, tenants: 2 }]);
    const causes = await rowsOf(`MATCH (e:EmpireEvent {key: '${eventIds.c3}'})-[:CAUSED_BY*1..3]->(cause:EmpireEvent) RETURN cause.senderId AS cause ORDER BY cause`);
    expect(causes).toEqual([{ cause: 'c-1' }, { cause: 'c-2' }]);
    const about = await rowsOf('MATCH (e:EmpireEvent)-[:ABOUT]->(f:Fingerprint)-[:SEEN_ON]->(t:Tenant) RETURN e.senderId AS event, t.key AS tenant ORDER BY tenant');
    expect(about).toEqual([{ event: 'c-1', tenant: 'shop-eu' }, { event: 'c-1', tenant: 'shop-us' }]);
  });

  it('returns the matched nodes and edges beside the rows of a plain query', async () => {
    const res = await query({ query: `MATCH (e:EmpireEvent)-[r:EMITTED_BY]->(t:Toolset {key: 'probe-kit'}) RETURN e.key AS event` });
    expect(res.json()).toMatchObject({ schema: 'svc-empire-graph-query.v1', rowCount: 1, rows: [{ event: eventIds.p1 }] });
    expect(res.json().nodes.map((n: { kind: string; key: string }) => `${n.kind}:${n.key}`).sort()).toEqual([`EmpireEvent:${eventIds.p1}`, 'Toolset:probe-kit']);
    expect(res.json().edges.map((e: { kind: string }) => e.kind)).toEqual(['EMITTED_BY']);
    expect(res.json().ast).toBeTypeOf('object');
  });

  it('shows a caller only the node kinds its scopes allow, and a bound token only its toolsets', async () => {
    const empireOnly = await t.tokenWith(['read:empire']);
    expect(await rowsOf('MATCH (f:Fingerprint)-[:SEEN_ON]->(t:Tenant) RETURN f.key', empireOnly)).toEqual([]);
    expect(await rowsOf('MATCH (t:Tenant) RETURN t.key', empireOnly)).toEqual([]);
    // A hidden kind stays hidden inside a walk: EmpireEvent → Fingerprint → Tenant needs both.
    expect(await rowsOf('MATCH (e:EmpireEvent)-[*1..3]-(x) WHERE x.kind = \'Tenant\' RETURN DISTINCT x.key', empireOnly)).toEqual([]);
    expect((await rowsOf('MATCH (k:Key) RETURN k.key AS key', empireOnly)).map((r) => r.key)).toEqual([keyId]);

    const clusters = await t.tokenWith(['read:empire', 'read:clusters', 'read:tenants']);
    expect(await rowsOf('MATCH (t:Tenant) RETURN t.key AS slug ORDER BY slug', clusters)).toEqual([
      { slug: 'agent-api' },
      { slug: 'lab-only-tenant' },
      { slug: 'quiet-site' },
      { slug: 'shop-eu' },
      { slug: 'shop-us' },
    ]);

    const bound = await tokenBoundTo(t, ['read:empire'], ['probe-kit']);
    const seen = await rowsOf('MATCH (e:EmpireEvent)-[:EMITTED_BY]->(t:Toolset) RETURN t.key AS toolset, count(e) AS events', bound);
    expect(seen).toEqual([{ toolset: 'probe-kit', events: 1 }]);
    expect(await rowsOf(`MATCH (i:Incident) RETURN i.key`, bound)).toEqual([]);
  });

  it('hides from a bound token a tenant or fingerprint that only another toolset\'s events name, until its own or a honeypot names it too', async () => {
    const reads = ['read:empire', 'read:tenants', 'read:clusters'] as const;
    const probe = await tokenBoundTo(t, [...reads], ['probe-kit']);
    const lab = await tokenBoundTo(t, [...reads], ['crawler-lab']);
    const admin = undefined;
    const tenants = async (token?: string) => (await rowsOf('MATCH (t:Tenant) RETURN t.key AS slug ORDER BY slug', token)).map((r) => r.slug);
    const labFingerprint = "MATCH (f:Fingerprint {key: 'lab-only-site/fp_0000000000000001'}) RETURN f.key";
    expect(await tenants(admin)).toContain('lab-only-tenant');
    expect(await tenants(lab)).toContain('lab-only-tenant');
    expect(await tenants(probe)).toEqual(['agent-api', 'quiet-site', 'shop-eu', 'shop-us']);
    expect(await rowsOf(labFingerprint, lab)).toHaveLength(1);
    expect(await rowsOf(labFingerprint, probe)).toEqual([]);
    // A fingerprint a honeypot saw belongs to no toolset, though crawler-lab's event names it too.
    expect(await rowsOf(`MATCH (f:Fingerprint {key: '${gptFingerprint}'}) RETURN f.key AS key`, probe)).toEqual([{ key: gptFingerprint }]);
    // Nor can a walk pass through it.
    expect(await rowsOf("MATCH (x)-[*1..4]-(t:Tenant {key: 'lab-only-tenant'}) RETURN count(*) AS n", probe)).toEqual([{ n: 0 }]);

    // probe-kit's own event names the tenant: now probe-kit sees it too (and still not the fingerprint).
    expect((await ingestEmpire(t, 'probe-kit', [{ id: 'p-2', eventType: 'probe.sent', tenant: 'lab-only-tenant' }])).statusCode).toBe(200);
    clock.advance(2 * MINUTE);
    await runJob(t, 'graph-materialise');
    expect(await tenants(probe)).toContain('lab-only-tenant');
    expect(await rowsOf(labFingerprint, probe)).toEqual([]);
    // Registered as a honeypot tenant, it belongs to no toolset: every token with read:tenants sees it.
    const other = await tokenBoundTo(t, [...reads], ['third-kit']);
    expect(await tenants(other)).not.toContain('lab-only-tenant');
    await createTenant(t, 'lab-only-tenant');
    clock.advance(2 * MINUTE);
    await runJob(t, 'graph-materialise');
    expect(await tenants(other)).toContain('lab-only-tenant');
  });

  it('draws graph queries from their own bounded pool of work slots', () => {
    expect(t.app.endpoints.find((e) => e.id === 'runGraphQuery')!.concurrency).toBe('graph-query');
    expect(t.app.server.concurrencyLimits['graph-query'].capacity).toBe(4);
  });

  it('answers 400 with the position for invalid text and refuses anything that writes', async () => {
    const bad = await query({ query: 'MATCH (n:Toolset)\nRETURN n.key AS' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query', line: 2 });
    for (const text of ["CREATE (n:Toolset {key: 'x'})", 'MATCH (n) DETACH DELETE n', "MATCH (n:Toolset) SET n.key = 'y' RETURN n"]) {
      const res = await query({ query: text });
      expect(res.statusCode, text).toBe(400);
      expect(res.json().reason).toBe('invalid-query');
    }
    expect((await query({ query: 'MATCH (n:Secret) RETURN n' })).json().reason).toBe('invalid-query');
    // Nesting deep enough to overflow the parser's stack is a 400 like any other bad text.
    for (const text of [`MATCH (n) WHERE ${'('.repeat(1900)}n.key = 'a'${')'.repeat(1900)} RETURN n`, `MATCH (n) WHERE ${'NOT '.repeat(950)}n.key = 'a' RETURN n`]) {
      const res = await query({ query: text });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query' });
    }
    expect((await query({ query: 'MATCH (n:Toolset) RETURN n', limit: 1001 })).statusCode).toBe(400);
  });

  it('serves the materialiser status and SLO after the job, and replays its run to a match', async () => {
    const status = await t.call({ method: 'GET', url: `${V1}/empire/graph/materialiser` });
    expect(status.statusCode).toBe(200);
    const body = status.json();
    expect(body.latestRun).toMatchObject({ outcome: 'ok' });
    expect(body.totals.nodes).toBeGreaterThan(10);
    // The three made here, the agent API's own tenant (OBSERVATORY_AGENT_API_TENANT) and lab-only-tenant.
    expect(body.nodesByKind.find((k: { kind: string }) => k.kind === 'Tenant').count).toBe(5);
    const slo = (await t.call({ method: 'GET', url: `${V1}/empire/graph/slo` })).json();
    expect(slo).toMatchObject({ schema: 'svc-empire-graph-slo.v1', overallBadge: 'green' });
    const replay = await t.call({ method: 'GET', url: `${V1}/empire/graph/replay/${body.latestRun.id}` });
    expect(replay.json()).toMatchObject({ matches: true, addedNodes: [], removedNodes: [], addedEdges: [], removedEdges: [] });
    expect(replay.json().liveDigest).toBe(replay.json().storedDigest);
  });

  it('fires a graph_lag_gte rule from the real lag once the job stops running', async () => {
    const rule = await t.call({
      method: 'POST',
      url: `${V1}/empire/crawler-lab/alerts`,
      payload: { name: 'Graph behind', predicate: { kind: 'graph_lag_gte', lagSec: 900, nodeKind: 'EmpireEvent' }, destinations: [{ kind: 'webhook', url: 'https://alerts.example.com/graph', secret: 'graph-hook-secret-0123456789' }] },
    });
    expect(rule.statusCode, rule.body).toBe(200);
    const lastFired = async () =>
      ((await t.call({ method: 'GET', url: `${V1}/empire/crawler-lab/alerts` })).json().rules as { id: string; lastFiredAt: string | null }[]).find((r) => r.id === rule.json().id)!.lastFiredAt;
    clock.advance(2 * MINUTE);
    await runJob(t, 'graph-materialise');
    clock.advance(2 * MINUTE);
    expect((await runJob(t, 'empire-alert-evaluate')).fired).toBe(0);
    expect(await lastFired()).toBeNull();
    // No materialiser run for 15 minutes: EmpireEvent is now 18 minutes behind (60 s settle margin included).
    clock.advance(15 * MINUTE);
    expect((await runJob(t, 'empire-alert-evaluate')).fired).toBe(1);
    expect(await lastFired()).toBe(clock.now().toISOString());
  });
});
