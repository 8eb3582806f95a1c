import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { ingestEmpire, tokenBoundTo } from '../../../test/helpers/empire.ts';
import { freePort } from '../../../test/helpers/ports.ts';

/**
 * Three deployments on loopback, each its own app on its own fresh database with its own
 * OBSERVATORY_REGION, sharing the bridge token: the fan-out over real HTTP (docs/federation/README.md).
 */

const BRIDGE_TOKEN = 'bridge-token-for-federation-tests-0123456789abcdef';
const REGIONS = ['alpha', 'bravo', 'charlie'] as const;

interface Deployment {
  region: string;
  t: TestApp;
  port: number;
  baseUrl: string;
}

const deployments: Deployment[] = [];
const extraServers: http.Server[] = [];

async function serve(handler: http.RequestListener): Promise<number> {
  const server = http.createServer(handler);
  extraServers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const d = (region: string) => deployments.find((x) => x.region === region)!;

async function register(from: Deployment, key: string, baseUrl: string, extra: Record<string, unknown> = {}) {
  const res = await from.t.call({ method: 'POST', url: `${V1}/empire/regions`, payload: { key, baseUrl, ...extra } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

let slowPort = 0;
let garblePort = 0;
let deadPort = 0;
let allowedPorts = '';

beforeAll(async () => {
  // Reserve ports for the peers first: every deployment's allow-list names all of them.
  slowPort = await serve(() => {
    // Never answers: the caller's deadline ends the call.
  });
  garblePort = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"tuple": "not a tuple"}');
  });
  deadPort = await freePort();
  const ports = [await freePort(), await freePort(), await freePort()];
  allowedPorts = [...ports, slowPort, garblePort, deadPort].join(',');
  const started: TestApp[] = [];
  for (const region of REGIONS) {
    // Each its own fresh database (startTestApp creates one per call).
    started.push(
      await startTestApp({
        env: {
          OBSERVATORY_REGION: region,
          OBSERVATORY_BRIDGE_TOKEN: BRIDGE_TOKEN,
          OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
          OBSERVATORY_BRIDGE_PEER_HOSTS: '127.0.0.1',
          OBSERVATORY_OUTBOUND_ALLOWED_PORTS: allowedPorts,
          OBSERVATORY_FEDERATION_TIMEOUT_MS: '1500',
          OBSERVATORY_FEDERATION_CONCURRENCY: '2',
        },
      }),
    );
  }
  for (const [i, t] of started.entries()) {
    const port = ports[i]!;
    await t.app.server.listen({ host: '127.0.0.1', port });
    deployments.push({ region: REGIONS[i]!, t, port, baseUrl: `http://127.0.0.1:${port}` });
  }
  // alpha knows every region; its own row too.
  for (const x of deployments) await register(d('alpha'), x.region, x.baseUrl, x.region === 'alpha' ? { isPrimary: true } : {});
}, 120_000);

afterAll(async () => {
  for (const s of extraServers) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  for (const x of deployments) await x.t.close();
});

describe('federation across three loopback deployments', () => {
  it('lists the registry with the current region; a fresh deployment answers the seed', async () => {
    const listed = (await d('alpha').t.call({ method: 'GET', url: `${V1}/empire/regions` })).json();
    expect(listed.currentRegion).toBe('alpha');
    expect(listed.seeded).toBe(false);
    expect(listed.rows.map((r: { key: string }) => r.key)).toEqual(['alpha', 'bravo', 'charlie']);
    expect(listed.rows.filter((r: { isPrimary: boolean }) => r.isPrimary).map((r: { key: string }) => r.key)).toEqual(['alpha']);
    const seed = (await d('bravo').t.call({ method: 'GET', url: `${V1}/empire/regions` })).json();
    expect(seed).toMatchObject({ currentRegion: 'bravo', seeded: true, rows: [{ key: 'bravo', status: 'active', isPrimary: true, isCurrent: true, updatedAt: null }] });
  });

  it('fans out: parity matched, every region participating, the federation digest stable', async () => {
    const res = await d('alpha').t.call({ method: 'POST', url: `${V1}/empire/region-digest`, payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.participating).toEqual(['alpha', 'bravo', 'charlie']);
    expect(body.failed).toEqual([]);
    expect(body.migrationParity).toBe('matched');
    expect(body.migrationDriftDetails).toEqual([]);
    expect(body.tuples.map((t: { regionKey: string }) => t.regionKey)).toEqual(['alpha', 'bravo', 'charlie']);
    const local = (await d('bravo').t.call({ method: 'GET', url: `${V1}/empire/region-digest` })).json();
    expect(body.tuples[1]).toEqual(local.tuple);
    const again = (await d('alpha').t.call({ method: 'POST', url: `${V1}/empire/region-digest`, payload: {} })).json();
    expect(again.federationDigest).toBe(body.federationDigest);
    // Replay against the pinned digest and tuples: nothing drifted.
    const replay = (await d('alpha').t.call({ method: 'POST', url: `${V1}/empire/federation-replay`, payload: { pinnedDigest: body.federationDigest, pinnedTuples: body.tuples } })).json();
    expect(replay).toMatchObject({ matches: true, liveDigest: body.federationDigest, pinnedTuplesDigest: body.federationDigest, migrationParity: 'matched' });
    expect(replay.driftDetail.every((x: { drifted: boolean }) => !x.drifted)).toBe(true);
  });

  it('an extra migration on one region: drifted, that region in migrationDriftDetails, replay shows it', async () => {
    const before = (await d('alpha').t.call({ method: 'POST', url: `${V1}/empire/region-digest`, payload: {} })).json();
    const charlie = d('charlie').t.app.database.db;
    await charlie.execute(sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('extra-migration-for-test', 1)`);
    try {
      const after = (await d('alpha').t.call({ method: 'POST', url: `${V1}/empire/region-digest`, payload: {} })).json();
      expect(after.migrationParity).toBe('drifted');
      expect(after.migrationDriftDetails.map((x: { regionKey: string }) => x.regionKey)).toEqual(['charlie']);
      expect(after.federationDigest).not.toBe(before.federationDigest);
      const replay = (await d('alpha').t.call({ method: 'POST', url: `${V1}/empire/federation-replay`, payload: { pinnedDigest: before.federationDigest, pinnedTuples: before.tuples } })).json();
      expect(replay.matches).toBe(false);
      expect(replay.migrationParity).toBe('drifted');
      expect(replay.driftDetail.filter((x: { drifted: boolean }) => x.drifted).map((x: { regionKey: string }) => x.regionKey)).toEqual(['charlie']);
      const slo = (await d('alpha').t.call({ method: 'GET', url: `${V1}/empire/region-slo` })).json();
      expect(slo.rows.map((r: { regionKey: string; replayParity: string }) => [r.regionKey, r.replayParity])).toEqual([
        ['alpha', 'matched'],
        ['bravo', 'matched'],
        ['charlie', 'drifted'],
      ]);
    } finally {
      await charlie.execute(sql`DELETE FROM drizzle.__drizzle_migrations WHERE hash = 'extra-migration-for-test'`);
    }
  });

  it('the region-parity detector opens events for a drifted and a stopped region (echo), and the job clears them; the parity control follows', async () => {
    const alpha = d('alpha').t;
    const charlie = d('charlie').t.app.database.db;
    type Event = { id: string; kind: string; source: string; sourceId: string; severity: string; status: string };
    const scan = async () => {
      const res = await alpha.call({ method: 'POST', url: `${V1}/trust/drift`, payload: { action: 'auto-open' } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { openedNow: Event[]; alreadyOpen: number; detectorErrors: { detector: string }[] };
    };
    const parityEvents = (events: Event[]) => events.filter((e) => e.kind === 'region-parity').map((e) => [e.source, e.sourceId, e.severity]);
    const control = async () => {
      const run = await alpha.call({ method: 'POST', url: `${V1}/ops/jobs/compliance-evaluate/run`, payload: {} });
      expect(run.statusCode, run.body).toBe(200);
      const soc2 = (await alpha.call({ method: 'GET', url: `${V1}/compliance/frameworks/soc2` })).json();
      return soc2.controls.find((c: { controlId: string }) => c.controlId === 'CC9.1').latestOutcome as string;
    };
    expect(parityEvents((await scan()).openedNow)).toEqual([]);
    expect(await control()).toBe('pass');
    await charlie.execute(sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('extra-migration-for-drift', 1)`);
    await register(d('alpha'), 'echo', `http://127.0.0.1:${deadPort}`);
    try {
      const opened = await scan();
      expect(opened.detectorErrors).toEqual([]);
      expect(parityEvents(opened.openedNow).sort()).toEqual([
        ['region', 'charlie', 'critical'],
        ['region-unreachable', 'echo', 'major'],
      ]);
      // Unchanged: nothing new.
      const again = await scan();
      expect(parityEvents(again.openedNow)).toEqual([]);
      expect(again.alreadyOpen).toBeGreaterThanOrEqual(2);
      expect(await control()).toBe('fail');
    } finally {
      await charlie.execute(sql`DELETE FROM drizzle.__drizzle_migrations WHERE hash = 'extra-migration-for-drift'`);
      await register(d('alpha'), 'echo', `http://127.0.0.1:${deadPort}`, { status: 'retired' });
    }
    const run = await alpha.call({ method: 'POST', url: `${V1}/ops/jobs/drift-remediate/run`, payload: {} });
    expect(run.json().run, run.body).toMatchObject({ outcome: 'ok' });
    const resolved = (await alpha.call({ method: 'GET', url: `${V1}/trust/drift`, query: { status: 'auto-resolved', kind: 'region-parity' } })).json().events as Event[];
    expect(resolved.map((e) => e.sourceId).sort()).toEqual(['charlie', 'echo']);
    expect(await control()).toBe('pass');
  });

  it('a stopped region is listed in failed while the others answer', async () => {
    // A fourth registry row at a port nobody listens on any more (a stopped deployment).
    const port = deadPort;
    await register(d('alpha'), 'delta', `http://127.0.0.1:${port}`);
    try {
      const body = (await d('alpha').t.call({ method: 'POST', url: `${V1}/empire/region-digest`, payload: {} })).json();
      expect(body.participating).toEqual(['alpha', 'bravo', 'charlie']);
      expect(body.failed).toEqual([{ region: 'delta', reason: 'unreachable' }]);
      const overview = (await d('alpha').t.call({ method: 'GET', url: `${V1}/empire/overview/federated` })).json();
      expect(overview.participatingRegions).toEqual(['alpha', 'bravo', 'charlie']);
      expect(overview.failedRegions).toEqual([{ region: 'delta', reason: 'unreachable' }]);
    } finally {
      await register(d('alpha'), 'delta', `http://127.0.0.1:${port}`, { status: 'retired' });
    }
  });

  it('a slow region times out, a garbled answer is bad-answer; neither is retried or thrown', async () => {
    await register(d('alpha'), 'slow', `http://127.0.0.1:${slowPort}`);
    await register(d('alpha'), 'garbled', `http://127.0.0.1:${garblePort}`);
    try {
      const started = Date.now();
      const body = (await d('alpha').t.call({ method: 'POST', url: `${V1}/empire/region-digest`, payload: {} })).json();
      expect(Date.now() - started).toBeLessThan(6000);
      expect(body.participating).toEqual(['alpha', 'bravo', 'charlie']);
      expect(body.failed).toEqual([
        { region: 'garbled', reason: 'bad-answer' },
        { region: 'slow', reason: 'timeout' },
      ]);
    } finally {
      await register(d('alpha'), 'slow', `http://127.0.0.1:${slowPort}`, { status: 'standby' });
      await register(d('alpha'), 'garbled', `http://127.0.0.1:${garblePort}`, { status: 'retired' });
    }
  });

  it('a wrong bridge token: 401 at the peer, bridge-token-refused at the caller', async () => {
    const peer = d('bravo');
    const wrong = await peer.t.call({ method: 'GET', url: `${V1}/empire/region-digest`, token: null, headers: { 'x-observatory-bridge': 'x'.repeat(48) } });
    expect(wrong.statusCode).toBe(401);
    const right = await peer.t.call({ method: 'GET', url: `${V1}/empire/region-digest`, token: null, headers: { 'x-observatory-bridge': BRIDGE_TOKEN } });
    expect(right.statusCode, right.body).toBe(200);
    // A fourth deployment whose token differs asks the three.
    const stranger = await startTestApp({
      env: {
        OBSERVATORY_REGION: 'echo',
        OBSERVATORY_BRIDGE_TOKEN: 'a-different-bridge-token-0123456789abcdefghij',
        OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
        OBSERVATORY_BRIDGE_PEER_HOSTS: '127.0.0.1',
        OBSERVATORY_OUTBOUND_ALLOWED_PORTS: allowedPorts,
      },
    });
    try {
      for (const x of deployments) await register({ ...x, t: stranger } as Deployment, x.region, x.baseUrl);
      const body = (await stranger.call({ method: 'POST', url: `${V1}/empire/region-digest`, payload: {} })).json();
      expect(body.participating).toEqual(['echo']);
      expect(body.failed).toEqual(REGIONS.map((region) => ({ region, reason: 'bridge-token-refused' })));
    } finally {
      await stranger.close();
    }
  });

  it('the bridge opens only the read-only routes, and never a fan-out', async () => {
    const peer = d('alpha');
    const bridge = { token: null, headers: { 'x-observatory-bridge': BRIDGE_TOKEN } };
    expect((await peer.t.call({ method: 'GET', url: `${V1}/empire/region-slo?local=1`, ...bridge })).statusCode).toBe(200);
    expect((await peer.t.call({ method: 'GET', url: `${V1}/empire/overview`, ...bridge })).statusCode).toBe(200);
    expect((await peer.t.call({ method: 'GET', url: `${V1}/empire/region-slo`, ...bridge })).statusCode).toBe(403);
    expect((await peer.t.call({ method: 'GET', url: `${V1}/empire/overview?federated=1`, ...bridge })).statusCode).toBe(403);
    expect((await peer.t.call({ method: 'POST', url: `${V1}/empire/region-digest`, payload: {}, ...bridge })).statusCode).toBe(401);
    expect((await peer.t.call({ method: 'POST', url: `${V1}/empire/federation-replay`, payload: { pinnedDigest: '0'.repeat(64) }, ...bridge })).statusCode).toBe(401);
    expect((await peer.t.call({ method: 'GET', url: `${V1}/empire/overview/federated`, ...bridge })).statusCode).toBe(401);
    expect((await peer.t.call({ method: 'GET', url: `${V1}/empire/regions`, ...bridge })).statusCode).toBe(401);
    expect((await peer.t.call({ method: 'POST', url: `${V1}/empire/regions`, payload: { key: 'x', baseUrl: 'http://127.0.0.1:1' }, ...bridge })).statusCode).toBe(401);
  });

  it('merges the overview by toolset and narrows it for a bound token', async () => {
    await ingestEmpire(d('alpha').t, 'crawler-lab', [{ id: 'a-1', eventType: 'crawl.page' }]);
    await ingestEmpire(d('bravo').t, 'crawler-lab', [{ id: 'b-1', eventType: 'crawl.page' }, { id: 'b-2', eventType: 'crawl.page' }]);
    await ingestEmpire(d('charlie').t, 'other-lab', [{ id: 'c-1', eventType: 'crawl.page' }]);
    const merged = (await d('alpha').t.call({ method: 'GET', url: `${V1}/empire/overview/federated` })).json();
    const crawler = merged.toolsets.find((x: { toolset: string }) => x.toolset === 'crawler-lab');
    expect(crawler).toMatchObject({ events24h: 3, events7d: 3, perRegion: { alpha: 1, bravo: 2 } });
    expect(crawler.sparkline24h.reduce((a: number, b: number) => a + b, 0)).toBe(3);
    expect(merged.toolsets.map((x: { toolset: string }) => x.toolset)).toEqual(['crawler-lab', 'other-lab']);
    const viaQuery = (await d('alpha').t.call({ method: 'GET', url: `${V1}/empire/overview?federated=1` })).json();
    expect(viaQuery.schema).toBe('svc-empire-overview.v1');
    expect(viaQuery.toolsets).toEqual(merged.toolsets);
    const token = await tokenBoundTo(d('alpha').t, ['read:empire'], ['crawler-lab']);
    const narrowed = (await d('alpha').t.call({ method: 'GET', url: `${V1}/empire/overview/federated`, token })).json();
    expect(narrowed.toolsets.map((x: { toolset: string }) => x.toolset)).toEqual(['crawler-lab']);
    expect(JSON.stringify(narrowed)).not.toContain('other-lab');
    for (const [method, url] of [['GET', '/empire/region-digest'], ['POST', '/empire/region-digest'], ['GET', '/empire/region-slo']] as const) {
      const res = await d('alpha').t.call({ method, url: `${V1}${url}`, token, ...(method === 'POST' ? { payload: {} } : {}) });
      expect(res.statusCode, url).toBe(403);
    }
  });

  it('refuses a peer origin the token may not go to', async () => {
    const bad = await d('alpha').t.call({ method: 'POST', url: `${V1}/empire/regions`, payload: { key: 'evil', baseUrl: 'http://evil.example.com' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().reason).toBe('outbound-refused');
    const withPath = await d('alpha').t.call({ method: 'POST', url: `${V1}/empire/regions`, payload: { key: 'pathy', baseUrl: `${d('bravo').baseUrl}/api` } });
    expect(withPath.statusCode).toBe(400);
  });
});
