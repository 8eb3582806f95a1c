import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';

let t: TestApp;
const clock = new ManualClock('2026-11-23T08:00:00.000Z');
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t.close());

const create = (payload: unknown, token?: string | null) => t.call({ method: 'POST', url: `${V1}/tokens`, payload: payload as object, token });

describe('POST /tokens (happy)', () => {
  it('returns a 256-bit svctok_ plaintext once, with prefix and metadata', async () => {
    const res = await create({ name: 'grafana', scopes: ['read:dashboard', 'read:events'] });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.schema).toBe('svc-observatory-token-create.v1');
    expect(body.token).toMatch(/^svctok_[A-Za-z0-9_-]{43}$/);
    expect(body.token.startsWith(body.prefix)).toBe(true);
    expect(body.prefix.length).toBeLessThan(16);
    expect(body).toMatchObject({ name: 'grafana', scopes: ['read:dashboard', 'read:events'], createdAt: '2026-11-23T08:00:00.000Z', revokedAt: null });

    const works = await t.call({ method: 'GET', url: `${V1}/account`, token: body.token });
    expect(works.json()).toMatchObject({ username: 'admin', via: 'bearer', scopes: ['read:dashboard', 'read:events'] });
  });

  it('stores only a hash: the plaintext appears nowhere in the database', async () => {
    const { token } = (await create({ name: 'hash-check', scopes: ['read:events'] })).json();
    const db = t.app.database.db;
    const dump = JSON.stringify(rowsOf(await db.execute(sql`SELECT * FROM api_tokens`)));
    const audit = JSON.stringify(rowsOf(await db.execute(sql`SELECT * FROM operator_audit`)));
    const facts = JSON.stringify(rowsOf(await db.execute(sql`SELECT * FROM audit_facts`)));
    for (const text of [dump, audit, facts]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(token.slice(14));
    }
    expect(dump).not.toContain(ADMIN_TOKEN);
  });

  it('lists the caller\'s tokens only, newest first, without plaintext', async () => {
    const other = await t.app.identity.createOperator({ username: 'oscar', scopes: ['write:tokens', 'read:events'] });
    await create({ name: 'oscar-own', scopes: ['read:events'] }, other.token);
    const mine = (await t.call({ method: 'GET', url: `${V1}/tokens` })).json().tokens as { name: string; userId: string }[];
    const theirs = (await t.call({ method: 'GET', url: `${V1}/tokens`, token: other.token })).json().tokens as { name: string; userId: string }[];
    expect(mine.map((x) => x.name)).not.toContain('oscar-own');
    expect(theirs.map((x) => x.name).sort()).toEqual(['oscar-initial', 'oscar-own']);
    expect(new Set(theirs.map((x) => x.userId))).toEqual(new Set([other.userId]));
    expect(JSON.stringify(mine)).not.toMatch(/svctok_[A-Za-z0-9_-]{20,}/);
  });

  it('stamps lastUsedAt when a token is used, at most once a minute', async () => {
    const { token, id } = (await create({ name: 'usage', scopes: ['read:events'] })).json();
    clock.advance(5_000);
    await t.call({ method: 'GET', url: `${V1}/account`, token });
    const find = async () =>
      ((await t.call({ method: 'GET', url: `${V1}/tokens` })).json().tokens as { id: string; lastUsedAt: string | null }[]).find((x) => x.id === id);
    expect((await find())?.lastUsedAt).toBe(clock.now().toISOString());
    const firstUse = clock.now().toISOString();
    clock.advance(10_000);
    await t.call({ method: 'GET', url: `${V1}/account`, token });
    expect((await find())?.lastUsedAt).toBe(firstUse);
    clock.advance(61_000);
    await t.call({ method: 'GET', url: `${V1}/account`, token });
    expect((await find())?.lastUsedAt).toBe(clock.now().toISOString());
  });
});

describe('POST /tokens/{id}/revoke', () => {
  it('revokes at once, idempotently, and audits before and after', async () => {
    const { token, id } = (await create({ name: 'short-lived', scopes: ['read:events'] })).json();
    const first = await t.call({ method: 'POST', url: `${V1}/tokens/${id}/revoke` });
    expect(first.statusCode).toBe(200);
    expect(first.json().token).toMatchObject({ id, revokedAt: clock.now().toISOString() });
    expect((await t.call({ method: 'GET', url: `${V1}/account`, token })).statusCode).toBe(401);
    clock.advance(1000);
    const again = await t.call({ method: 'POST', url: `${V1}/tokens/${id}/revoke` });
    expect(again.json().token.revokedAt).toBe(first.json().token.revokedAt);

    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=token.revoke` })).json().rows;
    const rows = audit.filter((r: { target: string }) => r.target === `token:${id}`);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor: 'admin', surface: 'api', before: { revokedAt: null }, after: { revokedAt: first.json().token.revokedAt } });
    expect(rows[0].requestId).toBe(first.headers['x-request-id']);
  });

  it('answers 404 for another operator\'s token', async () => {
    const other = await t.app.identity.createOperator({ username: 'peggy', scopes: ['write:tokens'] });
    const theirs = (await t.call({ method: 'GET', url: `${V1}/tokens`, token: other.token })).json().tokens[0];
    const res = await t.call({ method: 'POST', url: `${V1}/tokens/${theirs.id}/revoke` });
    expect(res.statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: `${V1}/account`, token: other.token })).statusCode).toBe(200);
  });
});

describe('POST /tokens (errors and security)', () => {
  it('refuses scopes the caller does not hold with 403', async () => {
    const limited = (await create({ name: 'limited', scopes: ['write:tokens', 'read:events'] })).json().token;
    const res = await create({ name: 'escalate', scopes: ['read:events', 'write:alerts'] }, limited);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'forbidden' });
    expect(res.json().human).toContain('write:alerts');
    expect((await create({ name: 'subset', scopes: ['read:events'] }, limited)).statusCode).toBe(200);
  });

  it('refuses unknown scopes, empty scope lists, duplicate scopes and over-long names', async () => {
    for (const payload of [
      { name: 'x', scopes: ['admin'] },
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['read:events', 'read:events'] },
      { name: 'n'.repeat(101), scopes: ['read:events'] },
      { scopes: ['read:events'] },
    ]) {
      const res = await create(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().reason).toBe('invalid-body');
    }
  });

  it('never lets a token outrank its operator', async () => {
    const op = await t.app.identity.createOperator({ username: 'trent', scopes: ['write:tokens', 'read:events', 'read:empire'] });
    // Narrow the operator after the token was issued: the token loses the scope too.
    await t.app.database.db.execute(sql`UPDATE users SET scopes = '["write:tokens","read:events"]'::jsonb WHERE username = 'trent'`);
    const res = await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit`, token: op.token });
    expect(res.statusCode).toBe(403);
  });

  it('refuses malformed bearer headers and other token shapes with 401', async () => {
    for (const authorization of ['Bearer', 'Basic YWRtaW46YWRtaW4=', `Bearer ${ADMIN_TOKEN}x`, `Token ${ADMIN_TOKEN}`]) {
      const res = await t.call({ method: 'GET', url: `${V1}/tokens`, token: null, headers: { authorization } });
      expect(res.statusCode, authorization).toBe(401);
    }
  });
});

describe('tokens bound to toolsets', () => {
  const list = async (token?: string) => (await t.call({ method: 'GET', url: `${V1}/tokens`, token })).json().tokens as { id: string; toolsets: string[] | null }[];

  it('stores the binding and shows it in create, list and revoke; unbound tokens show null', async () => {
    const res = await create({ name: 'edge-writer', scopes: ['write:events'], toolsets: ['edge-us', 'alpha-1', 'edge-eu'] });
    expect(res.statusCode, res.body).toBe(200);
    const { id, token, toolsets } = res.json();
    expect(toolsets).toEqual(['alpha-1', 'edge-eu', 'edge-us']);
    expect((await list()).find((x) => x.id === id)?.toolsets).toEqual(['alpha-1', 'edge-eu', 'edge-us']);
    // What the ingest enforces: the principal carries the binding.
    const principal = await t.app.identity.credentials.fromBearer(token);
    expect(principal?.toolsets).toEqual(new Set(['alpha-1', 'edge-eu', 'edge-us']));

    const unbound = (await create({ name: 'unbound', scopes: ['read:events'] })).json();
    expect(unbound.toolsets).toBeNull();
    expect((await list()).find((x) => x.id === unbound.id)?.toolsets).toBeNull();
    expect((await t.app.identity.credentials.fromBearer(unbound.token))?.toolsets).toBeNull();

    const revoked = (await t.call({ method: 'POST', url: `${V1}/tokens/${id}/revoke` })).json().token;
    expect(revoked.toolsets).toEqual(['alpha-1', 'edge-eu', 'edge-us']);
    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=token.create` })).json().rows;
    expect(audit.find((r: { target: string }) => r.target === `token:${id}`).after.toolsets).toEqual(['alpha-1', 'edge-eu', 'edge-us']);
  });

  it('refuses malformed toolset lists with 400', async () => {
    for (const toolsets of [[], ['ab'], ['1abc'], ['edge eu'], ['edge-eu', 'edge-eu'], ['x'.repeat(129)], Array.from({ length: 51 }, (_, i) => `toolset-${i}`), [7]]) {
      const res = await create({ name: 'bad', scopes: ['read:events'], toolsets });
      expect(res.statusCode, JSON.stringify(toolsets)).toBe(400);
      expect(res.json().reason, JSON.stringify(toolsets)).toBe('invalid-body');
    }
    expect((await create({ name: 'fifty', scopes: ['read:events'], toolsets: Array.from({ length: 50 }, (_, i) => `toolset-${i}`) })).statusCode).toBe(200);
  });

  it('lets a bound token create tokens only within its own toolsets, inheriting them by default', async () => {
    const parent = (await create({ name: 'parent', scopes: ['write:tokens', 'write:events'], toolsets: ['edge-eu', 'edge-us'] })).json().token;
    const inherited = await create({ name: 'child', scopes: ['write:events'] }, parent);
    expect(inherited.statusCode, inherited.body).toBe(200);
    expect(inherited.json().toolsets).toEqual(['edge-eu', 'edge-us']);
    const narrower = await create({ name: 'child-eu', scopes: ['write:events'], toolsets: ['edge-eu'] }, parent);
    expect(narrower.statusCode, narrower.body).toBe(200);
    expect(narrower.json().toolsets).toEqual(['edge-eu']);

    for (const toolsets of [['edge-ap'], ['edge-eu', 'edge-ap']]) {
      const res = await create({ name: 'escape', scopes: ['write:events'], toolsets }, parent);
      expect(res.statusCode, JSON.stringify(toolsets)).toBe(403);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'forbidden' });
      expect(res.json().human).toContain('edge-ap');
      expect(res.json().human).not.toContain('edge-eu');
    }
    // A bound child that may mint cannot escape either: bindings only ever narrow.
    const child = (await create({ name: 'minting-child', scopes: ['write:tokens', 'write:events'], toolsets: ['edge-us'] }, parent)).json().token;
    expect((await create({ name: 'grandchild', scopes: ['write:events'] }, child)).json().toolsets).toEqual(['edge-us']);
    expect((await create({ name: 'grandchild-eu', scopes: ['write:events'], toolsets: ['edge-eu'] }, child)).statusCode).toBe(403);
  });

  it('repairs an admin token that was bound to toolsets at the next start', async () => {
    await t.app.database.db.execute(sql`UPDATE api_tokens SET toolsets = '["edge-eu"]'::jsonb WHERE name = 'OBSERVATORY_ADMIN_TOKEN'`);
    await t.secondInstance();
    const admin = await t.app.identity.credentials.fromBearer(ADMIN_TOKEN);
    expect(admin?.toolsets).toBeNull();
  });
});
