import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../platform/clock.ts';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';

const METRICS_TOKEN = 'metrics-scrape-token-0123456789abcdef';
const SECRET_URL = 'https://hooks.chat.example/services/T000/B000/very-secret-path';
let t: TestApp;
const clock = new ManualClock('2026-11-23T09:10:00.000Z');
beforeAll(async () => {
  t = await startTestApp({
    clock,
    env: {
      OBSERVATORY_METRICS_TOKEN: METRICS_TOKEN,
      OBSERVATORY_CHAT_WEBHOOK_URL: SECRET_URL,
      OBSERVATORY_CI_DISPATCH_URL: 'https://ci.example/dispatch',
      OBSERVATORY_CI_DISPATCH_TOKEN: 'ci-secret-token-value',
    },
  });
});
afterAll(() => t.close());

describe('POST /ops/jobs/{job}/run and GET /honeypot/ops/cron-health', () => {
  it('runs a job on demand, records it, audits it and shows it in cron-health', async () => {
    const expired = await t.app.identity.bootstrap(null);
    expect(expired.firstToken).toBeNull();
    const res = await t.call({ method: 'POST', url: `${V1}/ops/jobs/session-sweep/run` });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-ops-job-run.v1', job: 'session-sweep', run: { outcome: 'ok', trigger: 'manual', errorText: null } });
    expect(body.run.stats).toEqual({ sessionsDeleted: 0, challengesDeleted: 0 });
    expect(typeof body.run.durationMs).toBe('number');

    const health = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/cron-health?limit=5` })).json();
    expect(health.schema).toBe('svc-observatory-ops-cron-health.v1');
    const sweep = health.latestPerJob.find((j: { job: string }) => j.job === 'session-sweep');
    expect(sweep).toMatchObject({ schedule: '17 * * * *', nextRunAt: '2026-11-23T09:17:00.000Z', lastRun: { id: body.run.id, outcome: 'ok' } });
    expect(health.recent[0].id).toBe(body.run.id);

    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=job.run` })).json().rows;
    expect(audit[0]).toMatchObject({ target: 'job:session-sweep', actor: 'admin', after: { runId: body.run.id, outcome: 'ok' } });
  });

  it('sweeps sessions that expired', async () => {
    const admin = await t.app.identity.findUserByUsername('admin');
    await t.app.identity.openSession(t.app.database.db, admin!.id, null);
    clock.advance(13 * 3_600_000);
    const run = (await t.call({ method: 'POST', url: `${V1}/ops/jobs/session-sweep/run` })).json().run;
    expect(run.stats.sessionsDeleted).toBe(1);
  });

  it('answers 404 for an unknown job and 400 for a malformed name', async () => {
    const unknown = await t.call({ method: 'POST', url: `${V1}/ops/jobs/no-such-job/run` });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
    const bad = await t.call({ method: 'POST', url: `${V1}/ops/jobs/Bad_Name!/run` });
    expect(bad.statusCode).toBe(400);
  });

  it('validates the recent-run count', async () => {
    expect((await t.call({ method: 'GET', url: `${V1}/honeypot/ops/cron-health?limit=500` })).statusCode).toBe(400);
  });
});

describe('GET /integrations/status', () => {
  it('reports the four integrations without any secret value', async () => {
    const res = await t.call({ method: 'GET', url: `${V1}/integrations/status` });
    expect(res.statusCode).toBe(200);
    const byId = Object.fromEntries(res.json().integrations.map((i: { id: string; configured: boolean }) => [i.id, i.configured]));
    expect(byId).toEqual({ chat: true, metrics: false, ci_dispatch: true, csv_since: false });
    expect(res.body).not.toContain('very-secret-path');
    expect(res.body).not.toContain('hooks.chat.example');
    expect(res.body).not.toContain('ci-secret-token-value');
  });
});

describe('GET /metrics', () => {
  it('serves Prometheus text to the scrape token, per endpoint id and status', async () => {
    await t.call({ method: 'GET', url: `${V1}/tokens` });
    await t.call({ method: 'GET', url: `${V1}/tokens`, token: null });
    const res = await t.call({ method: 'GET', url: '/metrics', token: METRICS_TOKEN });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toMatch(/observatory_http_requests_total\{endpoint="listTokens",method="GET",status="200"\} [1-9]/);
    expect(res.body).toMatch(/observatory_http_requests_total\{endpoint="listTokens",method="GET",status="401"\} [1-9]/);
    expect(res.body).toContain('observatory_http_request_duration_seconds_bucket{le="0.001",endpoint="listTokens",status="200"}');
    expect(res.body).toContain('observatory_db_pool_connections');
    expect(res.body).toContain('observatory_job_runs_total{job="session-sweep",outcome="ok"}');
  });

  it('accepts an API token with read:dashboard and refuses others', async () => {
    expect((await t.call({ method: 'GET', url: '/metrics', token: await t.tokenWith(['read:dashboard']) })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: '/metrics', token: await t.tokenWith(['read:events']) })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: '/metrics', token: null })).statusCode).toBe(401);
    expect((await t.call({ method: 'GET', url: '/metrics', token: `${METRICS_TOKEN}x` })).statusCode).toBe(401);
  });
});
