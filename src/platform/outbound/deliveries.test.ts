import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, runJob, startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { ingestEmpire, tokenBoundTo } from '../../../test/helpers/empire.ts';
import { CHROME_UA, signedIngest } from '../../../test/helpers/honeypot.ts';
import { ManualClock } from '../clock.ts';
import { closedPort, type Receiver, startReceiver } from '../../../test/helpers/http-receiver.ts';

/**
 * The delivery listings (docs/platform/outbound.md, "Delivery listings"): what each rule's notifications
 * became, per destination, for honeypot and empire rules alike.
 */

const MINUTE = 60_000;
const clock = new ManualClock('2026-11-23T10:00:00.000Z');
const HOOK_SECRET = 'whsec_deliverylisting0123456789abcdef';
/** Path parts that are credentials of their webhook: never read back. */
const OK_PATH = '/hooks/T0001/B0002/okPathSecret42';
const DOWN_PATH = '/hooks/T0001/B0003/downPathSecret42';
let t: TestApp;
let rx: Receiver;
let downPort: number;
let tenantSecret = '';

const HONEYPOT = `${V1}/honeypot/alerts/deliveries`;
const empireOf = (toolset: string) => `${V1}/empire/${toolset}/alerts/deliveries`;
const get = (url: string, query: Record<string, string> = {}, token: string = ADMIN_TOKEN) => t.call({ method: 'GET', url, query, token });

beforeAll(async () => {
  rx = await startReceiver();
  rx.respond = (request) => ({ status: request.path === DOWN_PATH ? 503 : 200 });
  downPort = await closedPort();
  t = await startTestApp({
    clock,
    env: {
      OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
      OBSERVATORY_OUTBOUND_ALLOWED_PORTS: `80,443,${rx.port},${downPort}`,
      OBSERVATORY_OUTBOUND_TIMEOUT_MS: '2000',
    },
  });
  const tenant = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug: 'deliv-site', name: 'Deliveries' } });
  expect(tenant.statusCode, tenant.body).toBe(200);
  tenantSecret = tenant.json().signingSecret;
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

const hook = (path: string) => ({ kind: 'webhook', url: `${rx.origin}${path}`, secret: HOOK_SECRET });

describe('honeypot rule deliveries', () => {
  let ruleId = '';
  let firedAt = '';

  it('shows a failing destination with its attempts, last error and next retry, and a delivered one as delivered', async () => {
    const created = await t.call({
      method: 'POST',
      url: `${V1}/honeypot/alerts`,
      payload: { tenant: 'deliv-site', name: 'Any event', predicate: { kind: 'event_count_above', count: 0, windowMinutes: 5 }, destinations: [hook(OK_PATH), hook(DOWN_PATH)] },
    });
    expect(created.statusCode, created.body).toBe(200);
    ruleId = created.json().id;
    clock.advance(2 * MINUTE);
    const ingest = await signedIngest(t, {
      slug: 'deliv-site',
      secret: tenantSecret,
      unixSeconds: Math.floor(clock.now().getTime() / 1000),
      body: { events: [{ path: '/q/1', ua: CHROME_UA, ip: '203.0.113.7' }] },
    });
    expect(ingest.statusCode, ingest.body).toBe(200);
    clock.advance(2 * MINUTE);
    firedAt = clock.now().toISOString();
    expect(await runJob(t, 'alert-evaluate')).toMatchObject({ fired: 1 });

    // Before the dispatcher ran: both pending, due now, no attempt yet.
    const queued = (await get(HONEYPOT, { rule: ruleId })).json();
    expect(queued.deliveries.map((d: { status: string; attempts: number; nextAttemptAt: string }) => [d.status, d.attempts, d.nextAttemptAt])).toEqual([
      ['pending', 0, firedAt],
      ['pending', 0, firedAt],
    ]);

    expect(await runJob(t, 'outbound-dispatch')).toEqual({ sent: 1, retried: 1, failed: 0 });
    const res = await get(HONEYPOT, { rule: ruleId });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-observatory-alert-deliveries.v1', tenant: null, nextCursor: null });
    const byIndex = [...body.deliveries].sort((a, b) => a.destinationIndex - b.destinationIndex);
    expect(byIndex).toEqual([
      {
        id: expect.any(String),
        rule: { id: ruleId, name: 'Any event' },
        destinationIndex: 0,
        destination: { kind: 'webhook', url: `${rx.origin}/…`, secretSet: true },
        status: 'delivered',
        attempts: 1,
        lastStatus: 200,
        lastError: null,
        nextAttemptAt: null,
        firedAt,
        createdAt: firedAt,
        deliveredAt: firedAt,
      },
      {
        id: expect.any(String),
        rule: { id: ruleId, name: 'Any event' },
        destinationIndex: 1,
        destination: { kind: 'webhook', url: `${rx.origin}/…`, secretSet: true },
        status: 'pending',
        attempts: 1,
        lastStatus: 503,
        lastError: 'HTTP 503',
        // The first retry waits 30 s.
        nextAttemptAt: new Date(clock.now().getTime() + 30_000).toISOString(),
        firedAt,
        createdAt: firedAt,
        deliveredAt: null,
      },
    ]);
    // The delivery id is the one the receiver saw.
    expect(rx.to(OK_PATH)[0]!.headers['x-observatory-delivery']).toBe(byIndex[0].id);
    // Neither the URL paths (credentials of their webhooks) nor the signing secret are read back.
    for (const secret of [OK_PATH, DOWN_PATH, 'okPathSecret42', HOOK_SECRET]) expect(res.body).not.toContain(secret);
  });

  it('filters by destination, kind, status and tenant, and pages', async () => {
    const ids = async (query: Record<string, string>) => {
      const res = await get(HONEYPOT, query);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().deliveries.map((d: { destinationIndex: number; status: string }) => `${d.destinationIndex}:${d.status}`);
    };
    expect(await ids({ rule: ruleId, destination: '1' })).toEqual(['1:pending']);
    expect(await ids({ rule: ruleId, destination: '0' })).toEqual(['0:delivered']);
    expect(await ids({ status: 'delivered' })).toEqual(['0:delivered']);
    expect(await ids({ status: 'failed' })).toEqual([]);
    expect(await ids({ kind: 'slack' })).toEqual([]);
    expect((await ids({ kind: 'webhook', tenant: 'deliv-site' })).sort()).toEqual(['0:delivered', '1:pending']);
    // An id no rule has lists nothing, as a rule without deliveries.
    expect(await ids({ rule: '00000000-0000-4000-8000-000000000000', destination: '3' })).toEqual([]);

    const first = (await get(HONEYPOT, { limit: '1' })).json();
    expect(first.deliveries).toHaveLength(1);
    expect(first.nextCursor).toEqual(expect.stringMatching(/^2026-11-23T10:04:00.000Z\|[0-9a-f-]{36}$/));
    const second = (await get(HONEYPOT, { limit: '1', cursor: first.nextCursor })).json();
    expect(second.deliveries).toHaveLength(1);
    expect(second.deliveries[0].id).not.toBe(first.deliveries[0].id);
    expect(second.nextCursor).toBeNull();

    const noRule = await get(HONEYPOT, { destination: '0' });
    expect(noRule.statusCode).toBe(400);
    expect(noRule.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query', field: 'query.destination' });
    const past = await get(HONEYPOT, { rule: ruleId, destination: '2' });
    expect(past.statusCode).toBe(400);
    expect(past.json().human).toContain('below 2');
    expect((await get(HONEYPOT, { tenant: 'no-such-site' })).json()).toMatchObject({ reason: 'not-found' });
    expect((await get(HONEYPOT, { cursor: 'yesterday' })).json()).toMatchObject({ reason: 'invalid-query', field: 'query.cursor' });
  });

  it('needs read:alerts', async () => {
    expect((await get(HONEYPOT, {}, await t.tokenWith(['read:dashboard']))).statusCode).toBe(403);
    expect((await get(HONEYPOT, {}, await t.tokenWith(['read:alerts']))).statusCode).toBe(200);
  });
});

describe('empire rule deliveries', () => {
  it('shows an unreachable destination retrying, narrowed to the toolset and refused to a token bound elsewhere', async () => {
    const created = await t.call({
      method: 'POST',
      url: `${V1}/empire/deliv-lab/alerts`,
      payload: {
        name: 'Crawl seen',
        predicate: { kind: 'empire_count_gte', count: 1, windowMinutes: 15 },
        destinations: [{ kind: 'webhook', url: `http://127.0.0.1:${downPort}/hooks/down`, secret: HOOK_SECRET }],
      },
    });
    expect(created.statusCode, created.body).toBe(200);
    const ruleId = created.json().id;
    clock.advance(MINUTE);
    expect((await ingestEmpire(t, 'deliv-lab', [{ id: 'crawl-1', eventType: 'crawl.page' }])).statusCode).toBe(200);
    clock.advance(2 * MINUTE);
    expect(await runJob(t, 'empire-alert-evaluate')).toMatchObject({ fired: 1 });
    expect(await runJob(t, 'outbound-dispatch')).toMatchObject({ retried: 2 }); // this rule's, and the honeypot rule's due retry

    const res = await get(empireOf('deliv-lab'));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-empire-alert-deliveries.v1', toolset: 'deliv-lab', tenant: null, nextCursor: null });
    expect(body.deliveries).toEqual([
      expect.objectContaining({
        rule: { id: ruleId, name: 'Crawl seen' },
        destinationIndex: 0,
        destination: { kind: 'webhook', url: `http://127.0.0.1:${downPort}/…`, secretSet: true },
        status: 'pending',
        attempts: 1,
        lastStatus: null,
        lastError: expect.stringContaining('ECONNREFUSED'),
        nextAttemptAt: new Date(clock.now().getTime() + 30_000).toISOString(),
        deliveredAt: null,
      }),
    ]);
    expect(res.body).not.toContain('/hooks/down');

    // Another toolset's listing, or another domain's rule as a filter, shows none of it.
    expect((await get(empireOf('other-lab'))).json().deliveries).toEqual([]);
    expect((await get(empireOf('other-lab'), { rule: ruleId })).json().deliveries).toEqual([]);
    const bound = await tokenBoundTo(t, ['read:alerts'], ['other-lab']);
    const refused = await get(empireOf('deliv-lab'), {}, bound);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ reason: 'forbidden' });
    expect((await get(empireOf('other-lab'), {}, bound)).statusCode).toBe(200);
  });
});
