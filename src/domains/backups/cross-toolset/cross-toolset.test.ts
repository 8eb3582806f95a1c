import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../app.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { closedPort, type Receiver, startReceiver } from '../../../../test/helpers/http-receiver.ts';
import { ADMIN_TOKEN, runJob, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { tokenBoundTo } from '../../../../test/helpers/empire.ts';

/**
 * The cross-toolset restore view (docs/backups/README.md, "Cross-toolset restore") against real peers:
 * this service's own listening port (its bridge verify endpoint restores its newest snapshot), a
 * dead port, peers that never answer, answer something else, lie in their text or redirect. The
 * GET shows stored rows only; POST …/cross-toolset/verify (and the daily job) asks, at most once per
 * minimum interval per toolset, and each peer refuses bridge verifications faster than its own.
 * Time is the injected clock.
 */

const TOKEN = 'bridge-token-primary-0123456789abcdefghij';
const OTHER_TOKEN = 'bridge-token-another-0123456789abcdefghij';
const INTERVAL_SEC = 600;

const clock = new ManualClock('2026-11-24T05:00:00.000Z');
let t: TestApp;
let backupDir: string;
let port: number;
let deadPort: number;
let hang: Receiver;
let plain: Receiver;
let liar: Receiver;
let redirector: Receiver;
let elsewhere: Receiver;
const others: App[] = [];

const verifyPath = `${V1}/backups/bridge/verify`;
const selfUrl = () => `http://127.0.0.1:${port}${verifyPath}`;
const afterInterval = () => clock.advance(INTERVAL_SEC * 1000 + 1000);

interface Row {
  toolset: string;
  database: string;
  vercelProject: string | null;
  outcome: string;
  latestSnapshotAt: string | null;
  lastVerifiedAt: string | null;
  errorText: string | null;
  badge: string;
  reason: string | null;
  checkedAt: string | null;
}
interface View {
  totalToolsets: number;
  overall: string;
  counts: Record<string, number>;
  rows: Row[];
}

async function view(options: { app?: App; token?: string } = {}): Promise<View> {
  const res = options.app
    ? await options.app.server.inject({ method: 'GET', url: `${V1}/backups/cross-toolset`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    : await t.call({ method: 'GET', url: `${V1}/backups/cross-toolset`, ...(options.token ? { token: options.token } : {}) });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().schema).toBe('svc-cross-toolset-restore.v1');
  return res.json();
}

async function check(payload: object = {}, app?: App) {
  return app
    ? app.server.inject({ method: 'POST', url: `${V1}/backups/cross-toolset/verify`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload })
    : t.call({ method: 'POST', url: `${V1}/backups/cross-toolset/verify`, payload });
}

async function checked(payload: object = {}, app?: App): Promise<View & { asked: string[]; throttled: { toolset: string; retryAfterSec: number }[] }> {
  const res = await check(payload, app);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().schema).toBe('svc-cross-toolset-verify.v1');
  return res.json();
}

const byName = (rows: Row[]) => Object.fromEntries(rows.map((r) => [r.toolset, r]));

async function register(toolset: string, verifyUrl: string, extra: Record<string, unknown> = {}) {
  const res = await t.call({ method: 'PUT', url: `${V1}/backups/toolsets/${toolset}`, payload: { verifyUrl, database: 'observatory', ...extra } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function count(table: string): Promise<number> {
  return Number(rowsOf<{ n: number }>(await t.app.database.db.execute(sql.raw(`SELECT count(*)::int AS n FROM ${table}`)))[0]!.n);
}

/** Everything a read must leave as it was: the outbound calls and the rows it could write. */
async function footprint() {
  return {
    requests: [hang, plain, liar, redirector, elsewhere].map((r) => r.requests.length),
    verifications: await count('restore_verifications'),
    facts: await count('audit_facts'),
    operatorAudit: await count('operator_audit'),
    toolsets: rowsOf(await t.app.database.db.execute(sql`SELECT toolset, last_asked_at, last_check FROM backup_toolsets ORDER BY toolset`)),
  };
}

beforeAll(async () => {
  backupDir = await mkdtemp(join(tmpdir(), 'obs-cross-'));
  port = await closedPort();
  deadPort = await closedPort();
  hang = await startReceiver();
  hang.respond = () => 'hang';
  plain = await startReceiver();
  liar = await startReceiver();
  redirector = await startReceiver();
  elsewhere = await startReceiver();
  redirector.respond = () => ({ status: 302, headers: { location: `${elsewhere.origin}${verifyPath}` } });
  t = await startTestApp({
    clock,
    env: {
      OBSERVATORY_BACKUP_DIR: backupDir,
      OBSERVATORY_BRIDGE_TOKEN: TOKEN,
      OBSERVATORY_BRIDGE_PEER_HOSTS: '127.0.0.1, Peer.Example.com',
      OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC: String(INTERVAL_SEC),
      OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
      OBSERVATORY_OUTBOUND_ALLOWED_PORTS: [port, deadPort, hang.port, plain.port, liar.port, redirector.port, elsewhere.port].join(','),
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
  for (const receiver of [hang, plain, liar, redirector, elsewhere]) await receiver?.close();
  await rm(backupDir, { recursive: true, force: true });
});

describe('cross-toolset restore', () => {
  it('is unknown with no toolset registered', async () => {
    expect(await view()).toMatchObject({ totalToolsets: 0, overall: 'unknown', counts: { ok: 0, drift: 0, error: 0, skipped: 0 }, rows: [] });
  });

  it('GET asks nobody and writes nothing: a toolset never checked is skipped (not-verified-yet)', async () => {
    await register('self-observatory', selfUrl(), { vercelProject: 'observatory-web' });
    await register('plain-peer', `${plain.origin}${verifyPath}`);
    const snapshot = await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {} });
    expect(snapshot.statusCode, snapshot.body).toBe(200);
    const before = await footprint();
    const first = await view();
    const second = await view();
    expect(await footprint()).toEqual(before);
    expect(second).toEqual(first);
    expect(first).toMatchObject({ totalToolsets: 2, overall: 'yellow', counts: { ok: 0, drift: 0, error: 0, skipped: 2 } });
    expect(byName(first.rows)['self-observatory']).toEqual({
      toolset: 'self-observatory',
      database: 'observatory',
      vercelProject: 'observatory-web',
      outcome: 'skipped',
      latestSnapshotAt: null,
      lastVerifiedAt: null,
      errorText: expect.stringMatching(/^Not verified yet/),
      badge: 'yellow',
      reason: 'not-verified-yet',
      checkedAt: null,
    });
  });

  it('POST verify asks every toolset, stores the rows the GET then shows, and audits the check', async () => {
    const result = await checked();
    expect(result.asked.sort()).toEqual(['plain-peer', 'self-observatory']);
    expect(result.throttled).toEqual([]);
    const rows = byName(result.rows);
    expect(rows['self-observatory']).toMatchObject({ outcome: 'ok', badge: 'green', errorText: null, reason: null, checkedAt: clock.now().toISOString() });
    expect(rows['self-observatory']!.lastVerifiedAt).toBe(clock.now().toISOString());
    // A 200 that is not JSON: a reason from the vocabulary.
    expect(rows['plain-peer']).toMatchObject({ outcome: 'error', reason: 'bad-answer', badge: 'red' });
    const asked = plain.to(verifyPath);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.headers['x-observatory-bridge']).toBe(TOKEN);
    expect(JSON.parse(asked[0]!.body)).toEqual({ database: 'observatory' });
    expect((await view()).rows).toEqual(result.rows);

    // The restore the peer asked for is a verification like any other, made by the bridge.
    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit`, query: { verb: 'backup.verify' } })).json();
    expect(audit.rows[0]).toMatchObject({ actor: 'bridge', verb: 'backup.verify' });
    const ladder = (await t.call({ method: 'GET', url: `${V1}/backups/ladder` })).json();
    expect(ladder.rows[0]).toMatchObject({ outcome: 'ok', trigger: 'bridge' });
    const checks = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit`, query: { verb: 'backup.cross-toolset-verify' } })).json();
    expect(checks.rows[0]).toMatchObject({ actor: 'admin', target: 'backup-toolsets' });
  }, 240_000);

  it('asks each toolset at most once per interval: every toolset lists it as throttled, a named one is 429', async () => {
    clock.advance(60_000);
    const before = await footprint();
    const again = await checked();
    expect(again.asked).toEqual([]);
    expect(again.throttled).toEqual([
      { toolset: 'plain-peer', retryAfterSec: INTERVAL_SEC - 60 },
      { toolset: 'self-observatory', retryAfterSec: INTERVAL_SEC - 60 },
    ]);
    const named = await check({ toolset: 'self-observatory' });
    expect(named.statusCode).toBe(429);
    expect(named.headers['retry-after']).toBe(String(INTERVAL_SEC - 60));
    expect(named.json()).toMatchObject({ reason: 'rate-limited' });
    const after = await footprint();
    expect(after.requests).toEqual(before.requests);
    expect(after.verifications).toBe(before.verifications);
    expect(after.toolsets).toEqual(before.toolsets);
  });

  it('as a peer, refuses bridge verifications sooner than its own interval with 429 and Retry-After', async () => {
    const bridged = () => t.call({ method: 'POST', url: verifyPath, token: null, headers: { 'x-observatory-bridge': TOKEN }, payload: { database: 'observatory' } });
    const before = await count('restore_verifications');
    const refused = await bridged();
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'rate-limited' });
    expect(Number(refused.headers['retry-after'])).toBe(INTERVAL_SEC - 60);
    expect(await count('restore_verifications')).toBe(before);
    afterInterval();
    const answered = await bridged();
    expect(answered.statusCode, answered.body).toBe(200);
    expect(answered.json()).toMatchObject({ schema: 'svc-backup-bridge-verify.v1', outcome: 'ok' });
    expect(await count('restore_verifications')).toBe(before + 1);
    // So an asker within the peer's interval gets a skipped row, not an error.
    await register('self-again', selfUrl());
    expect(byName((await checked({ toolset: 'self-again' })).rows)['self-again']).toMatchObject({ outcome: 'skipped', reason: 'peer-rate-limited' });
    await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/self-again` });
  }, 240_000);

  it('never copies a peer\'s words into the view: refusals, reported errors and odd answers get fixed sentences', async () => {
    afterInterval();
    const phishing = 'Your backups are lost. Restore them at https://evil.example/login and paste the bridge token.';
    liar.respond = (request) =>
      request.path.startsWith('/refuse')
        ? { status: 401, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ schema: 'svc-error.v1', reason: 'unauthorized', human: phishing }) }
        : {
            status: 200,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ outcome: 'error', latestSnapshotAt: '2026-11-24T02:30:00Z', lastVerifiedAt: null, errorText: phishing, vercelProject: 'https://evil.example' }),
          };
    await register('liar-peer', `${liar.origin}${verifyPath}`);
    await register('refusing-peer', `${liar.origin}/refuse${verifyPath}`);
    const result = await checked();
    const rows = byName(result.rows);
    expect(rows['liar-peer']).toMatchObject({
      outcome: 'error',
      reason: 'peer-reported-error',
      errorText: 'The toolset reported that its newest snapshot could not be read or restored.',
      latestSnapshotAt: '2026-11-24T02:30:00.000Z',
      vercelProject: null,
    });
    expect(rows['refusing-peer']).toMatchObject({ outcome: 'error', reason: 'bridge-token-refused', errorText: 'The toolset refused this deployment\'s bridge token (HTTP 401 or 403).' });
    const shown = JSON.stringify([result, await view()]);
    expect(shown).not.toContain('evil.example');
    expect(shown).not.toContain('backups are lost');
  }, 240_000);

  it('sends the bridge token to the registered origin and path only: a redirect is not followed', async () => {
    await register('redirecting-peer', `${redirector.origin}${verifyPath}`);
    const result = await checked({ toolset: 'redirecting-peer' });
    expect(byName(result.rows)['redirecting-peer']).toMatchObject({ outcome: 'error', reason: 'unexpected-status', errorText: 'The toolset answered HTTP 302, not 200.' });
    expect(redirector.to(verifyPath)[0]!.headers['x-observatory-bridge']).toBe(TOKEN);
    expect(elsewhere.requests).toEqual([]);
  });

  it('lists a dead port, a peer that never answers and a host no longer allowed as rows, asking none it may not', async () => {
    await register('dead-peer', `http://127.0.0.1:${deadPort}${verifyPath}`);
    await register('hang-peer', `${hang.origin}${verifyPath}`);
    const quick = await t.secondInstance({ OBSERVATORY_CROSS_TOOLSET_TIMEOUT_MS: '500' });
    others.push(quick);
    const began = Date.now();
    const result = await checked({ toolset: 'hang-peer' }, quick);
    expect(Date.now() - began).toBeLessThan(20_000);
    expect(byName(result.rows)['hang-peer']).toMatchObject({ outcome: 'error', reason: 'timeout' });
    expect(hang.to(verifyPath)[0]!.headers['x-observatory-bridge']).toBe(TOKEN);
    expect(byName((await checked({ toolset: 'dead-peer' })).rows)['dead-peer']).toMatchObject({ outcome: 'error', reason: 'unreachable' });

    afterInterval();
    const narrowed = await t.secondInstance({ OBSERVATORY_BRIDGE_PEER_HOSTS: 'peer.example.com' });
    others.push(narrowed);
    const seen = plain.requests.length;
    const rows = byName((await checked({ toolset: 'plain-peer' }, narrowed)).rows);
    expect(rows['plain-peer']).toMatchObject({ outcome: 'error', reason: 'host-not-allowed' });
    expect(plain.requests.length).toBe(seen);
    // Later checks of every toolset would wait out its timeout.
    expect((await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/hang-peer` })).statusCode).toBe(200);
  }, 120_000);

  it('from an instance holding another bridge token: this service refuses it (bridge-token-refused)', async () => {
    afterInterval();
    const other = await t.secondInstance({ OBSERVATORY_BRIDGE_TOKEN: OTHER_TOKEN });
    others.push(other);
    const rows = byName((await checked({ toolset: 'self-observatory' }, other)).rows);
    expect(rows['self-observatory']).toMatchObject({ outcome: 'error', reason: 'bridge-token-refused' });
  });

  it('without a bridge token asks nobody and spends no interval', async () => {
    afterInterval();
    const other = await t.secondInstance({ OBSERVATORY_BRIDGE_TOKEN: '' });
    others.push(other);
    const seen = plain.requests.length;
    const result = await checked({ toolset: 'plain-peer' }, other);
    expect(result.asked).toEqual([]);
    expect(byName(result.rows)['plain-peer']).toMatchObject({ outcome: 'skipped', reason: 'bridge-token-not-set' });
    expect(plain.requests.length).toBe(seen);
    // The interval was not spent: a deployment with the token asks at once.
    expect((await checked({ toolset: 'plain-peer' })).asked).toEqual(['plain-peer']);
    const refused = await other.server.inject({ method: 'POST', url: verifyPath, headers: { 'x-observatory-bridge': TOKEN }, payload: {} });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().human).toMatch(/no OBSERVATORY_BRIDGE_TOKEN/);
  });

  it('runs as the daily job backup-cross-toolset-verify', async () => {
    afterInterval();
    const seen = plain.to(verifyPath).length;
    const stats = await runJob(t, 'backup-cross-toolset-verify');
    expect(stats.asked).toBeGreaterThanOrEqual(2);
    expect(plain.to(verifyPath).length).toBe(seen + 1);
    const health = JSON.stringify((await t.call({ method: 'GET', url: `${V1}/honeypot/ops/cron-health` })).json());
    expect(health).toContain('backup-cross-toolset-verify');
  }, 240_000);

  it('answers 404 for an unknown toolset and 400 for a bad body', async () => {
    expect((await check({ toolset: 'no-such-peer' })).statusCode).toBe(404);
    expect((await check({ toolset: 'x' })).statusCode).toBe(400);
    expect((await check({ extra: 1 })).statusCode).toBe(400);
  });
});

describe('a token bound to toolsets', () => {
  it('sees only its toolsets\' rows and registrations, checks only its own, and may not check every toolset', async () => {
    const bound = await tokenBoundTo(t, ['write:alerts', 'read:empire'], ['own-lab']);
    expect((await t.call({ method: 'PUT', url: `${V1}/backups/toolsets/own-lab`, token: bound, payload: { verifyUrl: `${plain.origin}${verifyPath}`, database: 'observatory' } })).statusCode).toBe(200);
    const seen = await view({ token: bound });
    expect(seen.rows.map((r) => r.toolset)).toEqual(['own-lab']);
    expect(seen.totalToolsets).toBe(1);
    const listed = (await t.call({ method: 'GET', url: `${V1}/backups/toolsets`, token: bound })).json();
    expect(listed.toolsets.map((r: { toolset: string }) => r.toolset)).toEqual(['own-lab']);

    const every = await t.call({ method: 'POST', url: `${V1}/backups/cross-toolset/verify`, token: bound, payload: {} });
    expect(every.statusCode).toBe(403);
    expect(every.json().human).toBe('This token is bound to toolsets; verifying every registered toolset spans every toolset.');
    const another = await t.call({ method: 'POST', url: `${V1}/backups/cross-toolset/verify`, token: bound, payload: { toolset: 'plain-peer' } });
    expect(another.statusCode).toBe(403);
    const own = await t.call({ method: 'POST', url: `${V1}/backups/cross-toolset/verify`, token: bound, payload: { toolset: 'own-lab' } });
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json().rows.map((r: Row) => r.toolset)).toEqual(['own-lab']);
    expect((await t.call({ method: 'POST', url: verifyPath, token: bound, payload: {} })).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/own-lab`, token: bound })).statusCode).toBe(200);
  });
});

describe('the bridge verify endpoint', () => {
  it('takes the bridge token, or an operator credential; 404 for another database', async () => {
    afterInterval();
    const bridged = await t.call({ method: 'POST', url: verifyPath, token: null, headers: { 'x-observatory-bridge': TOKEN }, payload: { database: 'observatory' } });
    expect(bridged.statusCode, bridged.body).toBe(200);
    expect(bridged.json()).toMatchObject({ schema: 'svc-backup-bridge-verify.v1', database: 'observatory', outcome: 'ok', errorText: null, vercelProject: null });
    afterInterval();
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
      ['POST', `${V1}/backups/cross-toolset/verify`],
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
  it('replaces a registration (created false, audited with before and after, the last check cleared) and lists them', async () => {
    expect((await checked({ toolset: 'plain-peer' })).asked).toEqual(['plain-peer']);
    const replaced = await register('plain-peer', `${plain.origin}/other${verifyPath}`, { vercelProject: null });
    expect(replaced).toMatchObject({ created: false, toolset: { verifyUrl: `${plain.origin}/other${verifyPath}`, vercelProject: null } });
    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit`, query: { verb: 'backup.toolset-register' } })).json();
    expect(audit.rows[0]).toMatchObject({ target: 'backup-toolset:plain-peer', before: { verifyUrl: `${plain.origin}${verifyPath}` }, after: { verifyUrl: `${plain.origin}/other${verifyPath}` } });
    expect(byName((await view()).rows)['plain-peer']).toMatchObject({ reason: 'not-verified-yet', checkedAt: null });
    // The interval counts on: re-registering does not lift it.
    expect((await check({ toolset: 'plain-peer' })).statusCode).toBe(429);
    const list = await t.call({ method: 'GET', url: `${V1}/backups/toolsets` });
    expect(list.statusCode).toBe(200);
    expect(list.json().toolsets.map((r: { toolset: string }) => r.toolset)).toContain('plain-peer');
  });

  it('refuses unusable URLs and names by the outbound policy and the bridge path, and callers without the scope', async () => {
    const strict = await t.secondInstance({ OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '0', OBSERVATORY_OUTBOUND_ALLOWED_PORTS: '80,443' });
    others.push(strict);
    const put = (toolset: string, payload: unknown, token = ADMIN_TOKEN) =>
      strict.server.inject({ method: 'PUT', url: `${V1}/backups/toolsets/${toolset}`, headers: { authorization: `Bearer ${token}` }, payload: payload as object });
    const good = `https://peer.example.com${verifyPath}`;
    const cases: [string, unknown, RegExp][] = [
      ['peer-one', { verifyUrl: `http://127.0.0.1${verifyPath}`, database: 'x' }, /127\.0\.0\.1 is not a public address/],
      ['peer-one', { verifyUrl: `https://localhost${verifyPath}`, database: 'x' }, /loopback name/],
      ['peer-one', { verifyUrl: `https://peer.example.com:8443${verifyPath}`, database: 'x' }, /port 8443 is not an allowed outbound port/],
      ['peer-one', { verifyUrl: `https://user:pw@peer.example.com${verifyPath}`, database: 'x' }, /user name or password/],
      ['peer-one', { verifyUrl: `http://peer.example.com${verifyPath}`, database: 'x' }, /only sent over https/],
      ['peer-one', { verifyUrl: `https://attacker.example.net${verifyPath}`, database: 'x' }, /host attacker\.example\.net is not in OBSERVATORY_BRIDGE_PEER_HOSTS/],
      ['peer-one', { verifyUrl: 'https://peer.example.com/collect', database: 'x' }, /path must end with \/api\/observatory\/v1\/backups\/bridge\/verify/],
      ['peer-one', { verifyUrl: `${good}?then=https://attacker.example.net`, database: 'x' }, /no query or fragment/],
    ];
    for (const [toolset, payload, human] of cases) {
      const res = await put(toolset, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ reason: 'outbound-refused', field: 'body.verifyUrl' });
      expect(res.json().human).toMatch(human);
    }
    for (const [toolset, payload] of [
      ['ab', { verifyUrl: good, database: 'x' }],
      ['peer-one', { verifyUrl: 'ftp://peer.example.com/v', database: 'x' }],
      ['peer-one', { verifyUrl: good, database: 'bad name' }],
      ['peer-one', { verifyUrl: good }],
      ['peer-one', { verifyUrl: good, database: 'x', extra: 1 }],
    ] as const) {
      expect((await put(toolset, payload)).statusCode, `${toolset} ${JSON.stringify(payload)}`).toBe(400);
    }
    const accepted = await put('peer-one', { verifyUrl: good, database: 'x' });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect((await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/peer-one` })).statusCode).toBe(200);

    const reader = await t.tokenWith(['read:empire']);
    const writer = await t.tokenWith(['write:alerts']);
    expect((await put('peer-two', { verifyUrl: good, database: 'x' }, reader)).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/dead-peer`, token: reader })).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: `${V1}/backups/cross-toolset/verify`, token: reader, payload: {} })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/cross-toolset`, token: writer })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/toolsets`, token: writer })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/toolsets`, token: reader })).statusCode).toBe(200);
  });

  it('caps the registrations at 100', async () => {
    for (let i = 0; (await t.call({ method: 'GET', url: `${V1}/backups/toolsets` })).json().toolsets.length < 100; i++) {
      await register(`cap-peer-${i}`, `${plain.origin}/cap${verifyPath}`);
    }
    const over = await t.call({ method: 'PUT', url: `${V1}/backups/toolsets/cap-peer-extra`, payload: { verifyUrl: `${plain.origin}/cap${verifyPath}`, database: 'observatory' } });
    expect(over.statusCode).toBe(409);
    expect(over.json()).toMatchObject({ reason: 'conflict', human: 'At most 100 toolsets may be registered; remove one first.' });
    // Replacing one that exists is still allowed at the cap.
    expect((await t.call({ method: 'PUT', url: `${V1}/backups/toolsets/cap-peer-0`, payload: { verifyUrl: `${plain.origin}/cap2${verifyPath}`, database: 'observatory' } })).statusCode).toBe(200);
  }, 120_000);
});
