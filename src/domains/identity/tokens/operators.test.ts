import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';

/**
 * Operators through the API (docs/operations.md, "Operators, tokens and sessions"): adding one and
 * issuing a token for one, each audited, with the limits an attacker holding a lesser token meets.
 */
let t: TestApp;
const clock = new ManualClock('2026-11-23T08:00:00.000Z');
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t.close());

const post = (url: string, payload: object, token?: string) => t.call({ method: 'POST', url: `${V1}${url}`, payload, token });
const auditRows = async (verb: string) =>
  (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?limit=500&verb=${verb}` })).json().rows as {
    actor: string | null;
    surface: string;
    target: string;
    after: Record<string, unknown>;
    requestId: string | null;
  }[];
const boundToken = async (scopes: string[], toolsets: string[]) =>
  (await post('/tokens', { name: `bound-${toolsets.join('-')}`, scopes, toolsets })).json().token as string;

describe('POST {v1}/operators', () => {
  it('adds an operator whose first token works at once, audited with the caller as actor', async () => {
    const res = await post('/operators', { username: 'alice', displayName: 'Alice A.', scopes: ['read:dashboard', 'read:events'] });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.schema).toBe('svc-observatory-operator-create.v1');
    expect(body.operator).toMatchObject({ username: 'alice', displayName: 'Alice A.', scopes: ['read:dashboard', 'read:events'], disabledAt: null });
    expect(body.firstToken.token).toMatch(/^svctok_[A-Za-z0-9_-]{43}$/);
    expect(body.firstToken).toMatchObject({ name: 'alice-initial', userId: body.operator.id, toolsets: null });
    const account = await t.call({ method: 'GET', url: `${V1}/account`, token: body.firstToken.token });
    expect(account.json()).toMatchObject({ username: 'alice', scopes: ['read:dashboard', 'read:events'] });
    const [row] = (await auditRows('operator.create')).filter((r) => r.target === `user:${body.operator.id}`);
    expect(row).toMatchObject({ actor: 'admin', surface: 'api', after: { username: 'alice', tokenId: body.firstToken.id } });
    expect(row!.requestId).not.toBeNull();
    expect(JSON.stringify(row)).not.toContain(body.firstToken.token);
  });

  it('answers 409 for a username that exists, 400 for a bad name or an unknown scope', async () => {
    await post('/operators', { username: 'bob', scopes: ['read:events'] });
    const again = await post('/operators', { username: 'bob', scopes: ['read:dashboard'] });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'conflict' });
    for (const body of [{ username: 'Bob Smith', scopes: ['read:events'] }, { username: 'carol', scopes: ['read:everything'] }, { username: 'carol', scopes: [] }]) {
      const res = await post('/operators', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().schema).toBe('svc-error.v1');
    }
    expect((await t.call({ method: 'GET', url: `${V1}/operators` })).json().operators.map((o: { username: string }) => o.username)).not.toContain('carol');
  });

  it('gives only scopes the caller holds, and never to a caller bound to toolsets', async () => {
    const manager = await t.tokenWith(['write:tokens', 'read:events']);
    const beyond = await post('/operators', { username: 'dave', scopes: ['read:events', 'write:alerts'] }, manager);
    expect(beyond.statusCode).toBe(403);
    expect(beyond.json().human).toContain('write:alerts');
    expect((await post('/operators', { username: 'dave', scopes: ['read:events'] }, manager)).statusCode).toBe(200);

    const bound = await boundToken(['write:tokens', 'read:events'], ['alpha-lab']);
    const refused = await post('/operators', { username: 'erin', scopes: ['read:events'] }, bound);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().human).toMatch(/bound to toolsets/);
    expect((await t.call({ method: 'GET', url: `${V1}/operators`, token: bound })).statusCode).toBe(403);
    const listed = (await t.call({ method: 'GET', url: `${V1}/operators` })).json().operators.map((o: { username: string }) => o.username);
    expect(listed).toEqual(expect.arrayContaining(['admin', 'alice', 'bob', 'dave']));
    expect(listed).not.toContain('erin');
  });
});

describe('POST {v1}/operators/{username}/tokens', () => {
  it('issues a working token for another operator, audited with the issuer as actor', async () => {
    await post('/operators', { username: 'frank', scopes: ['read:dashboard', 'read:events'] });
    const res = await post('/operators/frank/tokens', { name: 'frank-laptop', scopes: ['read:events'] });
    expect(res.statusCode).toBe(200);
    const token = res.json();
    expect(token).toMatchObject({ schema: 'svc-observatory-token-create.v1', name: 'frank-laptop', scopes: ['read:events'], toolsets: null });
    expect((await t.call({ method: 'GET', url: `${V1}/account`, token: token.token })).json()).toMatchObject({ username: 'frank', scopes: ['read:events'] });
    const [row] = (await auditRows('token.create')).filter((r) => r.target === `token:${token.id}`);
    expect(row).toMatchObject({ actor: 'admin', surface: 'api', after: { operator: 'frank', userId: token.userId } });
  });

  it('answers 404 for an unknown operator, 400 for a scope the operator lacks', async () => {
    expect((await post('/operators/nobody/tokens', { name: 'x', scopes: ['read:events'] })).statusCode).toBe(404);
    const beyond = await post('/operators/frank/tokens', { name: 'x', scopes: ['write:alerts'] });
    expect(beyond.statusCode).toBe(400);
    expect(beyond.json().human).toContain('write:alerts');
    expect((await post('/operators/frank/tokens', { name: 'x', scopes: ['read:nothing'] })).statusCode).toBe(400);
  });

  it('never mints a credential for an operator who outranks the issuer, nor a scope the issuer lacks', async () => {
    await post('/operators', { username: 'grace', scopes: ['write:tokens', 'read:events'] });
    const grace = (await post('/operators/grace/tokens', { name: 'grace-own', scopes: ['write:tokens', 'read:events'] })).json().token as string;
    // grace holds write:tokens and read:events; admin holds everything: a token for admin would act as admin.
    const upward = await post('/operators/admin/tokens', { name: 'as-admin', scopes: ['read:events'] }, grace);
    expect(upward.statusCode).toBe(403);
    expect(upward.json().human).toMatch(/acts as admin/);
    // frank holds read:dashboard, which grace lacks.
    expect((await post('/operators/frank/tokens', { name: 'as-frank', scopes: ['read:events'] }, grace)).statusCode).toBe(403);
    // For herself, only scopes she holds.
    expect((await post('/operators/grace/tokens', { name: 'more', scopes: ['write:alerts'] }, grace)).statusCode).toBe(403);
    await post('/operators', { username: 'heidi', scopes: ['read:events'] });
    expect((await post('/operators/heidi/tokens', { name: 'by-grace', scopes: ['read:events'] }, grace)).statusCode).toBe(200);
  });

  it('keeps an issuer bound to toolsets within them', async () => {
    await post('/operators', { username: 'ivan', scopes: ['write:events', 'read:empire'] });
    const bound = await boundToken(['write:tokens', 'write:events', 'read:empire'], ['alpha-lab', 'beta-lab']);
    const inherited = await post('/operators/ivan/tokens', { name: 'ivan-inherits', scopes: ['write:events'] }, bound);
    expect(inherited.statusCode).toBe(200);
    expect(inherited.json().toolsets).toEqual(['alpha-lab', 'beta-lab']);
    const narrower = await post('/operators/ivan/tokens', { name: 'ivan-alpha', scopes: ['write:events'], toolsets: ['alpha-lab'] }, bound);
    expect(narrower.json().toolsets).toEqual(['alpha-lab']);
    const outside = await post('/operators/ivan/tokens', { name: 'ivan-gamma', scopes: ['write:events'], toolsets: ['gamma-lab'] }, bound);
    expect(outside.statusCode).toBe(403);
    expect(outside.json().human).toContain('gamma-lab');
  });
});
