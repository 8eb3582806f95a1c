import { createHmac } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { ManualClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import type { Database, Db } from '../db/client.ts';
import { withTransaction } from '../db/transaction.ts';
import { createScheduler } from '../jobs/scheduler.ts';
import { createMetrics } from '../metrics.ts';
import type { Destination } from './destinations.ts';
import { outboundDeliveries } from './schema.ts';
import { createOutbound, type EnqueueInput, MAX_ATTEMPTS, type Outbound, outboundJobs, retryDelayMs } from './service.ts';
import { type Receiver, startReceiver } from '../../../test/helpers/http-receiver.ts';

const silent = pino({ level: 'silent' });
const T0 = '2026-11-23T09:10:00.000Z';
const SECRET = 'whsec-0123456789abcdef-signing';
const METRICS_TOKEN = 'metrics-forward-token-value';
const CI_TOKEN = 'ci-dispatch-token-value';

let rx: Receiver;
let testDb: TestDatabase;
let database: Database;
let db: Db;
let clock: ManualClock;
let outbound: Outbound;

function configFor(env: Record<string, string> = {}) {
  return loadConfig({
    OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
    // The receiver listens on a random port; outbound ports are limited to the allow-list.
    OBSERVATORY_OUTBOUND_ALLOWED_PORTS: `80,443,${rx.port}`,
    OBSERVATORY_OUTBOUND_TIMEOUT_MS: '1000',
    OBSERVATORY_METRICS_FORWARD_URL: `${rx.origin}/metrics-in`,
    OBSERVATORY_METRICS_FORWARD_TOKEN: METRICS_TOKEN,
    OBSERVATORY_CI_DISPATCH_URL: `${rx.origin}/repos/acme/ops/dispatches`,
    OBSERVATORY_CI_DISPATCH_TOKEN: CI_TOKEN,
    ...env,
  });
}

beforeAll(async () => {
  rx = await startReceiver();
  ({ testDb, database } = await openTestDatabase());
  db = database.db;
});
afterAll(async () => {
  await rx.close();
  await testDb.drop();
});
beforeEach(async () => {
  await db.delete(outboundDeliveries);
  rx.requests.length = 0;
  rx.respond = () => ({ status: 200 });
  clock = new ManualClock(T0);
  outbound = createOutbound({ db, clock, config: configFor(), log: silent });
});

function input(destinations: Destination[], title = 'LIAR burst'): EnqueueInput {
  return {
    source: 'honeypot-rule',
    sourceId: 'rule-1',
    destinations,
    message: { title, text: '5 LIAR events from fp 9 in 10 minutes', severity: 'critical', details: { tenant: 'blog', count: 5 } },
  };
}

const enqueue = (o: Outbound, i: EnqueueInput) => withTransaction(db, (tx) => o.enqueue(tx, i));

async function rowOf(id: string) {
  const [row] = (await db.select().from(outboundDeliveries)).filter((r) => r.id === id);
  if (!row) throw new Error(`no delivery ${id}`);
  return row;
}

describe('enqueue', () => {
  it('inserts one pending row per destination inside the caller transaction and sends nothing', async () => {
    const ids = await enqueue(outbound, input([{ kind: 'slack', url: `${rx.origin}/slack` }, { kind: 'metrics' }]));
    expect(ids).toHaveLength(2);
    expect(rx.requests).toHaveLength(0);
    const row = await rowOf(ids[0] as string);
    expect(row).toMatchObject({ status: 'pending', attempts: 0, source: 'honeypot-rule', sourceId: 'rule-1', lastError: null });
    expect(row.nextAttemptAt.toISOString()).toBe(T0);
    expect(row.payload).toEqual({
      title: 'LIAR burst',
      text: '5 LIAR events from fp 9 in 10 minutes',
      severity: 'critical',
      source: 'honeypot-rule',
      sourceId: 'rule-1',
      firedAt: T0,
      details: { tenant: 'blog', count: 5 },
    });
  });

  it('rolls back with the transaction that fired it', async () => {
    await expect(
      withTransaction(db, async (tx) => {
        await outbound.enqueue(tx, input([{ kind: 'slack', url: `${rx.origin}/slack` }]));
        throw new Error('the firing failed');
      }),
    ).rejects.toThrow('the firing failed');
    expect(await db.select().from(outboundDeliveries)).toHaveLength(0);
  });
});

describe('dispatchDue formats', () => {
  it('sends Slack text with escaping', async () => {
    const [id] = await enqueue(outbound, input([{ kind: 'slack', url: `${rx.origin}/services/T1/B1/abc` }], 'a <b> & c'));
    expect(await outbound.dispatchDue(clock.now())).toEqual({ sent: 1, retried: 0, failed: 0 });
    const [got] = rx.to('/services/T1/B1/abc');
    expect(JSON.parse(got!.body)).toEqual({
      text: `*[CRITICAL] a &lt;b&gt; &amp; c*\n5 LIAR events from fp 9 in 10 minutes\n_honeypot-rule rule-1 · ${T0}_`,
    });
    expect(got!.headers['content-type']).toBe('application/json');
    const row = await rowOf(id!);
    expect(row).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 200, lastError: null });
    expect(row.deliveredAt?.toISOString()).toBe(T0);
  });

  it('signs webhooks with HMAC-SHA256 over "<t>.<body>" under the secret', async () => {
    clock.set('2026-11-23T09:10:07.250Z');
    const [id] = await enqueue(outbound, input([{ kind: 'webhook', url: `${rx.origin}/wh`, secret: SECRET }]));
    await outbound.dispatchDue(clock.now());
    const [got] = rx.to('/wh');
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(got!.headers['x-observatory-signature']));
    expect(match).not.toBeNull();
    const [, t, v1] = match!;
    expect(Number(t)).toBe(Math.floor(Date.parse('2026-11-23T09:10:07Z') / 1000));
    expect(v1).toBe(createHmac('sha256', SECRET).update(`${t}.${got!.body}`).digest('hex'));
    expect(v1).not.toBe(createHmac('sha256', 'some-other-secret-value').update(`${t}.${got!.body}`).digest('hex'));
    expect(got!.headers['x-observatory-delivery']).toBe(id);
    expect(JSON.parse(got!.body)).toEqual({
      schema: 'svc-alert-notification.v1',
      title: 'LIAR burst',
      text: '5 LIAR events from fp 9 in 10 minutes',
      severity: 'critical',
      source: 'honeypot-rule',
      sourceId: 'rule-1',
      firedAt: '2026-11-23T09:10:07.250Z',
      details: { tenant: 'blog', count: 5 },
    });
  });

  it('forwards to the metrics endpoint with its bearer token', async () => {
    await enqueue(outbound, input([{ kind: 'metrics' }]));
    await outbound.dispatchDue(clock.now());
    const [got] = rx.to('/metrics-in');
    expect(got!.headers.authorization).toBe(`Bearer ${METRICS_TOKEN}`);
    expect(JSON.parse(got!.body)).toEqual({
      schema: 'svc-alert-metric.v1',
      metric: 'observatory_alert_fired_total',
      value: 1,
      ts: T0,
      labels: { source: 'honeypot-rule', sourceId: 'rule-1', severity: 'critical' },
      title: 'LIAR burst',
      text: '5 LIAR events from fp 9 in 10 minutes',
      details: { tenant: 'blog', count: 5 },
    });
  });

  it('dispatches a CI workflow with a repository_dispatch body', async () => {
    await enqueue(outbound, input([{ kind: 'ci_dispatch', eventType: 'honeypot-liar' }, { kind: 'ci_dispatch' }]));
    expect(await outbound.dispatchDue(clock.now())).toEqual({ sent: 2, retried: 0, failed: 0 });
    const got = rx.to('/repos/acme/ops/dispatches');
    expect(got).toHaveLength(2);
    for (const r of got) {
      expect(r.headers.authorization).toBe(`Bearer ${CI_TOKEN}`);
      expect(r.headers.accept).toBe('application/vnd.github+json');
    }
    const bodies = got.map((r) => JSON.parse(r.body) as { event_type: string; client_payload: Record<string, unknown> });
    expect(bodies.map((b) => b.event_type).sort()).toEqual(['honeypot-liar', 'observatory-alert']);
    expect(bodies[0]!.client_payload).toMatchObject({ schema: 'svc-alert-notification.v1', title: 'LIAR burst', sourceId: 'rule-1' });
    expect(Object.keys(bodies[0]!.client_payload).length).toBeLessThanOrEqual(10);
  });

  it('gives up at once on an integration that is no longer configured', async () => {
    const unconfigured = createOutbound({ db, clock, config: configFor({ OBSERVATORY_METRICS_FORWARD_URL: '' }), log: silent });
    const [id] = await enqueue(unconfigured, input([{ kind: 'metrics' }]));
    expect(await unconfigured.dispatchDue(clock.now())).toEqual({ sent: 0, retried: 0, failed: 1 });
    expect(await rowOf(id!)).toMatchObject({ status: 'failed', attempts: 1, lastError: 'the metrics forwarder is not configured' });
    expect(rx.requests).toHaveLength(0);
  });
});

describe('retries', () => {
  it('retries after a 500 with backoff and delivers on the next due attempt', async () => {
    rx.respond = (_r, nth) => ({ status: nth === 1 ? 500 : 204 });
    const [id] = await enqueue(outbound, input([{ kind: 'slack', url: `${rx.origin}/flaky` }]));
    expect(await outbound.dispatchDue(clock.now())).toEqual({ sent: 0, retried: 1, failed: 0 });
    let row = await rowOf(id!);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, lastStatus: 500, lastError: 'HTTP 500' });
    expect(row.nextAttemptAt.toISOString()).toBe('2026-11-23T09:10:30.000Z');

    clock.advance(29_999);
    expect(await outbound.dispatchDue(clock.now())).toEqual({ sent: 0, retried: 0, failed: 0 });
    expect(rx.to('/flaky')).toHaveLength(1);

    clock.advance(1);
    expect(await outbound.dispatchDue(clock.now())).toEqual({ sent: 1, retried: 0, failed: 0 });
    row = await rowOf(id!);
    expect(row).toMatchObject({ status: 'delivered', attempts: 2, lastStatus: 204, lastError: null });
    expect(rx.to('/flaky')).toHaveLength(2);
  });

  it('doubles the wait after each failure and marks the delivery failed after the last attempt', async () => {
    rx.respond = () => ({ status: 503 });
    const [id] = await enqueue(outbound, input([{ kind: 'webhook', url: `${rx.origin}/down`, secret: SECRET }]));
    const waits: number[] = [];
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const stats = await outbound.dispatchDue(clock.now());
      const row = await rowOf(id!);
      expect(row.attempts).toBe(attempt);
      if (attempt < MAX_ATTEMPTS) {
        expect(stats).toEqual({ sent: 0, retried: 1, failed: 0 });
        expect(row.status).toBe('pending');
        waits.push(row.nextAttemptAt.getTime() - clock.now().getTime());
        clock.set(row.nextAttemptAt);
      } else {
        expect(stats).toEqual({ sent: 0, retried: 0, failed: 1 });
        expect(row).toMatchObject({ status: 'failed', lastStatus: 503, lastError: 'HTTP 503' });
      }
    }
    expect(waits).toEqual([30, 60, 120, 240, 480, 960, 1920].map((s) => s * 1000));
    expect(waits).toEqual([1, 2, 3, 4, 5, 6, 7].map(retryDelayMs));
    clock.advance(86_400_000);
    expect(await outbound.dispatchDue(clock.now())).toEqual({ sent: 0, retried: 0, failed: 0 });
    expect(rx.to('/down')).toHaveLength(MAX_ATTEMPTS);
  });

  it('treats a redirect as a failure and never follows it', async () => {
    rx.respond = (r) => (r.path === '/moved' ? { status: 301, headers: { location: `${rx.origin}/elsewhere` } } : { status: 200 });
    const [id] = await enqueue(outbound, input([{ kind: 'slack', url: `${rx.origin}/moved` }]));
    expect(await outbound.dispatchDue(clock.now())).toEqual({ sent: 0, retried: 1, failed: 0 });
    expect(await rowOf(id!)).toMatchObject({ lastStatus: 301, lastError: 'HTTP 301 (redirects are not followed)' });
    expect(rx.to('/elsewhere')).toHaveLength(0);
  });

  it('times out a hanging webhook and schedules a retry', async () => {
    rx.respond = () => 'hang';
    const [id] = await enqueue(outbound, input([{ kind: 'slack', url: `${rx.origin}/hang` }]));
    expect(await outbound.dispatchDue(clock.now())).toEqual({ sent: 0, retried: 1, failed: 0 });
    expect(await rowOf(id!)).toMatchObject({ status: 'pending', lastStatus: null, lastError: 'timed out after 1000 ms' });
  });

  it('refuses private destinations at delivery time when they are not allowed, sends nothing and gives up', async () => {
    const strict = createOutbound({ db, clock, config: configFor({ OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '0' }), log: silent });
    const [id] = await enqueue(strict, input([{ kind: 'webhook', url: `${rx.origin}/internal`, secret: SECRET }]));
    expect(await strict.dispatchDue(clock.now())).toEqual({ sent: 0, retried: 0, failed: 1 });
    expect(await rowOf(id!)).toMatchObject({ status: 'failed', attempts: 1, lastError: 'refused: 127.0.0.1 is not a public address (loopback; set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 to allow non-public addresses)' });
    expect(rx.requests).toHaveLength(0);
  });
});

describe('delivery-time policy (rules stored before a change)', () => {
  it('refuses a URL whose port is no longer allowed, sends nothing and gives up at once', async () => {
    const narrowed = createOutbound({ db, clock, config: configFor({ OBSERVATORY_OUTBOUND_ALLOWED_PORTS: '80,443' }), log: silent });
    // enqueue does not validate: this is a rule that was accepted before the allow-list changed.
    const [id] = await enqueue(narrowed, input([{ kind: 'webhook', url: `${rx.origin}/old-rule`, secret: SECRET }, { kind: 'metrics' }]));
    expect(await narrowed.dispatchDue(clock.now())).toEqual({ sent: 0, retried: 0, failed: 2 });
    expect(await rowOf(id!)).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: `refused: port ${rx.port} is not an allowed outbound port (allowed: 80, 443; set OBSERVATORY_OUTBOUND_ALLOWED_PORTS)`,
    });
    // The operator-configured metrics forwarder (same receiver port) is held to the same list.
    expect((await narrowed.listDeliveries({ status: 'failed' })).every((v) => v.lastError?.includes(`port ${rx.port} is not an allowed`))).toBe(true);
    expect(rx.requests).toHaveLength(0);
  });

  it('does not record which internal address a webhook host resolved to', async () => {
    const internal = '10.77.66.55';
    const strict = createOutbound({
      db,
      clock,
      config: configFor({ OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '0' }),
      log: silent,
      resolve: async () => [{ address: internal, family: 4 }],
    });
    const [id] = await enqueue(strict, input([{ kind: 'webhook', url: 'https://vault.corp.example/hook', secret: SECRET }]));
    expect(await strict.dispatchDue(clock.now())).toEqual({ sent: 0, retried: 0, failed: 1 });
    const row = await rowOf(id!);
    expect(row).toMatchObject({ status: 'failed', lastError: 'refused: vault.corp.example resolves to an address outbound calls may not reach (set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 to allow non-public addresses)' });
    expect(JSON.stringify(await strict.listDeliveries({}))).not.toContain(internal);
  });
});

describe('several dispatchers', () => {
  it('never send the same delivery twice', async () => {
    const second = await testDb.open();
    try {
      rx.respond = () => ({ status: 200 });
      const destinations: Destination[] = Array.from({ length: 10 }, () => ({ kind: 'webhook', url: `${rx.origin}/race`, secret: SECRET }));
      const ids = (await Promise.all([1, 2, 3, 4].map(() => enqueue(outbound, input(destinations))))).flat();
      const a = createOutbound({ db, clock, config: configFor(), log: silent, batchSize: 3 });
      const b = createOutbound({ db: second.db, clock, config: configFor(), log: silent, batchSize: 3 });
      const c = createOutbound({ db: second.db, clock, config: configFor(), log: silent, batchSize: 2 });
      const stats = await Promise.all([a.dispatchDue(clock.now()), b.dispatchDue(clock.now()), c.dispatchDue(clock.now())]);
      expect(stats.reduce((n, s) => n + s.sent, 0)).toBe(40);
      const delivered = rx.to('/race').map((r) => String(r.headers['x-observatory-delivery']));
      expect(delivered).toHaveLength(40);
      expect(new Set(delivered)).toEqual(new Set(ids));
      const counts = await outbound.countByStatus();
      expect(counts).toEqual({ pending: 0, delivered: 40, failed: 0 });
    } finally {
      if (second !== database) await second.close();
    }
  });

  it('does not let a dispatcher whose lease ran out overwrite the newer attempt', async () => {
    const [id] = await enqueue(outbound, input([{ kind: 'slack', url: `${rx.origin}/lease` }]));
    rx.respond = (_r, nth) => (nth === 1 ? 'hang' : { status: 200 });
    const slow = outbound.dispatchDue(clock.now());
    while (rx.to('/lease').length === 0) await new Promise((r) => setTimeout(r, 5));
    // The first dispatcher is stuck on attempt 1; an hour later its lease has long run out.
    clock.advance(3_600_000);
    const other = createOutbound({ db, clock, config: configFor(), log: silent });
    expect(await other.dispatchDue(clock.now())).toEqual({ sent: 1, retried: 0, failed: 0 });
    // Attempt 1 now times out; its outcome must not replace the delivered attempt 2.
    expect(await slow).toEqual({ sent: 0, retried: 0, failed: 0 });
    expect(await rowOf(id!)).toMatchObject({ status: 'delivered', attempts: 2, lastError: null, lastStatus: 200 });
  });
});

describe('listing and the job', () => {
  it('lists deliveries with secrets and URL paths hidden', async () => {
    await enqueue(outbound, input([{ kind: 'webhook', url: `${rx.origin}/secret-path?token=abc`, secret: SECRET }, { kind: 'slack', url: 'https://hooks.slack.com/services/T0/B0/XYZ' }]));
    const views = await outbound.listDeliveries({ source: 'honeypot-rule', sourceId: 'rule-1' });
    expect(views.map((v) => v.destination)).toEqual(
      expect.arrayContaining([
        { kind: 'webhook', url: `${rx.origin}/…`, secretSet: true },
        { kind: 'slack', url: 'https://hooks.slack.com/…' },
      ]),
    );
    const text = JSON.stringify(views);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('secret-path');
    expect(text).not.toContain('XYZ');
  });

  it('runs as the outbound-dispatch job every minute through the scheduler', async () => {
    const jobs = outboundJobs(outbound);
    expect(jobs.map((j) => [j.name, j.schedule])).toEqual([['outbound-dispatch', '* * * * *']]);
    rx.respond = (r) => ({ status: r.path === '/bad' ? 500 : 200 });
    await enqueue(outbound, input([{ kind: 'slack', url: `${rx.origin}/ok` }, { kind: 'slack', url: `${rx.origin}/bad` }]));
    const scheduler = createScheduler({ db, clock, log: silent, metrics: createMetrics(() => database.poolStats()), jobs });
    clock.set('2026-11-23T09:11:00.000Z');
    const [run] = await scheduler.tick(clock.now());
    expect(run).toMatchObject({ job: 'outbound-dispatch', outcome: 'ok', stats: { sent: 1, retried: 1, failed: 0 } });
  });
});
