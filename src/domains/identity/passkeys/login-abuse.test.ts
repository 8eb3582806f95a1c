import type { LightMyRequestResponse } from 'fastify';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { SoftAuthenticator } from '../../../../test/helpers/soft-authenticator.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { CHALLENGE_TTL_MS, MAX_LOGIN_CHALLENGES_PER_ADDRESS, MAX_LOGIN_CHALLENGES_TOTAL } from './service.ts';
import { users } from '../schema.ts';

/**
 * The unauthenticated login start: capped per address (IPv6 by /64) and in total, expired
 * challenges deleted, and no answer that tells a known username from an unknown one.
 */

const RP_ID = 'localhost';
const ORIGIN = 'http://localhost:8080';
const clock = new ManualClock('2026-05-11T06:00:00.000Z');
let t: TestApp;

// Many calls here end in 401 on purpose; the server's failure limit is not what is tested.
beforeAll(async () => {
  t = await startTestApp({ clock, env: { OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0' } });
});
afterAll(() => t.close());

interface LoginStart {
  challengeId: string;
  options: { challenge: string; allowCredentials: { id: string; type: string; transports?: string[] }[] } & Record<string, unknown>;
}

const startLogin = (from: string, username?: string): Promise<LightMyRequestResponse> =>
  t.call({ method: 'POST', url: `${V1}/account/login/start`, token: null, remoteAddress: from, payload: username === undefined ? {} : { username } });

async function startOk(from: string, username?: string): Promise<LoginStart> {
  const res = await startLogin(from, username);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<LoginStart>();
}

function expectLimited(res: LightMyRequestResponse, retryAfterSec: number) {
  expect(res.statusCode, res.body).toBe(429);
  expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'rate-limited', retryAfterSec });
  expect(res.headers['retry-after']).toBe(String(retryAfterSec));
}

async function challengeRows(where = sql`true`) {
  return rowsOf<{ id: string; client_ip: string | null; expires_at: Date; consumed_at: Date | null }>(
    await t.app.database.db.execute(sql`SELECT id, client_ip, expires_at, consumed_at FROM webauthn_challenges WHERE ${where}`),
  );
}

/** Lets every challenge made so far expire, and sweeps them, so tests do not see each other's. */
async function expireAll() {
  clock.advance(CHALLENGE_TTL_MS + 1_000);
  await runJob(t, 'session-sweep');
}

describe('outstanding login challenges per address', () => {
  it(`allows ${MAX_LOGIN_CHALLENGES_PER_ADDRESS}, then 429 with Retry-After until the oldest expires`, async () => {
    const ip = '198.51.100.7';
    await startOk(ip);
    clock.advance(60_000);
    for (let i = 1; i < MAX_LOGIN_CHALLENGES_PER_ADDRESS; i++) await startOk(ip, i % 2 ? 'admin' : `nobody${i}`);
    // The oldest was made a minute ago, so a slot frees in four minutes.
    expectLimited(await startLogin(ip), 240);
    expectLimited(await startLogin(ip, 'admin'), 240);
    // Refusals write nothing.
    expect(await challengeRows(sql`client_ip = ${ip}`)).toHaveLength(MAX_LOGIN_CHALLENGES_PER_ADDRESS);
    // Other addresses are not affected.
    await startOk('198.51.100.8');

    clock.advance(240_000 - 1_000);
    expectLimited(await startLogin(ip), 1);
    clock.advance(1_000);
    await startOk(ip);
    await expireAll();
  });

  it('counts only challenges that are still usable: a finished (even failed) login frees its slot', async () => {
    const ip = '203.0.113.50';
    const started: LoginStart[] = [];
    for (let i = 0; i < MAX_LOGIN_CHALLENGES_PER_ADDRESS; i++) started.push(await startOk(ip));
    expect((await startLogin(ip)).statusCode).toBe(429);
    const stranger = new SoftAuthenticator(RP_ID, ORIGIN);
    const finish = await t.call({
      method: 'POST',
      url: `${V1}/account/login/finish`,
      token: null,
      remoteAddress: ip,
      payload: { challengeId: started[0]!.challengeId, response: stranger.authenticate(started[0]!.options) },
    });
    expect(finish.statusCode).toBe(401);
    expect(finish.json().reason).toBe('login-failed');
    await startOk(ip);
    expect((await startLogin(ip)).statusCode).toBe(429);
    await expireAll();
  });

  it('stores the caller\'s address and counts IPv6 callers by their /64', async () => {
    const { challengeId } = await startOk('192.0.2.33');
    expect((await challengeRows(sql`id = ${challengeId}`))[0]?.client_ip).toBe('192.0.2.33');

    for (let i = 1; i <= MAX_LOGIN_CHALLENGES_PER_ADDRESS; i++) await startOk(`2001:db8:1:2::${i.toString(16)}`);
    // Any other address in the same /64 is the same caller…
    expect((await startLogin('2001:db8:1:2:ffff:ffff:ffff:fffe')).statusCode).toBe(429);
    // …the next /64 is not.
    await startOk('2001:db8:1:3::1');
    const stored = await challengeRows(sql`client_ip LIKE '2001:db8:1:%'`);
    expect(new Set(stored.map((r) => r.client_ip))).toEqual(new Set(['2001:db8:1:2::/64', '2001:db8:1:3::/64']));

    // An IPv4-mapped IPv6 address is its IPv4 address.
    for (let i = 1; i < MAX_LOGIN_CHALLENGES_PER_ADDRESS; i++) await startOk('192.0.2.33');
    expect((await startLogin('::ffff:192.0.2.33')).statusCode).toBe(429);
    await expireAll();
  });
});

describe('expired challenges', () => {
  it('are deleted by the hourly sweep, by their own expiry', async () => {
    const ip = '198.51.100.77';
    for (let i = 0; i < 3; i++) await startOk(ip);
    clock.advance(CHALLENGE_TTL_MS - 1_000);
    // Still alive a second before expiry: the sweep leaves them.
    expect((await runJob(t, 'session-sweep')).challengesDeleted).toBe(0);
    clock.advance(1_000);
    expect((await runJob(t, 'session-sweep')).challengesDeleted).toBe(3);
    expect(await challengeRows()).toEqual([]);
  });

  it('of the calling address are deleted when it starts another login', async () => {
    const ip = '198.51.100.78';
    for (let i = 0; i < 4; i++) await startOk(ip);
    await startOk('198.51.100.79');
    clock.advance(CHALLENGE_TTL_MS);
    const fresh = await startOk(ip);
    expect((await challengeRows(sql`client_ip = ${ip}`)).map((r) => r.id)).toEqual([fresh.challengeId]);
    // Another address's expired rows wait for the sweep.
    expect(await challengeRows(sql`client_ip = '198.51.100.79'`)).toHaveLength(1);
    await expireAll();
  });
});

describe('outstanding login challenges in total', () => {
  it(`refuses every address once ${MAX_LOGIN_CHALLENGES_TOTAL} are outstanding, until they expire`, async () => {
    // As many as a botnet rotating addresses would leave, written directly (one HTTP call each would be slow).
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + 120_000);
    await t.app.database.db.execute(sql`
      INSERT INTO webauthn_challenges (id, purpose, user_id, challenge, device_label, client_ip, created_at, expires_at, consumed_at)
      SELECT gen_random_uuid(), 'authentication', NULL, 'c' || g, NULL, '10.' || (g / 65536) || '.' || (g / 256 % 256) || '.' || (g % 256),
             ${now.toISOString()}::timestamptz, ${expiresAt.toISOString()}::timestamptz, NULL
      FROM generate_series(1, ${MAX_LOGIN_CHALLENGES_TOTAL}) AS g`);
    const res = await startLogin('192.0.2.200', 'admin');
    expectLimited(res, 120);
    expect(res.json().human).toContain('Too many passkey logins are in progress');
    clock.advance(120_000);
    await startOk('192.0.2.200', 'admin');
    await expireAll();
  });
});

describe('no username enumeration', () => {
  let admin: SoftAuthenticator;
  beforeAll(async () => {
    admin = new SoftAuthenticator(RP_ID, ORIGIN);
    const start = (await t.call({ method: 'POST', url: `${V1}/account/passkeys/register/start`, payload: {} })).json();
    const res = await t.call({ method: 'POST', url: `${V1}/account/passkeys/register/finish`, payload: { challengeId: start.challengeId, response: admin.register(start.options) } });
    expect(res.statusCode, res.body).toBe(200);
    await t.app.identity.createOperator({ username: 'dave', scopes: ['read:dashboard'] });
    await t.app.identity.createOperator({ username: 'erin', scopes: ['read:dashboard'] });
    await t.app.database.db.update(users).set({ disabledAt: clock.now() }).where(eq(users.username, 'erin'));
  });

  /** Everything about an answer but its random parts: keys, and per credential its keys, id length and transports. */
  function shapeOf(start: LoginStart) {
    const { challengeId, options } = start;
    return {
      keys: Object.keys(start).sort(),
      challengeId: typeof challengeId,
      optionKeys: Object.keys(options).sort(),
      rest: { ...options, challenge: typeof options.challenge, allowCredentials: undefined },
      credentials: options.allowCredentials.map((c) => ({ keys: Object.keys(c).sort(), type: c.type, idLength: c.id.length, transports: c.transports })),
    };
  }

  it('answers an unknown username, one without passkeys and a disabled one like a known one', async () => {
    const known = await startOk('192.0.2.10', 'admin');
    expect(known.options.allowCredentials.map((c) => c.id)).toEqual([admin.id]);
    for (const username of ['nobody-at-all', 'dave', 'erin']) {
      const other = await startOk('192.0.2.10', username);
      expect(shapeOf(other), username).toEqual(shapeOf(known));
      expect(other.options.allowCredentials[0]!.id, username).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
    await expireAll();
  });

  it('gives the same decoy for the same username on every call and every instance, another for another', async () => {
    const first = await startOk('192.0.2.11', 'nobody-at-all');
    const again = await startOk('192.0.2.11', 'nobody-at-all');
    expect(again.options.allowCredentials).toEqual(first.options.allowCredentials);
    expect(again.options.challenge).not.toBe(first.options.challenge);
    const second = await t.secondInstance({ OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0' });
    const elsewhere = await second.server.inject({ method: 'POST', url: `${V1}/account/login/start`, remoteAddress: '192.0.2.11', payload: { username: 'nobody-at-all' } });
    expect(elsewhere.json().options.allowCredentials).toEqual(first.options.allowCredentials);
    const another = await startOk('192.0.2.11', 'nobody-else');
    expect(another.options.allowCredentials[0]!.id).not.toBe(first.options.allowCredentials[0]!.id);
    await expireAll();
  });

  it('still fails the finish for an unknown username with the usual 401, and the known one logs in', async () => {
    for (const username of ['nobody-at-all', 'dave']) {
      const start = await startOk('192.0.2.12', username);
      const res = await t.call({
        method: 'POST',
        url: `${V1}/account/login/finish`,
        token: null,
        payload: { challengeId: start.challengeId, response: admin.authenticate(start.options) },
      });
      expect(res.statusCode, username).toBe(401);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'login-failed' });
    }
    const start = await startOk('192.0.2.12', 'admin');
    const res = await t.call({ method: 'POST', url: `${V1}/account/login/finish`, token: null, payload: { challengeId: start.challengeId, response: admin.authenticate(start.options) } });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('keeps a login without a username a plain discoverable one', async () => {
    expect((await startOk('192.0.2.13')).options.allowCredentials).toEqual([]);
  });
});
