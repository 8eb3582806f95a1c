import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { FLAG_AT, FLAG_UP, SoftAuthenticator } from '../../../../test/helpers/soft-authenticator.ts';
import type { App } from '../../../app.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { SESSION_COOKIE } from '../../../platform/http/auth.ts';
import * as identityRepo from '../tokens/repository.ts';
import { users } from '../schema.ts';

const RP_ID = 'localhost';
const ORIGIN = 'http://localhost:8080';
const FIVE_MINUTES = 5 * 60_000;

const clock = new ManualClock('2026-03-02T09:00:00.000Z');
let t: TestApp;
/** A second operator, with a session of their own, to check that nothing crosses operators. */
let other: { userId: string; username: string; cookie: string };

/** Sends a request to one instance; `cookie` sends an operator session instead of a token. */
type Caller = (options: { method: 'GET' | 'POST'; url: string; payload?: unknown; token?: string | null; cookie?: string }) => Promise<LightMyRequestResponse>;

/** The first instance; the admin token unless `token` or `cookie` says otherwise. */
const onA: Caller = ({ method, url, payload, token, cookie }) =>
  t.call({
    method,
    url,
    ...(payload === undefined ? {} : { payload: payload as object }),
    token: cookie ? null : token,
    ...(cookie ? { headers: { cookie: `${SESSION_COOKIE}=${cookie}` } } : {}),
  });

/** Another instance: the admin token unless `token` (null: none) or `cookie` says otherwise. */
const on = (app: App): Caller => ({ method, url, payload, token, cookie }) => {
  const credential = token === undefined ? ADMIN_TOKEN : token;
  return app.server.inject({
    method,
    url,
    ...(payload === undefined ? {} : { payload: payload as object }),
    headers: cookie
      ? { cookie: `${SESSION_COOKIE}=${cookie}` }
      : credential === null
        ? {}
        : { authorization: `Bearer ${credential}` },
  });
};

interface Registered {
  authenticator: SoftAuthenticator;
  passkeyId: string;
}

async function startRegistration(call: Caller = onA, extra: { cookie?: string; deviceLabel?: string } = {}) {
  const res = await call({
    method: 'POST',
    url: `${V1}/account/passkeys/register/start`,
    payload: extra.deviceLabel ? { deviceLabel: extra.deviceLabel } : {},
    ...(extra.cookie ? { cookie: extra.cookie } : {}),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ challengeId: string; options: { challenge: string; user: { id: string; name: string }; excludeCredentials: { id: string }[] } & Record<string, unknown> }>();
}

async function finishRegistration(
  call: Caller,
  body: { challengeId: string; response: unknown; deviceLabel?: string },
  cookie?: string,
) {
  return call({ method: 'POST', url: `${V1}/account/passkeys/register/finish`, payload: body, ...(cookie ? { cookie } : {}) });
}

async function register(cookie?: string): Promise<Registered> {
  const authenticator = new SoftAuthenticator(RP_ID, ORIGIN);
  const start = await startRegistration(onA, cookie ? { cookie } : {});
  const res = await finishRegistration(onA, { challengeId: start.challengeId, response: authenticator.register(start.options) }, cookie);
  expect(res.statusCode, res.body).toBe(200);
  return { authenticator, passkeyId: res.json<{ passkey: { id: string } }>().passkey.id };
}

async function startLogin(call: Caller = onA, username?: string) {
  const res = await call({ method: 'POST', url: `${V1}/account/login/start`, token: null, payload: username ? { username } : {} });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ challengeId: string; options: { challenge: string; rpId: string; allowCredentials: { id: string }[] } }>();
}

async function finishLogin(call: Caller, body: { challengeId: string; response: unknown }) {
  return call({ method: 'POST', url: `${V1}/account/login/finish`, token: null, payload: body });
}

/** A full login; returns the response and the session cookie's value. */
async function login(authenticator: SoftAuthenticator, username?: string) {
  const start = await startLogin(onA, username);
  const res = await finishLogin(onA, { challengeId: start.challengeId, response: authenticator.authenticate(start.options) });
  const cookie = res.cookies.find((c) => c.name === SESSION_COOKIE);
  return { res, cookie };
}

function expectLoginFailed(res: LightMyRequestResponse) {
  expect(res.statusCode, res.body).toBe(401);
  // Every failure has the very same body (apart from its timestamp): nothing says which part failed.
  const { generatedAt, ...body } = res.json();
  expect(Date.parse(generatedAt)).not.toBeNaN();
  expect(body).toEqual({
    schema: 'svc-error.v1',
    reason: 'login-failed',
    human: 'The passkey login could not be completed. Start again from the login page.',
  });
  expect(res.cookies.find((c) => c.name === SESSION_COOKIE)).toBeUndefined();
}

async function auditRows(verb: string) {
  const res = await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=${verb}&limit=500` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ rows: { verb: string; target: string; surface: string; actor: string | null; actorUserId: string | null; before: unknown; after: Record<string, unknown> | null }[] }>().rows;
}

async function listPasskeys(cookie?: string) {
  const res = await onA({ method: 'GET', url: `${V1}/account/passkeys`, ...(cookie ? { cookie } : {}) });
  expect(res.statusCode, res.body).toBe(200);
  return res;
}

beforeAll(async () => {
  t = await startTestApp({ clock });
  // Operators other than admin are created outside the HTTP API; a session stands in for their login.
  const db = t.app.database.db;
  const userId = randomUUID();
  await identityRepo.insertUser(db, { id: userId, username: 'operator2', displayName: 'Second Operator', scopes: ['read:dashboard'], createdAt: clock.now(), disabledAt: null });
  const session = await t.app.identity.openSession(db, userId, null);
  other = { userId, username: 'operator2', cookie: session.secret };
});
afterAll(() => t.close());

describe('passkey registration', () => {
  it('offers creation options for the caller and stores the verified passkey', async () => {
    const authenticator = new SoftAuthenticator(RP_ID, ORIGIN);
    const start = await startRegistration(onA, { deviceLabel: 'Test laptop' });
    expect(start.challengeId).toMatch(/^[0-9a-f-]{36}$/);
    expect(start.options).toMatchObject({
      rp: { id: RP_ID, name: 'Observatory' },
      user: { name: 'admin', displayName: 'Administrator' },
      timeout: FIVE_MINUTES,
      attestation: 'none',
      authenticatorSelection: { userVerification: 'required', residentKey: 'preferred' },
    });
    expect(start.options.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(start.options.pubKeyCredParams).toContainEqual({ alg: -7, type: 'public-key' });

    const res = await finishRegistration(onA, { challengeId: start.challengeId, response: authenticator.register(start.options) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.schema).toBe('svc-passkey-registration-finish.v1');
    expect(body.ok).toBe(true);
    expect(body.passkey).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      credentialIdPrefix: authenticator.id.slice(0, 8),
      deviceLabel: 'Test laptop',
      transports: ['hybrid', 'internal'],
      deviceType: 'singleDevice',
      backedUp: false,
      createdAt: clock.now().toISOString(),
      lastUsedAt: null,
      revokedAt: null,
    });

    const listed = (await listPasskeys()).json<{ passkeys: { id: string }[] }>().passkeys;
    expect(listed.map((p) => p.id)).toContain(body.passkey.id);
  });

  it('lets a device label given at finish win over the one given at start, and defaults one', async () => {
    const a = new SoftAuthenticator(RP_ID, ORIGIN);
    const s1 = await startRegistration(onA, { deviceLabel: 'from start' });
    const r1 = await finishRegistration(onA, { challengeId: s1.challengeId, response: a.register(s1.options), deviceLabel: 'from finish' });
    expect(r1.json().passkey.deviceLabel).toBe('from finish');

    const b = new SoftAuthenticator(RP_ID, ORIGIN);
    const s2 = await startRegistration();
    const r2 = await finishRegistration(onA, { challengeId: s2.challengeId, response: b.register(s2.options) });
    expect(r2.json().passkey.deviceLabel).toBe(`Passkey added ${clock.now().toISOString().slice(0, 10)}`);
  });

  it('excludes the caller\'s active passkeys from new registrations', async () => {
    const { authenticator, passkeyId } = await register();
    const before = await startRegistration();
    expect(before.options.excludeCredentials.map((c) => c.id)).toContain(authenticator.id);

    await onA({ method: 'POST', url: `${V1}/account/passkeys/${passkeyId}/revoke` });
    const after = await startRegistration();
    expect(after.options.excludeCredentials.map((c) => c.id)).not.toContain(authenticator.id);
  });

  it('never lists public key material or the full credential id', async () => {
    const { authenticator } = await register();
    const res = await listPasskeys();
    expect(res.json().schema).toBe('svc-passkeys-list.v1');
    expect(res.body).not.toContain(authenticator.id);
    expect(res.body).not.toContain(authenticator.cosePublicKey().toString('base64url'));
    expect(res.body).not.toMatch(/publicKey|credentialId"/);
    for (const passkey of res.json<{ passkeys: Record<string, unknown>[] }>().passkeys) {
      expect(Object.keys(passkey).sort()).toEqual(
        ['backedUp', 'createdAt', 'credentialIdPrefix', 'deviceLabel', 'deviceType', 'id', 'lastUsedAt', 'revokedAt', 'transports'],
      );
      expect(passkey.credentialIdPrefix).toHaveLength(8);
    }
  });

  it('lists only the caller\'s own passkeys', async () => {
    const mine = await register(other.cookie);
    const theirs = (await listPasskeys(other.cookie)).json<{ passkeys: { id: string }[] }>().passkeys;
    expect(theirs.map((p) => p.id)).toEqual([mine.passkeyId]);
    const admins = (await listPasskeys()).json<{ passkeys: { id: string }[] }>().passkeys;
    expect(admins.map((p) => p.id)).not.toContain(mine.passkeyId);
  });

  it('refuses a response from the wrong origin, for the wrong RP or without user verification', async () => {
    const countBefore = (await listPasskeys()).json().passkeys.length;
    const cases = [{ origin: 'http://evil.example:8080' }, { rpId: 'evil.example' }, { flags: FLAG_UP | FLAG_AT }];
    for (const overrides of cases) {
      const start = await startRegistration();
      const res = await finishRegistration(onA, { challengeId: start.challengeId, response: new SoftAuthenticator(RP_ID, ORIGIN).register(start.options, overrides) });
      expect(res.statusCode, JSON.stringify(overrides)).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'passkey-verification-failed' });
    }
    expect((await listPasskeys()).json().passkeys.length).toBe(countBefore);
  });

  it('refuses a response that answers a different challenge', async () => {
    const start = await startRegistration();
    const another = await startRegistration();
    const res = await finishRegistration(onA, { challengeId: start.challengeId, response: new SoftAuthenticator(RP_ID, ORIGIN).register(another.options) });
    expect(res.statusCode).toBe(400);
    expect(res.json().reason).toBe('passkey-verification-failed');
  });

  it('uses a challenge once, whether the attempt succeeded or failed', async () => {
    const authenticator = new SoftAuthenticator(RP_ID, ORIGIN);
    const start = await startRegistration();
    const body = { challengeId: start.challengeId, response: authenticator.register(start.options) };
    expect((await finishRegistration(onA, body)).statusCode).toBe(200);
    const again = await finishRegistration(onA, body);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'challenge-invalid' });

    const failing = await startRegistration();
    const first = await finishRegistration(onA, { challengeId: failing.challengeId, response: new SoftAuthenticator(RP_ID, ORIGIN).register(failing.options, { origin: 'http://evil.example' }) });
    expect(first.json().reason).toBe('passkey-verification-failed');
    const retry = await finishRegistration(onA, { challengeId: failing.challengeId, response: new SoftAuthenticator(RP_ID, ORIGIN).register(failing.options) });
    expect(retry.statusCode).toBe(400);
    expect(retry.json().reason).toBe('challenge-invalid');
  });

  it('refuses an expired challenge', async () => {
    const start = await startRegistration();
    clock.advance(FIVE_MINUTES + 1_000);
    const res = await finishRegistration(onA, { challengeId: start.challengeId, response: new SoftAuthenticator(RP_ID, ORIGIN).register(start.options) });
    expect(res.statusCode).toBe(400);
    expect(res.json().reason).toBe('challenge-invalid');
  });

  it('accepts a challenge just inside its five minutes', async () => {
    const start = await startRegistration();
    clock.advance(FIVE_MINUTES - 1_000);
    const res = await finishRegistration(onA, { challengeId: start.challengeId, response: new SoftAuthenticator(RP_ID, ORIGIN).register(start.options) });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses another operator\'s challenge without using it up, and unknown challenges', async () => {
    const authenticator = new SoftAuthenticator(RP_ID, ORIGIN);
    const start = await startRegistration();
    const body = { challengeId: start.challengeId, response: authenticator.register(start.options) };
    const stolen = await finishRegistration(onA, body, other.cookie);
    expect(stolen.statusCode).toBe(400);
    expect(stolen.json().reason).toBe('challenge-invalid');
    expect((await finishRegistration(onA, body)).statusCode).toBe(200);

    const unknown = await finishRegistration(onA, { challengeId: randomUUID(), response: authenticator.register(start.options) });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().reason).toBe('challenge-invalid');
  });

  it('refuses to register the same authenticator twice', async () => {
    const { authenticator } = await register();
    const start = await startRegistration();
    const res = await finishRegistration(onA, { challengeId: start.challengeId, response: authenticator.register(start.options) });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'conflict' });
  });

  it('validates bodies and requires a credential', async () => {
    const noFields = await onA({ method: 'POST', url: `${V1}/account/passkeys/register/start`, payload: {} });
    expect(noFields.statusCode, noFields.body).toBe(200);
    const noLoginFields = await onA({ method: 'POST', url: `${V1}/account/login/start`, token: null, payload: {} });
    expect(noLoginFields.statusCode, noLoginFields.body).toBe(200);
    const emptyLabel = await onA({ method: 'POST', url: `${V1}/account/passkeys/register/start`, payload: { deviceLabel: '' } });
    expect(emptyLabel.statusCode).toBe(400);
    expect(emptyLabel.json()).toMatchObject({ reason: 'invalid-body', field: 'body.deviceLabel' });
    const longLabel = await onA({ method: 'POST', url: `${V1}/account/passkeys/register/start`, payload: { deviceLabel: 'x'.repeat(101) } });
    expect(longLabel.statusCode).toBe(400);
    const noResponse = await finishRegistration(onA, { challengeId: randomUUID(), response: { id: 'abc', rawId: 'abc', type: 'public-key' } });
    expect(noResponse.statusCode).toBe(400);
    expect(noResponse.json().reason).toBe('invalid-body');
    for (const url of ['/account/passkeys', '/account/passkeys/register/start', '/account/passkeys/register/finish', `/account/passkeys/${randomUUID()}/revoke`]) {
      const res = await onA({ method: url === '/account/passkeys' ? 'GET' : 'POST', url: `${V1}${url}`, token: null, payload: {} });
      expect(res.statusCode, url).toBe(401);
    }
  });

  it('starts on one instance and finishes on another', async () => {
    const second = await t.secondInstance();
    const authenticator = new SoftAuthenticator(RP_ID, ORIGIN);
    const start = await startRegistration();
    const res = await finishRegistration(on(second), { challengeId: start.challengeId, response: authenticator.register(start.options) });
    expect(res.statusCode, res.body).toBe(200);

    const loginStart = await startLogin(on(second), 'admin');
    const loginRes = await finishLogin(onA, { challengeId: loginStart.challengeId, response: authenticator.authenticate(loginStart.options) });
    expect(loginRes.statusCode, loginRes.body).toBe(200);
    const cookie = loginRes.cookies.find((c) => c.name === SESSION_COOKIE)!.value;
    const account = await on(second)({ method: 'GET', url: `${V1}/account`, cookie });
    expect(account.statusCode).toBe(200);
    expect(account.json().via).toBe('session');
  });
});

describe('passkey login', () => {
  let admin: Registered;
  beforeAll(async () => {
    admin = await register();
  });

  it('opens a session whose cookie authenticates later calls', async () => {
    const start = await startLogin(onA, 'admin');
    expect(start.options.rpId).toBe(RP_ID);
    expect(start.options.allowCredentials.map((c) => c.id)).toContain(admin.authenticator.id);
    const res = await finishLogin(onA, { challengeId: start.challengeId, response: admin.authenticator.authenticate(start.options) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const expiresAt = new Date(clock.now().getTime() + 12 * 3_600_000).toISOString();
    expect(body).toEqual({
      schema: 'svc-passkey-login.v1',
      generatedAt: clock.now().toISOString(),
      ok: true,
      userId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      username: 'admin',
      expiresAt,
    });
    expect(res.body).not.toContain(res.cookies[0]!.value);

    const cookie = res.cookies.find((c) => c.name === SESSION_COOKIE)!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(cookie.secure).toBeFalsy();
    expect(new Date(cookie.expires!).toISOString()).toBe(expiresAt);
    expect(cookie.value.length).toBeGreaterThanOrEqual(43);

    const account = await onA({ method: 'GET', url: `${V1}/account`, cookie: cookie.value });
    expect(account.statusCode, account.body).toBe(200);
    expect(account.json()).toMatchObject({ username: 'admin', via: 'session', userId: body.userId });
    const tokens = await onA({ method: 'GET', url: `${V1}/tokens`, cookie: cookie.value });
    expect(tokens.statusCode, tokens.body).toBe(200);
    expect(tokens.json().schema).toBe('svc-observatory-tokens.v1');

    const passkey = (await listPasskeys()).json<{ passkeys: { id: string; lastUsedAt: string | null }[] }>().passkeys.find((p) => p.id === admin.passkeyId);
    expect(passkey?.lastUsedAt).toBe(clock.now().toISOString());
  });

  it('logs in with a discoverable passkey and no username', async () => {
    const start = await startLogin(onA);
    expect(start.options.allowCredentials).toEqual([]);
    const res = await finishLogin(onA, { challengeId: start.challengeId, response: admin.authenticator.authenticate(start.options) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().username).toBe('admin');
  });

  it('sets a Secure cookie when configured to', async () => {
    const secure = await t.secondInstance({ OBSERVATORY_COOKIE_SECURE: '1' });
    const start = await startLogin(on(secure), 'admin');
    const res = await finishLogin(on(secure), { challengeId: start.challengeId, response: admin.authenticator.authenticate(start.options) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.cookies.find((c) => c.name === SESSION_COOKIE)?.secure).toBe(true);
  });

  it('answers every failure with the same 401 login-failed', async () => {
    const stranger = new SoftAuthenticator(RP_ID, ORIGIN);
    stranger.register({ challenge: 'unused', user: { id: 'AAAA' } });
    const attempts: { name: string; username?: string; response: (options: { challenge: string }) => unknown; challengeId?: string }[] = [
      { name: 'unregistered credential', response: (o) => stranger.authenticate(o) },
      { name: 'wrong origin', response: (o) => admin.authenticator.authenticate(o, { origin: 'http://evil.example:8080' }) },
      { name: 'wrong rp id', response: (o) => admin.authenticator.authenticate(o, { rpId: 'evil.example' }) },
      { name: 'other challenge signed', response: (o) => admin.authenticator.authenticate(o, { challenge: 'c29tZXRoaW5nLWVsc2U' }) },
      { name: 'no user verification', response: (o) => admin.authenticator.authenticate(o, { flags: FLAG_UP }) },
      { name: 'replayed counter', response: (o) => admin.authenticator.authenticate(o, { counter: 1 }) },
      {
        name: 'user handle of someone else',
        response: (o) => {
          const r = admin.authenticator.authenticate(o);
          return { ...r, response: { ...r.response, userHandle: Buffer.from(other.userId.replace(/-/g, ''), 'hex').toString('base64url') } };
        },
      },
      { name: 'another operator\'s challenge', username: other.username, response: (o) => admin.authenticator.authenticate(o) },
      { name: 'unknown username', username: 'nobody', response: (o) => admin.authenticator.authenticate(o) },
      { name: 'unknown challenge', challengeId: randomUUID(), response: (o) => admin.authenticator.authenticate(o) },
    ];
    for (const attempt of attempts) {
      const start = await startLogin(onA, attempt.username);
      const res = await finishLogin(onA, { challengeId: attempt.challengeId ?? start.challengeId, response: attempt.response(start.options) });
      expect(res.statusCode, attempt.name).toBe(401);
      expectLoginFailed(res);
    }
    // The real passkey still works afterwards: the failures changed nothing.
    expect((await login(admin.authenticator, 'admin')).res.statusCode).toBe(200);
  });

  it('uses a login challenge once and refuses it after five minutes', async () => {
    const start = await startLogin(onA, 'admin');
    expect((await finishLogin(onA, { challengeId: start.challengeId, response: admin.authenticator.authenticate(start.options) })).statusCode).toBe(200);
    expectLoginFailed(await finishLogin(onA, { challengeId: start.challengeId, response: admin.authenticator.authenticate(start.options) }));

    const late = await startLogin(onA, 'admin');
    clock.advance(FIVE_MINUTES + 1_000);
    expectLoginFailed(await finishLogin(onA, { challengeId: late.challengeId, response: admin.authenticator.authenticate(late.options) }));
  });

  it('refuses a registration challenge at login', async () => {
    const start = await startRegistration();
    expectLoginFailed(await finishLogin(onA, { challengeId: start.challengeId, response: admin.authenticator.authenticate(start.options) }));
  });

  it('keeps a malformed body a 400', async () => {
    const res = await finishLogin(onA, { challengeId: 'not-a-uuid', response: {} });
    expect(res.statusCode).toBe(400);
    expect(res.json().reason).toBe('invalid-body');
  });

  it('ends the session on logout', async () => {
    const { res, cookie } = await login(admin.authenticator, 'admin');
    expect(res.statusCode).toBe(200);
    const out = await onA({ method: 'POST', url: `${V1}/account/logout`, cookie: cookie!.value });
    expect(out.statusCode, out.body).toBe(200);
    expect(out.json()).toMatchObject({ ok: true, endedSession: true });
    const after = await onA({ method: 'GET', url: `${V1}/account`, cookie: cookie!.value });
    expect(after.statusCode).toBe(401);
    expect(after.json().reason).toBe('unauthorized');
  });

  it('refuses a disabled operator', async () => {
    const theirs = await register(other.cookie);
    expect((await login(theirs.authenticator, other.username)).res.statusCode).toBe(200);
    await t.app.database.db.update(users).set({ disabledAt: clock.now() }).where(eq(users.id, other.userId));
    try {
      expectLoginFailed((await login(theirs.authenticator, other.username)).res);
      expectLoginFailed((await login(theirs.authenticator)).res);
    } finally {
      await t.app.database.db.update(users).set({ disabledAt: null }).where(eq(users.id, other.userId));
    }
  });
});

describe('passkey revocation', () => {
  it('revokes a passkey so it can no longer log in, idempotently', async () => {
    const { authenticator, passkeyId } = await register();
    expect((await login(authenticator, 'admin')).res.statusCode).toBe(200);

    const res = await onA({ method: 'POST', url: `${V1}/account/passkeys/${passkeyId}/revoke` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().schema).toBe('svc-passkey-revoke.v1');
    expect(res.json().passkey).toMatchObject({ id: passkeyId, revokedAt: clock.now().toISOString() });

    expectLoginFailed((await login(authenticator, 'admin')).res);
    expectLoginFailed((await login(authenticator)).res);

    clock.advance(60_000);
    const again = await onA({ method: 'POST', url: `${V1}/account/passkeys/${passkeyId}/revoke` });
    expect(again.statusCode).toBe(200);
    expect(again.json().passkey.revokedAt).toBe(res.json().passkey.revokedAt);
    const rows = (await auditRows('passkey.revoke')).filter((r) => r.target === `passkey:${passkeyId}`);
    expect(rows).toHaveLength(1);
  });

  it('ends the sessions a revoked passkey opened, and only those', async () => {
    const first = await register();
    const second = await register();
    const viaFirst = (await login(first.authenticator, 'admin')).cookie;
    const viaSecond = (await login(second.authenticator, 'admin')).cookie;
    expect(viaFirst && viaSecond).toBeTruthy();
    const account = (cookie: string) => onA({ method: 'GET', url: `${V1}/account`, cookie });
    expect((await account(viaFirst!.value)).statusCode).toBe(200);

    const res = await onA({ method: 'POST', url: `${V1}/account/passkeys/${first.passkeyId}/revoke` });
    expect(res.statusCode).toBe(200);
    expect((await account(viaFirst!.value)).statusCode).toBe(401);
    expect((await account(viaSecond!.value)).statusCode).toBe(200);
    const row = (await auditRows('passkey.revoke')).find((r) => r.target === `passkey:${first.passkeyId}`);
    expect(row?.after).toMatchObject({ endedSessions: 1 });
  });

  it('answers 404 for a passkey that is not the caller\'s', async () => {
    const { passkeyId } = await register();
    const res = await onA({ method: 'POST', url: `${V1}/account/passkeys/${passkeyId}/revoke`, cookie: other.cookie });
    expect(res.statusCode).toBe(404);
    expect(res.json().reason).toBe('not-found');
    const missing = await onA({ method: 'POST', url: `${V1}/account/passkeys/${randomUUID()}/revoke` });
    expect(missing.statusCode).toBe(404);
    const stillActive = (await listPasskeys()).json<{ passkeys: { id: string; revokedAt: string | null }[] }>().passkeys.find((p) => p.id === passkeyId);
    expect(stillActive?.revokedAt).toBeNull();
  });
});

describe('audit', () => {
  it('records registration, login and revocation in the operator audit log', async () => {
    const { authenticator, passkeyId } = await register();
    const { res } = await login(authenticator, 'admin');
    expect(res.statusCode).toBe(200);
    await onA({ method: 'POST', url: `${V1}/account/passkeys/${passkeyId}/revoke` });

    const registered = (await auditRows('passkey.register')).find((r) => r.target === `passkey:${passkeyId}`);
    expect(registered).toMatchObject({ surface: 'api', actor: 'admin', before: null, after: { id: passkeyId, revokedAt: null } });
    expect(JSON.stringify(registered)).not.toContain(authenticator.id);
    expect(JSON.stringify(registered)).not.toContain(authenticator.cosePublicKey().toString('base64url'));

    const logins = (await auditRows('session.login')).filter((r) => r.after?.passkeyId === passkeyId);
    expect(logins).toHaveLength(1);
    expect(logins[0]).toMatchObject({ surface: 'api', actor: 'admin', actorUserId: res.json().userId, target: expect.stringMatching(/^session:/) });
    expect(JSON.stringify(logins[0])).not.toContain(res.cookies[0]!.value);

    const revoked = (await auditRows('passkey.revoke')).find((r) => r.target === `passkey:${passkeyId}`);
    expect(revoked).toMatchObject({ surface: 'api', actor: 'admin', before: { revokedAt: null }, after: { revokedAt: expect.any(String) } });
  });

  it('records nothing for failed attempts', async () => {
    const registerBefore = (await auditRows('passkey.register')).length;
    const loginBefore = (await auditRows('session.login')).length;
    const start = await startRegistration();
    await finishRegistration(onA, { challengeId: start.challengeId, response: new SoftAuthenticator(RP_ID, ORIGIN).register(start.options, { origin: 'http://evil.example' }) });
    const loginStart = await startLogin(onA);
    await finishLogin(onA, { challengeId: loginStart.challengeId, response: new SoftAuthenticator(RP_ID, ORIGIN).authenticate(loginStart.options) });
    expect((await auditRows('passkey.register')).length).toBe(registerBefore);
    expect((await auditRows('session.login')).length).toBe(loginBefore);
  });
});
