import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../app.ts';
import { closedPort, type Receiver, startReceiver } from '../../../platform/outbound/test-receiver.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { tokenBoundTo } from '../../../../test/helpers/empire.ts';

/**
 * The cross-toolset restore view (docs/backups.md, "Cross-toolset restore") against real peers:
 * this service's own listening port (its bridge verify endpoint restores its newest snapshot), a
 * second instance holding another bridge token, a dead port, a peer that never answers and one that
 * answers something else. Every failure is a row; the call itself always answers 200.
 */

const TOKEN = 'bridge-token-primary-0123456789abcdefghij';
const OTHER_TOKEN = 'bridge-token-another-0123456789abcdefghij';

let t: TestApp;
let backupDir: string;
let port: number;
let deadPort: number;
let hang: Receiver;
let plain: Receiver;
const others: App[] = [];

const verifyPath = `${V1}/backups/bridge/verify`;
const selfUrl = () => `http://127.0.0.1:${port}${verifyPath}`;

interface Row {
  toolset: string;
  database: string;
  vercelProject: string | null;
  outcome: string;
  latestSnapshotAt: string | null;
  lastVerifiedAt: string | null;
  errorText: string | null;
  badge: string;
}

async function view(app?: App) {
  const res = app
    ? await app.server.inject({ method: 'GET', url: `${V1}/backups/cross-toolset`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    : await t.call({ method: 'GET', url: `${V1}/backups/cross-toolset` });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expect(body.schema).toBe('svc-cross-toolset-restore.v1');
  return body as { totalToolsets: number; overall: string; counts: Record<string, number>; rows: Row[] };
}

async function register(toolset: string, verifyUrl: string, extra: Record<string, unknown> = {}) {
  const res = await t.call({ method: 'PUT', url: `${V1}/backups/toolsets/${toolset}`, payload: { verifyUrl, database: 'observatory', ...extra } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

beforeAll(async () => {
  backupDir = await mkdtemp(join(tmpdir(), 'obs-cross-'));
  port = await closedPort();
  deadPort = await closedPort();
  hang = await startReceiver();
  hang.respond = () => 'hang';
  plain = await startReceiver();
  t = await startTestApp({
    env: {
      OBSERVATORY_BACKUP_DIR: backupDir,
      OBSERVATORY_BRIDGE_TOKEN: TOKEN,
      OBSERVATORY_BRIDGE_PEER_HOSTS: '127.0.0.1, Peer.Example.com',
      OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
      OBSERVATORY_OUTBOUND_ALLOWED_PORTS: [port, deadPort, hang.port, plain.port].join(','),
      // A restore of this service's own database answers the bridge call: give it time.
      OBSERVATORY_CROSS_TOOLSET_TIMEOUT_MS: '120000',
      OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0',
    },
  });
  await t.app.server.listen({ port, host: '127.0.0.1' });
}, 120_000);
afterAll(async () => {
  for (const app of others) await app.close();
  await t?.close();
  await hang?.close();
  await plain?.close();
  await rm(backupDir, { recursive: true, force: true });
});

describe('cross-toolset restore', () => {
  it('is unknown with no toolset registered', async () => {
    expect(await view()).toMatchObject({ totalToolsets: 0, overall: 'unknown', counts: { ok: 0, drift: 0, error: 0, skipped: 0 }, rows: [] });
  });

  it('asks this service through its own port: skipped before any snapshot, then ok with a real restore, audited as the bridge', async () => {
    const created = await register('self-observatory', selfUrl(), { vercelProject: 'observatory-web' });
    expect(created).toMatchObject({ ok: true, created: true, toolset: { toolset: 'self-observatory', verifyUrl: selfUrl(), database: 'observatory', vercelProject: 'observatory-web', updatedBy: 'admin' } });

    const before = await view();
    expect(before).toMatchObject({ totalToolsets: 1, overall: 'yellow', counts: { ok: 0, drift: 0, error: 0, skipped: 1 } });
    expect(before.rows[0]).toEqual({
      toolset: 'self-observatory',
      database: 'observatory',
      vercelProject: 'observatory-web',
      outcome: 'skipped',
      latestSnapshotAt: null,
      lastVerifiedAt: null,
      errorText: 'no snapshot of observatory exists yet',
      badge: 'yellow',
    });

    const snapshot = await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {} });
    expect(snapshot.statusCode, snapshot.body).toBe(200);
    const after = await view();
    expect(after).toMatchObject({ totalToolsets: 1, overall: 'green', counts: { ok: 1, drift: 0, error: 0, skipped: 0 } });
    expect(after.rows[0]).toMatchObject({ outcome: 'ok', badge: 'green', errorText: null, latestSnapshotAt: snapshot.json().snapshot.takenAt });
    expect(after.rows[0]!.lastVerifiedAt).not.toBeNull();

    // The restore the peer asked for is a verification like any other, audited as done by `bridge`.
    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit`, query: { verb: 'backup.verify' } })).json();
    expect(audit.rows[0]).toMatchObject({ actor: 'bridge', verb: 'backup.verify' });
    const ladder = (await t.call({ method: 'GET', url: `${V1}/backups/ladder` })).json();
    expect(ladder.rows[0]).toMatchObject({ outcome: 'ok', trigger: 'manual' });
  }, 240_000);

  it('lists a dead port and a peer answering something else as error rows, with the bridge header sent', async () => {
    await register('dead-peer', `http://127.0.0.1:${deadPort}${verifyPath}`);
    await register('plain-peer', `${plain.origin}/verify?x=1`);
    const result = await view();
    expect(result).toMatchObject({ totalToolsets: 3, overall: 'red', counts: { ok: 1, drift: 0, error: 2, skipped: 0 } });
    const byName = Object.fromEntries(result.rows.map((r) => [r.toolset, r]));
    expect(result.rows.map((r) => r.toolset)).toEqual(['dead-peer', 'plain-peer', 'self-observatory']);
    expect(byName['dead-peer']).toMatchObject({ outcome: 'error', badge: 'red', latestSnapshotAt: null, lastVerifiedAt: null });
    expect(byName['dead-peer']!.errorText).toMatch(/ECONNREFUSED/);
    expect(byName['plain-peer']).toMatchObject({ outcome: 'error', errorText: 'HTTP 200: the answer is not JSON' });
    expect(byName['self-observatory']).toMatchObject({ outcome: 'ok' });
    const asked = plain.to('/verify?x=1');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.method).toBe('POST');
    expect(asked[0]!.headers['x-observatory-bridge']).toBe(TOKEN);
    expect(JSON.parse(asked[0]!.body)).toEqual({ database: 'observatory' });
  }, 240_000);

  it('from an instance holding another bridge token: 401 rows for this service, and a timeout row for a peer that never answers', async () => {
    await register('hang-peer', `${hang.origin}/verify`);
    const other = await t.secondInstance({ OBSERVATORY_BRIDGE_TOKEN: OTHER_TOKEN, OBSERVATORY_CROSS_TOOLSET_TIMEOUT_MS: '500' });
    others.push(other);
    const began = Date.now();
    const result = await view(other);
    expect(Date.now() - began).toBeLessThan(20_000);
    const byName = Object.fromEntries(result.rows.map((r) => [r.toolset, r]));
    expect(byName['self-observatory']).toMatchObject({ outcome: 'error', badge: 'red', errorText: 'HTTP 401 unauthorized: The bridge token is not valid.' });
    expect(byName['hang-peer']).toMatchObject({ outcome: 'error', errorText: 'timed out after 500 ms' });
    expect(result).toMatchObject({ overall: 'red', counts: { ok: 0, error: 4 } });
    expect(hang.to('/verify')[0]!.headers['x-observatory-bridge']).toBe(OTHER_TOKEN);

    const removed = await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/hang-peer` });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.json()).toMatchObject({ ok: true, toolset: { toolset: 'hang-peer' } });
    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit`, query: { verb: 'backup.toolset-remove' } })).json();
    expect(audit.rows[0]).toMatchObject({ target: 'backup-toolset:hang-peer', after: null, before: { verifyUrl: `${hang.origin}/verify` } });
    expect((await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/hang-peer` })).statusCode).toBe(404);
  }, 240_000);

  it('sends the bridge token only to hosts still in OBSERVATORY_BRIDGE_PEER_HOSTS', async () => {
    const other = await t.secondInstance({ OBSERVATORY_BRIDGE_PEER_HOSTS: 'peer.example.com' });
    others.push(other);
    const seen = plain.requests.length;
    const result = await view(other);
    expect(result.rows.every((r) => r.outcome === 'error' && /^not asked: its host 127\.0\.0\.1 is not in OBSERVATORY_BRIDGE_PEER_HOSTS/.test(r.errorText ?? ''))).toBe(true);
    expect(plain.requests.length).toBe(seen);
    const none = await t.secondInstance({ OBSERVATORY_BRIDGE_PEER_HOSTS: '' });
    others.push(none);
    const refused = await none.server.inject({
      method: 'PUT',
      url: `${V1}/backups/toolsets/any-peer`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { verifyUrl: `http://127.0.0.1:${port}${verifyPath}`, database: 'x' },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ reason: 'outbound-refused', field: 'body.verifyUrl' });
    expect(refused.json().human).toMatch(/OBSERVATORY_BRIDGE_PEER_HOSTS is empty/);
  });

  it('without a bridge token asks nobody (skipped rows) and refuses bridge calls', async () => {
    const other = await t.secondInstance({ OBSERVATORY_BRIDGE_TOKEN: '' });
    others.push(other);
    const seen = plain.requests.length;
    const result = await view(other);
    expect(result).toMatchObject({ overall: 'yellow', counts: { ok: 0, drift: 0, error: 0, skipped: 3 } });
    expect(result.rows.every((r) => r.outcome === 'skipped' && r.errorText === 'OBSERVATORY_BRIDGE_TOKEN is not set on this deployment, so the toolset was not asked')).toBe(true);
    expect(plain.requests.length).toBe(seen);
    const refused = await other.server.inject({ method: 'POST', url: verifyPath, headers: { 'x-observatory-bridge': TOKEN }, payload: {} });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().human).toMatch(/no OBSERVATORY_BRIDGE_TOKEN/);
  });
});

describe('the bridge verify endpoint', () => {
  it('takes the bridge token, or an operator credential; 404 for another database', async () => {
    const bridged = await t.call({ method: 'POST', url: verifyPath, token: null, headers: { 'x-observatory-bridge': TOKEN }, payload: { database: 'observatory' } });
    expect(bridged.statusCode, bridged.body).toBe(200);
    expect(bridged.json()).toMatchObject({ schema: 'svc-backup-bridge-verify.v1', database: 'observatory', outcome: 'ok', errorText: null, vercelProject: null });
    const operator = await t.call({ method: 'POST', url: verifyPath, payload: {} });
    expect(operator.statusCode, operator.body).toBe(200);
    const other = await t.call({ method: 'POST', url: verifyPath, token: null, headers: { 'x-observatory-bridge': TOKEN }, payload: { database: 'billing' } });
    expect(other.statusCode).toBe(404);
    expect(other.json().human).toMatch(/does not snapshot a database named billing/);
    expect((await t.call({ method: 'POST', url: verifyPath, token: null, headers: { 'x-observatory-bridge': OTHER_TOKEN }, payload: {} })).statusCode).toBe(401);
    expect((await t.call({ method: 'POST', url: verifyPath, token: null, payload: {} })).statusCode).toBe(401);
    expect((await t.call({ method: 'POST', url: verifyPath, token: await t.tokenWith(['read:empire']), payload: {} })).statusCode).toBe(403);
  }, 240_000);

  it('is no credential anywhere else, even with the right token', async () => {
    for (const [method, url] of [
      ['GET', `${V1}/backups/cross-toolset`],
      ['GET', `${V1}/backups/drills`],
      ['POST', `${V1}/backups/drills/run`],
      ['POST', `${V1}/backups/verify`],
      ['GET', `${V1}/account`],
    ] as const) {
      const res = await t.call({ method, url, token: null, headers: { 'x-observatory-bridge': TOKEN }, ...(method === 'POST' ? { payload: {} } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
    }
  });
});

describe('toolset registration', () => {
  it('replaces a registration (created false, audited with before and after) and lists them', async () => {
    const replaced = await register('plain-peer', `${plain.origin}/other`, { vercelProject: null });
    expect(replaced).toMatchObject({ created: false, toolset: { verifyUrl: `${plain.origin}/other`, vercelProject: null } });
    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit`, query: { verb: 'backup.toolset-register' } })).json();
    expect(audit.rows[0]).toMatchObject({ target: 'backup-toolset:plain-peer', before: { verifyUrl: `${plain.origin}/verify?x=1` }, after: { verifyUrl: `${plain.origin}/other` } });
    const list = await t.call({ method: 'GET', url: `${V1}/backups/toolsets` });
    expect(list.statusCode).toBe(200);
    expect(list.json().toolsets.map((r: { toolset: string }) => r.toolset)).toEqual(['dead-peer', 'plain-peer', 'self-observatory']);
  });

  it('refuses unusable URLs and names by the outbound policy, and callers without the scope', async () => {
    const strict = await t.secondInstance({ OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '0', OBSERVATORY_OUTBOUND_ALLOWED_PORTS: '80,443' });
    others.push(strict);
    const put = (toolset: string, payload: unknown, token = ADMIN_TOKEN) =>
      strict.server.inject({ method: 'PUT', url: `${V1}/backups/toolsets/${toolset}`, headers: { authorization: `Bearer ${token}` }, payload: payload as object });
    const cases: [string, unknown, RegExp][] = [
      ['peer-one', { verifyUrl: 'http://127.0.0.1/verify', database: 'x' }, /127\.0\.0\.1 is not a public address/],
      ['peer-one', { verifyUrl: 'https://localhost/verify', database: 'x' }, /loopback name/],
      ['peer-one', { verifyUrl: 'https://peer.example.com:8443/verify', database: 'x' }, /port 8443 is not an allowed outbound port/],
      ['peer-one', { verifyUrl: 'https://user:pw@peer.example.com/verify', database: 'x' }, /user name or password/],
      ['peer-one', { verifyUrl: 'http://peer.example.com/verify', database: 'x' }, /only sent over https/],
      ['peer-one', { verifyUrl: 'https://attacker.example.net/verify', database: 'x' }, /host attacker\.example\.net is not in OBSERVATORY_BRIDGE_PEER_HOSTS/],
    ];
    for (const [toolset, payload, human] of cases) {
      const res = await put(toolset, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ reason: 'outbound-refused', field: 'body.verifyUrl' });
      expect(res.json().human).toMatch(human);
    }
    for (const [toolset, payload] of [
      ['ab', { verifyUrl: 'https://peer.example.com/v', database: 'x' }],
      ['peer-one', { verifyUrl: 'ftp://peer.example.com/v', database: 'x' }],
      ['peer-one', { verifyUrl: 'https://peer.example.com/v', database: 'bad name' }],
      ['peer-one', { verifyUrl: 'https://peer.example.com/v' }],
      ['peer-one', { verifyUrl: 'https://peer.example.com/v', database: 'x', extra: 1 }],
    ] as const) {
      expect((await put(toolset, payload)).statusCode, `${toolset} ${JSON.stringify(payload)}`).toBe(400);
    }
    const accepted = await put('peer-one', { verifyUrl: 'https://peer.example.com/verify', database: 'x' });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect((await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/peer-one` })).statusCode).toBe(200);

    const reader = await t.tokenWith(['read:empire']);
    const writer = await t.tokenWith(['write:alerts']);
    expect((await put('peer-two', { verifyUrl: 'https://peer.example.com/verify', database: 'x' }, reader)).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/dead-peer`, token: reader })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/cross-toolset`, token: writer })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/toolsets`, token: writer })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/toolsets`, token: reader })).statusCode).toBe(200);
  });

  it('lets a token bound to toolsets register and remove its own toolsets only', async () => {
    const bound = await tokenBoundTo(t, ['write:alerts', 'read:empire'], ['own-lab']);
    const payload = { verifyUrl: `${plain.origin}/own`, database: 'observatory' };
    const other = await t.call({ method: 'PUT', url: `${V1}/backups/toolsets/plain-peer`, token: bound, payload });
    expect(other.statusCode).toBe(403);
    expect(other.json().human).toContain('plain-peer');
    expect((await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/dead-peer`, token: bound })).statusCode).toBe(403);
    expect((await t.call({ method: 'PUT', url: `${V1}/backups/toolsets/own-lab`, token: bound, payload })).statusCode).toBe(200);
    expect((await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/own-lab`, token: bound })).statusCode).toBe(200);
    const list = (await t.call({ method: 'GET', url: `${V1}/backups/toolsets` })).json().toolsets;
    expect(list.find((r: { toolset: string }) => r.toolset === 'plain-peer').verifyUrl).toBe(`${plain.origin}/other`);
  });

  it('caps the registrations at 100', async () => {
    await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/self-observatory` });
    for (let i = 0; (await t.call({ method: 'GET', url: `${V1}/backups/toolsets` })).json().toolsets.length < 100; i++) {
      await register(`cap-peer-${i}`, `${plain.origin}/cap`);
    }
    const over = await t.call({ method: 'PUT', url: `${V1}/backups/toolsets/cap-peer-extra`, payload: { verifyUrl: `${plain.origin}/cap`, database: 'observatory' } });
    expect(over.statusCode).toBe(409);
    expect(over.json()).toMatchObject({ reason: 'conflict', human: 'At most 100 toolsets may be registered; remove one first.' });
    // Replacing one that exists is still allowed at the cap.
    expect((await t.call({ method: 'PUT', url: `${V1}/backups/toolsets/cap-peer-0`, payload: { verifyUrl: `${plain.origin}/cap2`, database: 'observatory' } })).statusCode).toBe(200);
  }, 120_000);
});
