import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Endpoint } from '../src/platform/http/registry.ts';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { CHROME_UA, createTenant, signedIngest } from './helpers/honeypot.ts';

/**
 * Hostile path and query values over the whole registry (issue 14): whatever a caller puts in a
 * URL, the answer is never a 5xx, a refusal is always svc-error.v1, and a hostile `tenant` never
 * yields another tenant's events. Bodies are never coerced to their declared types.
 */

let t: TestApp;
const TENANT_A = 'hostile-a';
const TENANT_B = 'hostile-b';
const secretPathA = `/honeypot/topics/only-a-${randomUUID()}`;
const secretPathB = `/honeypot/topics/only-b-${randomUUID()}`;

type Props = Record<string, { examples?: unknown[]; default?: unknown }>;
type ObjectSchema = { required?: string[]; properties?: Props } | null | undefined;

/** Required query parameters without a default, each set to its schema's first example (as test/contract.test.ts does). */
function requiredQuery(e: Endpoint): Record<string, string> {
  const schema = e.query as ObjectSchema;
  const query: Record<string, string> = {};
  for (const name of schema?.required ?? []) {
    if (schema?.properties?.[name]?.default !== undefined) continue;
    const example = schema?.properties?.[name]?.examples?.[0];
    if (example !== undefined) query[name] = String(example);
  }
  return query;
}

const SAMPLE_ID = '00000000-0000-4000-8000-000000000000';
const pathWith = (path: string, values: Record<string, string> = {}) =>
  path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? SAMPLE_ID));

/** A query string; an array value is sent as repeated keys. `encodeURIComponent` sends U+0000 as `%00`. */
function queryString(query: Record<string, string | string[]>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    for (const one of [value].flat()) parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(one)}`);
  }
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

const HOSTILE: (string | string[])[] = [
  '99999999999999999999999',
  '9007199254740993',
  '2147483648',
  '-1',
  '-99999999999',
  '0',
  '-0',
  '1.5',
  'NaN',
  '1e309',
  '-1e309',
  'Infinity',
  '-Infinity',
  '0x10',
  ' 5',
  ' ',
  '',
  'x'.repeat(10_000),
  '\u0000',
  'a\u0000b',
  "' OR 1=1 --",
  "1; DROP TABLE honeypot_events; --",
  '%',
  '_',
  '{"a":1}',
  '[1,2]',
  'true',
  'null',
  '../../etc/passwd',
  '\u202e\ud83d\ude00',
  ['1', '2'],
  ['', ''],
  ['x'.repeat(100), '5'],
];

const gets = () => t.app.endpoints.filter((e) => e.method === 'GET');
const queryNames = (e: Endpoint) => Object.keys((e.query as ObjectSchema)?.properties ?? {});
const paramNames = (e: Endpoint) => [...e.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);

function expectSafe(res: LightMyRequestResponse, what: string) {
  expect(res.statusCode, `${what}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
  if (res.statusCode >= 400) {
    const body = res.json() as { schema?: unknown; reason?: unknown; human?: unknown };
    expect(body.schema, `${what} ${res.statusCode} ${res.body.slice(0, 200)}`).toBe('svc-error.v1');
    expect(typeof body.reason, what).toBe('string');
    expect(typeof body.human, what).toBe('string');
  }
}

beforeAll(async () => {
  t = await startTestApp({
    env: {
      OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0',
      // The public agent API is called hundreds of times here: its per-minute limits would turn
      // every later probe into a 429 and hide what the validation does.
      OBSERVATORY_AGENT_API_ANON_PER_MINUTE: '1000000',
      OBSERVATORY_AGENT_API_IP_PER_MINUTE: '1000000',
    },
  });
  const unixSeconds = Math.floor(Date.now() / 1000);
  for (const [slug, path] of [
    [TENANT_A, secretPathA],
    [TENANT_B, secretPathB],
  ] as const) {
    const secret = await createTenant(t, slug);
    const res = await signedIngest(t, { slug, secret, unixSeconds, body: { events: [{ id: `${slug}-1`, path, ua: CHROME_UA, ip: '198.51.100.20' }] } });
    expect(res.statusCode, res.body).toBe(200);
  }
}, 120_000);
afterAll(() => t.close());

describe('bodies are not coerced', () => {
  it('refuses a string where the body declares an array', async () => {
    const res = await t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name: 'coerced', scopes: 'read:dashboard' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body', field: 'body.scopes' });
  });

  it('refuses a number sent as a string in a body', async () => {
    const secret = await createTenant(t, 'hostile-numbers');
    const res = await signedIngest(t, {
      slug: 'hostile-numbers',
      secret,
      unixSeconds: Math.floor(Date.now() / 1000),
      body: { events: [{ id: 'n-1', path: '/honeypot/topics/n', ua: CHROME_UA, ip: '198.51.100.21', asn: '3320' }] },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body', field: 'body.events[0].asn' });
  });

  it('refuses a JSON number too large to be finite (1e309 parses to Infinity)', async () => {
    const secret = await createTenant(t, 'hostile-infinite');
    const raw = `{"events":[{"id":"i-1","path":"/honeypot/topics/i","ua":${JSON.stringify(CHROME_UA)},"ip":"198.51.100.22","asn":1e309}]}`;
    const res = await signedIngest(t, { slug: 'hostile-infinite', secret, unixSeconds: Math.floor(Date.now() / 1000), raw });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ reason: 'invalid-body', field: 'body.events[0].asn' });
  });
});

describe('numbers in query strings', () => {
  it('refuses limit=1e309 naming query.limit', async () => {
    for (const value of ['1e309', '-1e309', 'Infinity', '0x10', ' ']) {
      const res = await t.call({ method: 'GET', url: `${V1}/honeypot/recent${queryString({ limit: value })}` });
      expect(res.statusCode, `${value}: ${res.body}`).toBe(400);
      expect(res.json(), value).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query', field: 'query.limit' });
    }
  });

  it('still converts a query number (limit=5) and honours the declared bounds', async () => {
    const ok = await t.call({ method: 'GET', url: `${V1}/honeypot/recent?limit=1` });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().events).toHaveLength(1);
    expect((await t.call({ method: 'GET', url: `${V1}/honeypot/recent?limit=5` })).statusCode).toBe(200);
    for (const value of ['0', '101', '99999999999999999999999', '1.5']) {
      const res = await t.call({ method: 'GET', url: `${V1}/honeypot/recent?limit=${value}` });
      expect(res.statusCode, value).toBe(400);
      expect(res.json(), value).toMatchObject({ reason: 'invalid-query', field: 'query.limit' });
    }
  });
});

describe('hostile values over the whole registry', () => {
  it('never answers 5xx to a hostile query value, and refuses with svc-error.v1', async () => {
    let probes = 0;
    for (const e of gets()) {
      const base = requiredQuery(e);
      for (const name of queryNames(e)) {
        for (const value of HOSTILE) {
          const res = await t.call({ method: 'GET', url: pathWith(e.path) + queryString({ ...base, [name]: value }) });
          expectSafe(res, `${e.id} ${name}=${JSON.stringify(value).slice(0, 40)}`);
          probes++;
        }
      }
    }
    expect(probes).toBeGreaterThan(100);
  }, 120_000);

  it('never answers 5xx to a hostile path value', async () => {
    for (const e of gets().filter((x) => x.path.includes('{'))) {
      for (const name of paramNames(e)) {
        for (const value of HOSTILE.filter((v): v is string => typeof v === 'string' && v !== '')) {
          const res = await t.call({ method: 'GET', url: pathWith(e.path, { [name]: value }) + queryString(requiredQuery(e)) });
          expectSafe(res, `${e.id} path ${name}=${JSON.stringify(value).slice(0, 40)}`);
        }
      }
    }
  }, 120_000);

  it('answers malformed percent-encoding and over-long path values with svc-error.v1', async () => {
    const get = gets().find((e) => paramNames(e).length > 0 && e.auth !== 'none')!;
    for (const url of [
      get.path.replace(/\{[^}]+\}/, '%E0%A4%A'),
      get.path.replace(/\{[^}]+\}/, 'y'.repeat(200)),
      `${V1}/honeypot/recent?limit=%E0%A4%A`,
      `${V1}/honeypot/recent?%00=1`,
      `${V1}/honeypot/recent?limit=1&&&==&limit`,
    ]) {
      const res = await t.call({ method: 'GET', url });
      expectSafe(res, url.slice(0, 80));
      expect(res.statusCode, url.slice(0, 80)).toBeLessThan(500);
    }
  });

  it('never answers 5xx to generated query values (fast-check sample)', async () => {
    const endpoints = gets().filter((e) => queryNames(e).length > 0);
    const value = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 64 }),
      fc.double().map(String),
      fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
      fc.array(fc.string({ maxLength: 8 }), { minLength: 2, maxLength: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...endpoints), fc.nat(), value, async (e, pick, v) => {
        const names = queryNames(e);
        const name = names[pick % names.length]!;
        const res = await t.call({ method: 'GET', url: pathWith(e.path) + queryString({ ...requiredQuery(e), [name]: v }) });
        expectSafe(res, `${e.id} ${name}=${JSON.stringify(v).slice(0, 60)}`);
      }),
      { numRuns: 200 },
    );
  }, 120_000);

  it("never returns another tenant's events for a hostile tenant value", async () => {
    const withTenant = gets().filter((e) => e.path.includes('/honeypot/') && queryNames(e).includes('tenant'));
    expect(withTenant.length).toBeGreaterThan(2);
    // The control: the events are there to be leaked.
    const own = await t.call({ method: 'GET', url: `${V1}/honeypot/recent${queryString({ tenant: TENANT_A })}` });
    expect(own.body).toContain(secretPathA);
    expect(own.body).not.toContain(secretPathB);
    const hostileTenants: (string | string[])[] = [
      `${TENANT_A}' OR 1=1 --`,
      `${TENANT_A}' OR tenant = '${TENANT_B}`,
      'hostile-%',
      'hostile-_',
      '%',
      '*',
      `${TENANT_A},${TENANT_B}`,
      [TENANT_A, TENANT_B],
      [TENANT_B, TENANT_A],
      TENANT_B.toUpperCase(),
      ` ${TENANT_B}`,
      `${TENANT_B} `,
      `${TENANT_B}\u0000`,
      `${TENANT_A}\u0000${TENANT_B}`,
      '',
      ' ',
      'null',
      'undefined',
      '{"a":1}',
      'x'.repeat(10_000),
      '1e309',
      'NaN',
    ];
    for (const e of withTenant) {
      for (const tenant of hostileTenants) {
        const res = await t.call({ method: 'GET', url: pathWith(e.path) + queryString({ ...requiredQuery(e), tenant }) });
        const what = `${e.id} tenant=${JSON.stringify(tenant).slice(0, 60)}`;
        expectSafe(res, what);
        expect(res.body, what).not.toContain(secretPathA);
        expect(res.body, what).not.toContain(secretPathB);
      }
    }
  }, 120_000);
});
