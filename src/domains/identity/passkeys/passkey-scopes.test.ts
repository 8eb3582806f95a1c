import type { LightMyRequestResponse } from 'fastify';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { SoftAuthenticator } from '../../../../test/helpers/soft-authenticator.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { SESSION_COOKIE } from '../../../platform/http/auth.ts';
import { SCOPES, type Scope } from '../../../platform/http/registry.ts';
import * as identityRepo from '../tokens/repository.ts';
import { passkeys as passkeysTable } from '../schema.ts';

/**
 * A session never carries more than the credential that created it: passkeys are registered only
 * by a session or a token holding everything its operator holds, a passkey records the scopes of
 * its registrar, and its sessions carry those scopes, narrowed by the operator's current ones.
 */

const RP_ID = 'localhost';
const ORIGIN = 'http://localhost:8080';
const clock = new ManualClock('2026-04-06T10:00:00.000Z');
let t: TestApp;

/** An operator other than admin, holding a few scopes; `token` is their first token and carries all of them. */
const CAROL_SCOPES: Scope[] = ['read:dashboard', 'read:events', 'write:tokens'];
let carol: { userId: string; token: string };
/** Carol's token that carries only read:dashboard: the attacker's starting point. */
let readOnly: string;

type Credential = { token: string } | { cookie: string };

function call(method: 'GET' | 'POST', url: string, credential: Credential, payload?: object): Promise<LightMyRequestResponse> {
  return t.call({
    method,
    url: `${V1}${url}`,
    ...(payload === undefined ? {} : { payload }),
    ...('token' in credential ? { token: credential.token } : { token: null, headers: { cookie: `${SESSION_COOKIE}=${credential.cookie}` } }),
  });
}

const startRegistration = (credential: Credential) => call('POST', '/account/passkeys/register/start', credential, {});

/** Registers a new software passkey with `credential`; fails the test unless both steps answer 200. */
async function register(credential: Credential): Promise<{ authenticator: SoftAuthenticator; passkeyId: string }> {
  const authenticator = new SoftAuthenticator(RP_ID, ORIGIN);
  const start = await startRegistration(credential);
  expect(start.statusCode, start.body).toBe(200);
  const { challengeId, options } = start.json();
  const finish = await call('POST', '/account/passkeys/register/finish', credential, { challengeId, response: authenticator.register(options) });
  expect(finish.statusCode, finish.body).toBe(200);
  return { authenticator, passkeyId: finish.json().passkey.id };
}

/** Logs in with the authenticator (username-less, discoverable) and returns the session cookie. */
async function login(authenticator: SoftAuthenticator): Promise<string> {
  const start = await t.call({ method: 'POST', url: `${V1}/account/login/start`, token: null, payload: {} });
  expect(start.statusCode, start.body).toBe(200);
  const { challengeId, options } = start.json();
  const res = await t.call({ method: 'POST', url: `${V1}/account/login/finish`, token: null, payload: { challengeId, response: authenticator.authenticate(options) } });
  expect(res.statusCode, res.body).toBe(200);
  return res.cookies.find((c) => c.name === SESSION_COOKIE)!.value;
}

async function scopesOf(credential: Credential): Promise<string[]> {
  const res = await call('GET', '/account', credential);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().scopes;
}

async function passkeysOf(credential: Credential): Promise<{ id: string; revokedAt: string | null }[]> {
  const res = await call('GET', '/account/passkeys', credential);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().passkeys;
}

function expectForbidden(res: LightMyRequestResponse, ...phrases: string[]) {
  expect(res.statusCode, res.body).toBe(403);
  expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'forbidden' });
  expect(res.json().human).toContain('every scope of its operator');
  for (const phrase of phrases) expect(res.json().human).toContain(phrase);
}

async function createToken(credential: Credential, body: object) {
  return call('POST', '/tokens', credential, body);
}

beforeAll(async () => {
  t = await startTestApp({ clock });
  const created = await t.app.identity.createOperator({ username: 'carol', scopes: CAROL_SCOPES });
  carol = { userId: created.userId, token: created.token };
  const res = await createToken({ token: carol.token }, { name: 'dashboard-only', scopes: ['read:dashboard'] });
  expect(res.statusCode, res.body).toBe(200);
  readOnly = res.json().token;
});
afterAll(() => t.close());

describe('who may register and revoke passkeys', () => {
  it('stops the whole chain read-only token → passkey → session → write:tokens token at its first step', async () => {
    const attacker = new SoftAuthenticator(RP_ID, ORIGIN);
    // Step 1, the only way from a token to a session: register a passkey. Refused at start…
    const start = await startRegistration({ token: readOnly });
    expect(start.statusCode).toBe(403);
    // …and at finish, whatever challenge it names, before the challenge is even looked at.
    const finish = await call('POST', '/account/passkeys/register/finish', { token: readOnly }, {
      challengeId: '00000000-0000-4000-8000-000000000000',
      response: attacker.register({ challenge: 'AAAA', user: { id: Buffer.from(carol.userId.replace(/-/g, ''), 'hex').toString('base64url') } }),
    });
    expect(finish.statusCode).toBe(403);
    expect(await passkeysOf({ token: carol.token })).toEqual([]);
    // Step 2: with no passkey registered, the attacker's authenticator opens no session.
    const loginStart = (await t.call({ method: 'POST', url: `${V1}/account/login/start`, token: null, payload: { username: 'carol' } })).json();
    const loginRes = await t.call({
      method: 'POST',
      url: `${V1}/account/login/finish`,
      token: null,
      payload: { challengeId: loginStart.challengeId, response: attacker.authenticate(loginStart.options) },
    });
    expect(loginRes.statusCode).toBe(401);
    expect(loginRes.json().reason).toBe('login-failed');
    expect(loginRes.cookies.find((c) => c.name === SESSION_COOKIE)).toBeUndefined();
    // Step 3: and the token itself cannot mint a write:tokens token.
    const mint = await createToken({ token: readOnly }, { name: 'escalated', scopes: ['write:tokens'] });
    expect(mint.statusCode).toBe(403);
    expect(mint.json().reason).toBe('forbidden');
  });

  it('refuses a read:dashboard-only token at register/start, and nothing is stored', async () => {
    const res = await startRegistration({ token: readOnly });
    expectForbidden(res, 'read:events', 'write:tokens');
    expect(await passkeysOf({ token: carol.token })).toEqual([]);
  });

  it('refuses it at register/finish too, without using up the challenge', async () => {
    const authenticator = new SoftAuthenticator(RP_ID, ORIGIN);
    const start = (await startRegistration({ token: carol.token })).json();
    const body = { challengeId: start.challengeId, response: authenticator.register(start.options) };
    expectForbidden(await call('POST', '/account/passkeys/register/finish', { token: readOnly }, body));
    expect(await passkeysOf({ token: carol.token })).toEqual([]);
    // The full credential can still finish the very same ceremony.
    const finished = await call('POST', '/account/passkeys/register/finish', { token: carol.token }, body);
    expect(finished.statusCode, finished.body).toBe(200);
    expectForbidden(await call('POST', `/account/passkeys/${finished.json().passkey.id}/revoke`, { token: readOnly }));
    expect((await passkeysOf({ token: carol.token })).find((p) => p.id === finished.json().passkey.id)?.revokedAt).toBeNull();
    expect((await call('POST', `/account/passkeys/${finished.json().passkey.id}/revoke`, { token: carol.token })).statusCode).toBe(200);
  });

  it('refuses a token one scope short of its operator, even admin\'s', async () => {
    const allButOne = (await createToken({ token: carol.token }, { name: 'no-events', scopes: ['read:dashboard', 'write:tokens'] })).json().token;
    expectForbidden(await startRegistration({ token: allButOne }), 'read:events');
    const adminShort = await t.tokenWith(SCOPES.filter((s) => s !== 'read:intel'));
    expectForbidden(await startRegistration({ token: adminShort }), 'read:intel');
    expect((await startRegistration({ token: await t.tokenWith([...SCOPES]) })).statusCode).toBe(200);
  });

  it('refuses a token bound to toolsets even when it carries every scope', async () => {
    const bound = await createToken({ token: carol.token }, { name: 'bound', scopes: CAROL_SCOPES, toolsets: ['edge-eu'] });
    expect(bound.statusCode, bound.body).toBe(200);
    expectForbidden(await startRegistration({ token: bound.json().token }), 'bound to toolsets');
  });

  it('keeps a session at the scopes of the passkey even when the passkey holds less than the operator', async () => {
    // Were a passkey registered by a read:dashboard session (or by an old release), its sessions
    // carry read:dashboard and nothing else: no write:tokens to mint with.
    const narrow = await t.app.identity.openSession(t.app.database.db, carol.userId, null, ['read:dashboard']);
    expect(await scopesOf({ cookie: narrow.secret })).toEqual(['read:dashboard']);
    const { authenticator } = await register({ cookie: narrow.secret });
    const session = await login(authenticator);
    expect(await scopesOf({ cookie: session })).toEqual(['read:dashboard']);
    expect((await createToken({ cookie: session }, { name: 'escalated', scopes: ['write:tokens'] })).statusCode).toBe(403);
    expect((await call('GET', '/tokens', { cookie: session })).statusCode).toBe(403);
  });
});

describe('sessions carry the scopes of the registering credential', () => {
  let first: { authenticator: SoftAuthenticator; passkeyId: string };
  let session: string;

  beforeAll(async () => {
    first = await register({ token: carol.token });
    session = await login(first.authenticator);
  });

  it('gives a session from a full token\'s passkey exactly the operator\'s scopes', async () => {
    const account = await call('GET', '/account', { cookie: session });
    expect(account.json()).toMatchObject({ username: 'carol', via: 'session', scopes: [...CAROL_SCOPES].sort() });
    const minted = await createToken({ cookie: session }, { name: 'from-session', scopes: ['read:events'] });
    expect(minted.statusCode, minted.body).toBe(200);
    expect(minted.json().toolsets).toBeNull();
  });

  it('lets a session register a second passkey whose sessions carry the same scopes', async () => {
    const second = await register({ cookie: session });
    expect(second.passkeyId).not.toBe(first.passkeyId);
    const viaSecond = await login(second.authenticator);
    expect(await scopesOf({ cookie: viaSecond })).toEqual([...CAROL_SCOPES].sort());
    // A session may revoke too (here the second passkey, which ends its session).
    expect((await call('POST', `/account/passkeys/${second.passkeyId}/revoke`, { cookie: session })).statusCode).toBe(200);
    expect((await call('GET', '/account', { cookie: viaSecond })).statusCode).toBe(401);
  });

  it('narrows a live session when the operator loses a scope, and never widens it past the passkey', async () => {
    const db = t.app.database.db;
    await identityRepo.setUserScopes(db, carol.userId, ['read:dashboard', 'write:tokens']);
    try {
      expect(await scopesOf({ cookie: session })).toEqual(['read:dashboard', 'write:tokens']);
      expect((await call('GET', '/honeypot/recent', { cookie: session })).statusCode).toBe(403);
      // A scope granted after registration is not in the passkey, so not in its sessions.
      await identityRepo.setUserScopes(db, carol.userId, [...CAROL_SCOPES, 'read:tenants']);
      expect(await scopesOf({ cookie: session })).toEqual([...CAROL_SCOPES].sort());
      expect(await scopesOf({ cookie: await login(first.authenticator) })).toEqual([...CAROL_SCOPES].sort());
    } finally {
      await identityRepo.setUserScopes(db, carol.userId, CAROL_SCOPES);
    }
  });

  it('opens sessions with no scopes from a passkey registered before passkeys had scopes', async () => {
    const old = await register({ token: carol.token });
    // What the migration gives every earlier passkey.
    await t.app.database.db.update(passkeysTable).set({ scopes: [] }).where(eq(passkeysTable.id, old.passkeyId));
    const cookie = await login(old.authenticator);
    expect(await scopesOf({ cookie })).toEqual([]);
    expect((await call('GET', '/tokens', { cookie })).statusCode).toBe(403);
  });

  it('audits the scopes a passkey records and a login carries', async () => {
    const audit = async (verb: string) =>
      (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=${verb}&limit=500` })).json().rows as { target: string; after: Record<string, unknown> }[];
    const registered = (await audit('passkey.register')).find((r) => r.target === `passkey:${first.passkeyId}`);
    expect(registered?.after).toMatchObject({ scopes: [...CAROL_SCOPES].sort(), registeredVia: 'bearer' });
    const logins = (await audit('session.login')).filter((r) => r.after.passkeyId === first.passkeyId);
    expect(logins.length).toBeGreaterThan(0);
    expect(logins[0]!.after.scopes).toEqual([...CAROL_SCOPES].sort());
  });
});
