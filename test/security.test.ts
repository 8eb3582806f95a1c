import { Writable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeader } from '../src/domains/honeypot/ingest/signature.ts';
import { ConfigError, loadConfig } from '../src/platform/config.ts';
import { addressKey } from '../src/platform/client-address.ts';
import { CHECKED_BY_ENDPOINT, defineEndpoint } from '../src/platform/http/registry.ts';
import { proxyTrust } from '../src/platform/http/server.ts';
import { createLogger } from '../src/platform/logger.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { buildBareServer } from './helpers/bare-server.ts';
import { createTenant, INGEST_PATH } from './helpers/honeypot.ts';

/**
 * Security findings that live in the platform (docs/operations.md, "Security model"): the
 * per-address limit on failed authentication, proxy trust, log redaction, deep bodies and the
 * registry's own guard. Each test tries the attack and shows it no longer works.
 */

const BOGUS = 'svctok_bogusbogusbogusbogusbogusbogusbogus00';
const unixNow = () => Math.floor(Date.now() / 1000);

describe('failed authentication costs the attacker', () => {
  let t: TestApp;
  let lookups = 0;
  beforeAll(async () => {
    t = await startTestApp({ env: { OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '5' } });
    // Count credential lookups: the server holds this very resolver.
    const resolver = t.app.identity.credentials;
    const original = resolver.fromBearer.bind(resolver);
    resolver.fromBearer = async (token) => {
      lookups++;
      return original(token);
    };
  });
  afterAll(() => t.close());

  const guess = (remoteAddress: string, token = BOGUS) =>
    t.app.server.inject({ method: 'GET', url: `${V1}/tokens`, remoteAddress, headers: { authorization: `Bearer ${token}` } });

  it('answers 429 with Retry-After once an address has failed the limit, before any lookup', async () => {
    for (let i = 0; i < 5; i++) expect((await guess('198.51.100.7')).statusCode).toBe(401);
    const before = lookups;
    const refused = await guess('198.51.100.7');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'rate-limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Even a valid token from that address waits: the storm's address is closed, not the guess.
    expect((await guess('198.51.100.7', ADMIN_TOKEN)).statusCode).toBe(429);
    expect(lookups).toBe(before);
  });

  it('leaves other addresses and the health checks alone', async () => {
    expect((await guess('198.51.100.8', ADMIN_TOKEN)).statusCode).toBe(200);
    const health = await t.app.server.inject({ method: 'GET', url: '/healthz', remoteAddress: '198.51.100.7' });
    expect(health.statusCode).toBe(200);
  });

  it('counts 403s (a token without the scope) as failures too', async () => {
    const reader = await t.tokenWith(['read:dashboard']);
    for (let i = 0; i < 5; i++) expect((await guess('198.51.100.9', reader)).statusCode).toBe(403);
    expect((await guess('198.51.100.9', reader)).statusCode).toBe(429);
  });

  it('counts an IPv6 attacker by its /64, so rotating addresses inside it does not help', async () => {
    for (let i = 0; i < 5; i++) expect((await guess(`2001:db8:1:2::${i + 1}`)).statusCode).toBe(401);
    expect((await guess('2001:db8:1:2:ffff::9')).statusCode).toBe(429);
    expect((await guess('2001:db8:1:3::1', ADMIN_TOKEN)).statusCode).toBe(200);
  });

  it('refuses a forged-signature storm before the tenant is read, sampling the flood once', async () => {
    const secret = await createTenant(t, 'storm');
    const body = { events: [{ path: '/x', ip: '203.0.113.5', ua: 'curl/8' }] };
    const forge = () =>
      t.app.server.inject({
        method: 'POST',
        url: INGEST_PATH,
        remoteAddress: '198.51.100.20',
        payload: JSON.stringify(body),
        headers: { 'content-type': 'application/json', 'x-observatory-tenant': 'storm', 'x-observatory-signature': `t=${unixNow()},v1=${'0'.repeat(64)}` },
      });
    for (let i = 0; i < 5; i++) expect((await forge()).json()).toMatchObject({ reason: 'bad-signature' });
    for (let i = 0; i < 20; i++) expect((await forge()).statusCode).toBe(429);
    // The right secret from the same address waits out the block as well.
    const honest = await t.app.server.inject({
      method: 'POST',
      url: INGEST_PATH,
      remoteAddress: '198.51.100.20',
      payload: JSON.stringify(body),
      headers: {
        'content-type': 'application/json',
        'x-observatory-tenant': 'storm',
        'x-observatory-signature': signatureHeader(secret, unixNow(), JSON.stringify(body)),
      },
    });
    expect(honest.statusCode).toBe(429);
    const slo = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/ingest?window=1h` })).json<{ outcomeBreakdown: { outcome: string; count: number }[] }>();
    const count = (outcome: string) => slo.outcomeBreakdown.find((o) => o.outcome === outcome)?.count ?? 0;
    expect(count('bad-signature')).toBe(5);
    // Twenty-one refusals, one row: a flood writes one sample per address and window.
    expect(count('rate-limited')).toBe(1);
  });
});

describe('the failure limit can be turned off for test rigs', () => {
  it('keeps answering 401 with OBSERVATORY_AUTH_FAILURES_PER_MINUTE=0', async () => {
    const t = await startTestApp({ env: { OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0' } });
    try {
      for (let i = 0; i < 120; i++) {
        const res = await t.call({ method: 'GET', url: `${V1}/tokens`, token: BOGUS });
        expect(res.statusCode).toBe(401);
      }
    } finally {
      await t.close();
    }
  });

  it('defaults to 100 failures a minute', () => {
    expect(loadConfig({}).authFailuresPerMinute).toBe(100);
    expect(() => loadConfig({ OBSERVATORY_AUTH_FAILURES_PER_MINUTE: 'lots' })).toThrow(ConfigError);
  });
});

describe('trusting a proxy', () => {
  it('takes a hop count or proxy addresses, never "trust everything"', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ OBSERVATORY_TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ OBSERVATORY_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ OBSERVATORY_TRUST_PROXY: '10.0.0.0/8, 192.0.2.1' }).trustProxy).toEqual(['10.0.0.0/8', '192.0.2.1']);
    for (const bad of ['true', 'yes', '10.0.0.0/99', 'proxy.internal', '17']) {
      expect(() => loadConfig({ OBSERVATORY_TRUST_PROXY: bad }), bad).toThrow(/OBSERVATORY_TRUST_PROXY/);
    }
  });

  it('with one hop, takes the address the proxy saw and ignores a forged left-most one', async () => {
    const trust = proxyTrust(1) as (address: string, hop: number) => boolean;
    expect(trust('127.0.0.1', 0)).toBe(true);
    expect(trust('203.0.113.9', 1)).toBe(false);

    const t = await startTestApp({ env: { OBSERVATORY_TRUST_PROXY: '1', OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '3' } });
    try {
      // The attacker writes a new left-most address each time; the proxy appends the real one.
      const viaProxy = (forged: string, token = BOGUS) =>
        t.app.server.inject({
          method: 'GET',
          url: `${V1}/tokens`,
          remoteAddress: '127.0.0.1',
          headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': `${forged}, 203.0.113.9` },
        });
      for (let i = 0; i < 3; i++) expect((await viaProxy(`192.0.2.${i + 1}`)).statusCode).toBe(401);
      expect((await viaProxy('192.0.2.200')).statusCode).toBe(429);
      // Another real client behind the same proxy is someone else.
      const other = await t.app.server.inject({
        method: 'GET',
        url: `${V1}/tokens`,
        remoteAddress: '127.0.0.1',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-forwarded-for': '203.0.113.10' },
      });
      expect(other.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('with a proxy list, honours X-Forwarded-For only from those proxies', async () => {
    const t = await startTestApp({ env: { OBSERVATORY_TRUST_PROXY: '10.1.0.0/16', OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '2' } });
    try {
      const from = (remoteAddress: string, xff: string) =>
        t.app.server.inject({ method: 'GET', url: `${V1}/tokens`, remoteAddress, headers: { authorization: `Bearer ${BOGUS}`, 'x-forwarded-for': xff } });
      // Not a listed proxy: its X-Forwarded-For is ignored and the socket address counts.
      for (let i = 0; i < 2; i++) expect((await from('198.51.100.50', `192.0.2.${i + 1}`)).statusCode).toBe(401);
      expect((await from('198.51.100.50', '192.0.2.99')).statusCode).toBe(429);
      // A listed proxy: the client it names counts, whatever was written left of it.
      for (let i = 0; i < 2; i++) expect((await from('10.1.2.3', `6.6.6.${i}, 203.0.113.77`)).statusCode).toBe(401);
      expect((await from('10.1.9.9', '6.6.6.66, 203.0.113.77')).statusCode).toBe(429);
    } finally {
      await t.close();
    }
  });

  it('counts addresses by their IPv6 /64 and IPv4-mapped addresses as IPv4', () => {
    expect(addressKey('2001:db8:abcd:12:1::7')).toBe(addressKey('2001:db8:abcd:12:ffff::1'));
    expect(addressKey('2001:db8:abcd:13::1')).not.toBe(addressKey('2001:db8:abcd:12::1'));
    expect(addressKey('::ffff:198.51.100.1')).toBe('198.51.100.1');
    expect(addressKey('198.51.100.1')).toBe('198.51.100.1');
  });
});

describe('logs carry no credentials', () => {
  function capture() {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    return { logger: createLogger('info', sink), text: () => lines.join('') };
  }

  it('redacts credential headers wherever a request or response is logged', () => {
    const { logger, text } = capture();
    logger.info({
      req: { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, cookie: 'obs_session=sessionsecret1', 'x-api-key': 'agentkey_secret2', 'x-observatory-signature': 't=1,v1=deadbeefsig3' } },
      res: { headers: { 'set-cookie': 'obs_session=sessionsecret4' } },
      headers: { 'x-observatory-bridge': 'bridgesecret5' },
    }, 'request');
    const out = text();
    for (const secret of [ADMIN_TOKEN, 'sessionsecret1', 'agentkey_secret2', 'deadbeefsig3', 'sessionsecret4', 'bridgesecret5']) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain('[redacted]');
  });

  it('drops the bound values of a failed statement but keeps the statement', () => {
    const { logger, text } = capture();
    const cause = Object.assign(new Error('duplicate key value violates unique constraint "api_tokens_token_hash_unique"'), {
      detail: 'Key (token_hash)=(hashsecret6) already exists.',
    });
    const error = new DrizzleQueryError('insert into "api_tokens" ("token_hash") values ($1)', ['hashsecret6'], cause);
    logger.error({ err: error }, 'failed');
    logger.error({ err: Object.assign(new Error('bare'), { detail: 'Key (x)=(detailsecret7)', parameters: ['paramsecret8'] }) }, 'failed');
    const out = text();
    expect(out).not.toContain('hashsecret6');
    expect(out).not.toContain('detailsecret7');
    expect(out).not.toContain('paramsecret8');
    expect(out).toContain('insert into');
    expect(out).toContain('duplicate key value');
  });
});

describe('hostile bodies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers a body nested thousands of levels deep with NUL at the bottom with 400, not a stack overflow', async () => {
    const depth = 20_000;
    const raw = `{"name":${'['.repeat(depth)}"x\\u0000"${']'.repeat(depth)},"scopes":["read:dashboard"]}`;
    const res = await t.call({ method: 'POST', url: `${V1}/tokens`, payload: raw, headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body' });
    expect(res.json<{ field: string }>().field.startsWith('body.name[0][0]')).toBe(true);
  });
});

describe('the registry guards itself', () => {
  const base = {
    title: 'Signed thing',
    description: 'For this test.',
    method: 'POST' as const,
    path: '/signed',
    scope: null,
    tag: 'test',
    kind: 'write' as const,
    response: { schemaId: 'svc-test.v1', fields: { ok: Type.Boolean() } },
    example: { schema: 'svc-test.v1', generatedAt: '2026-01-01T00:00:00.000Z', ok: true },
    handler: async () => ({ ok: true }),
  };
  const build = (endpoint: ReturnType<typeof defineEndpoint>) => buildBareServer([endpoint]);

  it('stops start-up when a signature or agent-key endpoint names no caller check', () => {
    expect(() => build(defineEndpoint({ ...base, id: 'unsigned', auth: 'tenant-signature' }))).toThrow(/unsigned.*verifyCaller/);
    expect(() => build(defineEndpoint({ ...base, id: 'keyless', auth: 'agent-key' }))).toThrow(/keyless.*verifyCaller/);
    expect(() => build(defineEndpoint({ ...base, id: 'unlinked', method: 'GET', kind: 'read', auth: 'signed-url' }))).toThrow(/unlinked.*verifyCaller/);
  });

  it('stops start-up when a signed-link endpoint declares that it spans every toolset (no credential it takes can be bound)', () => {
    expect(() =>
      build(defineEndpoint({ ...base, id: 'spanningLink', method: 'GET', kind: 'read', auth: 'signed-url', verifyCaller: async () => {}, spansEveryToolset: 'a thing' })),
    ).toThrow(/spanningLink spans every toolset/);
  });

  it('builds when the check is named', async () => {
    const server = build(defineEndpoint({ ...base, id: 'signed', auth: 'tenant-signature', verifyCaller: async () => {} }));
    await server.close();
  });

  it('holds for every endpoint the service ships', async () => {
    const t = await startTestApp();
    try {
      const open = t.app.endpoints.filter((e) => CHECKED_BY_ENDPOINT.has(e.auth) && e.verifyCaller === null);
      expect(t.app.endpoints.filter((e) => e.auth === 'signed-url').map((e) => e.id)).toEqual(['downloadComplianceEvidence']);
      expect(open).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
