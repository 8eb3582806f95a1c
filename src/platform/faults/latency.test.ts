import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { createLatencyFaults, LATENCY_PREFIX_MAX_LENGTH } from './latency.ts';

const INJECTED_MS = 300;
// A request nothing delays answers well inside this on a warm in-process server.
const FAST_MS = 250;

describe('latency faults', () => {
  const faults = createLatencyFaults(() => ['searchTopics', 'getHealth']);

  it('takes a registered endpoint id or a path prefix starting with / as a target', () => {
    expect(faults.isTarget('searchTopics')).toBe(true);
    expect(faults.isTarget('/v1/agent-api/')).toBe(true);
    expect(faults.isTarget('/')).toBe(true);
    expect(faults.isTarget(`/${'a'.repeat(LATENCY_PREFIX_MAX_LENGTH - 1)}`)).toBe(true);
    expect(faults.isTarget(`/${'a'.repeat(LATENCY_PREFIX_MAX_LENGTH)}`)).toBe(false);
    expect(faults.isTarget('noSuchEndpoint')).toBe(false);
    expect(faults.isTarget('v1/agent-api/')).toBe(false);
    expect(faults.isTarget('')).toBe(false);
    expect(faults.isTarget('/api/agent?query=x')).toBe(false);
    expect(faults.isTarget('/api agent')).toBe(false);
    expect(() => faults.add('run-x', 'noSuchEndpoint', 100)).toThrow(/neither a registered endpoint id/);
    expect(() => faults.add('run-x', '/api/', -1)).toThrow();
  });

  it('answers the largest matching delay, matching the id exactly and the path (without its query) by prefix', () => {
    faults.add('run-a', 'searchTopics', 100);
    faults.add('run-b', '/api/', 40);
    expect(faults.delayFor({ endpointId: 'searchTopics', url: '/api/agent?query=dns' })).toBe(100);
    expect(faults.delayFor({ endpointId: 'listTopics', url: '/api/topics' })).toBe(40);
    expect(faults.delayFor({ endpointId: 'getHealth', url: '/healthz' })).toBe(0);
    expect(faults.delayFor({ endpointId: null, url: '/feed.xml?/api/' })).toBe(0);
    faults.add('run-b', '/api/', 500);
    expect(faults.delayFor({ endpointId: 'searchTopics', url: '/api/agent' })).toBe(500);
    faults.remove('run-b');
    expect(faults.delayFor({ endpointId: 'listTopics', url: '/api/topics' })).toBe(0);
    faults.remove('run-a');
    faults.remove('never-held');
  });

  it('looks at nothing of the request while no injection is held', () => {
    const untouchable = {
      get endpointId(): string {
        throw new Error('read the endpoint id');
      },
      get url(): string {
        throw new Error('read the url');
      },
    };
    expect(faults.delayFor(untouchable)).toBe(0);
  });

  it('reads the endpoint ids when a target is checked, not when it is built', () => {
    let ids: string[] = [];
    const late = createLatencyFaults(() => ids);
    expect(late.isTarget('getRobotsTxt')).toBe(false);
    ids = ['getRobotsTxt'];
    expect(late.isTarget('getRobotsTxt')).toBe(true);
  });
});

describe('latency injected into the HTTP server', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t?.close());

  async function timed(options: Parameters<TestApp['call']>[0]): Promise<{ status: number; ms: number }> {
    const began = performance.now();
    const res = await t.call(options);
    return { status: res.statusCode, ms: performance.now() - began };
  }

  it('delays the requests of a targeted endpoint id, and only those, until removed', async () => {
    const latency = t.app.faults.latency;
    await timed({ method: 'GET', url: '/robots.txt', token: null });
    await timed({ method: 'GET', url: '/healthz', token: null });

    latency.add('run-id', 'getRobotsTxt', INJECTED_MS);
    const slow = await timed({ method: 'GET', url: '/robots.txt', token: null });
    expect(slow.status).toBe(200);
    expect(slow.ms).toBeGreaterThanOrEqual(INJECTED_MS);
    const other = await timed({ method: 'GET', url: '/healthz', token: null });
    expect(other.status).toBe(200);
    expect(other.ms).toBeLessThan(FAST_MS);

    latency.remove('run-id');
    const after = await timed({ method: 'GET', url: '/robots.txt', token: null });
    expect(after.ms).toBeLessThan(FAST_MS);
  });

  it('delays every route under a targeted path prefix, health checks included', async () => {
    const latency = t.app.faults.latency;
    latency.add('run-prefix', '/healthz', INJECTED_MS);
    const health = await timed({ method: 'GET', url: '/healthz', token: null });
    expect(health.status).toBe(200);
    expect(health.ms).toBeGreaterThanOrEqual(INJECTED_MS);
    const elsewhere = await timed({ method: 'GET', url: '/readyz', token: null });
    expect(elsewhere.ms).toBeLessThan(FAST_MS);
    latency.remove('run-prefix');
    expect((await timed({ method: 'GET', url: '/healthz', token: null })).ms).toBeLessThan(FAST_MS);
  });

  it('delays a refusal as much as an answer: the delay comes before authentication', async () => {
    const latency = t.app.faults.latency;
    latency.add('run-auth', `${V1}/honeypot/ops/`, INJECTED_MS);
    const refused = await timed({ method: 'GET', url: `${V1}/honeypot/ops/cron-health?limit=1`, token: null });
    expect(refused.status).toBe(401);
    expect(refused.ms).toBeGreaterThanOrEqual(INJECTED_MS);
    const answered = await timed({ method: 'GET', url: `${V1}/honeypot/ops/cron-health?limit=1` });
    expect(answered.status).toBe(200);
    expect(answered.ms).toBeGreaterThanOrEqual(INJECTED_MS);
    latency.remove('run-auth');
    expect((await timed({ method: 'GET', url: `${V1}/honeypot/ops/cron-health?limit=1`, token: null })).ms).toBeLessThan(FAST_MS);
  });

  it('knows the registry\'s endpoint ids once the app is built', () => {
    expect(t.app.faults.latency.isTarget('searchTopics')).toBe(true);
    expect(t.app.faults.latency.isTarget('getCronHealth')).toBe(true);
    expect(t.app.faults.latency.isTarget('noSuchEndpoint')).toBe(false);
  });
});
