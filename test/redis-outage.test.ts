import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.ts';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { startTcpProxy, type TcpProxy, throughProxy } from './helpers/tcp-proxy.ts';

/**
 * Redis goes away (docs/operations.md, "When PostgreSQL or Redis goes away"; docs/agent-api/README.md,
 * "Rate limits"): two instances count the agent API's limits in Redis, reached through a TCP
 * proxy that the test cuts. While Redis is away every call is still answered at once, each
 * instance enforces the limits from its own memory, and the failed-authentication limit keeps
 * refusing; once Redis is back the instances count together again, without a restart.
 */
const REDIS_URL = process.env.REDIS_URL;
const NO_REDIS_REASON = 'REDIS_URL is not set: the limits count in memory only, so there is no Redis to take away';
if (!REDIS_URL) console.info(`test/redis-outage.test.ts skipped: ${NO_REDIS_REASON}.`);

const ANON_PER_MINUTE = 5;
const KEY_PER_MINUTE = 5;
const AUTH_FAILURES_PER_MINUTE = 5;
/** Far beyond a call answered from the fallback (at worst one command timeout, 1 s, then memory). */
const HANG_MS = 5_000;

describe.skipIf(!REDIS_URL)(`the agent API's limits when Redis goes away${REDIS_URL ? '' : ` (skipped: ${NO_REDIS_REASON})`}`, () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let other: App;

  beforeAll(async () => {
    const redis = new URL(REDIS_URL!);
    proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    t = await startTestApp({
      env: {
        REDIS_URL: throughProxy(REDIS_URL!, proxy),
        OBSERVATORY_AGENT_API_ANON_PER_MINUTE: String(ANON_PER_MINUTE),
        OBSERVATORY_AGENT_API_KEY_PER_MINUTE: String(KEY_PER_MINUTE),
        OBSERVATORY_AUTH_FAILURES_PER_MINUTE: String(AUTH_FAILURES_PER_MINUTE),
      },
    });
    // Same environment and key prefix: a second server behind the same load balancer.
    other = await t.secondInstance();
    // Two apps to start: generous on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    proxy?.restore();
    await t?.close();
    await proxy?.close();
  });

  async function timed(send: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${HANG_MS} ms`)), HANG_MS);
    });
    return Promise.race([send(), hung]).finally(() => clearTimeout(timer));
  }

  const search = (app: App, agent: string, options: { ip?: string; key?: string } = {}) =>
    timed(() =>
      app.server.inject({
        method: 'GET',
        url: `/api/agent?query=passport&agent_name=${encodeURIComponent(agent)}`,
        remoteAddress: options.ip ?? '198.51.100.60',
        headers: options.key ? { 'x-api-key': options.key } : {},
      }),
    );

  const badToken = (app: App, ip: string) =>
    timed(() => app.server.inject({ method: 'GET', url: `${V1}/tokens`, remoteAddress: ip, headers: { authorization: 'Bearer svctok_not-a-real-token-not-a-real-token-xx' } }));

  /** Statuses of `count` calls made one after another. */
  async function statuses(count: number, send: () => Promise<LightMyRequestResponse>): Promise<number[]> {
    const seen: number[] = [];
    for (let i = 0; i < count; i++) seen.push((await send()).statusCode);
    return seen;
  }

  const limited = (allowed: number, refused: number) => [...Array(allowed).fill(200), ...Array(refused).fill(429)];

  /** Both instances spend one window: 3 calls on one, then the rest of the limit on the other. */
  async function expectSharedCounting() {
    const agent = `shared-${randomUUID()}`;
    expect(await statuses(3, () => search(t.app, agent))).toEqual(limited(3, 0));
    expect(await statuses(ANON_PER_MINUTE - 3 + 1, () => search(other, agent))).toEqual(limited(ANON_PER_MINUTE - 3, 1));
    expect((await search(t.app, agent)).statusCode).toBe(429);
  }

  /** Whether each limiter of both instances (agent API, failed authentication) counts in Redis now. */
  const redisStates = () => [t.app, other].flatMap((app) => [app.agentApi.limiter.redisReady(), app.authFailures!.redisReady()]);

  /** Waits until every limiter is in Redis (`true`) or has noticed it is gone; ioredis reconnects in real time, with backoff. */
  async function waitForRedis(ready: boolean) {
    const deadline = Date.now() + 20_000;
    while (!redisStates().every((state) => state === ready)) {
      if (Date.now() > deadline) throw new Error(`the limiters did not ${ready ? 'reconnect to' : 'notice the loss of'} Redis: ${redisStates().join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** While Redis is away: every call answered, each instance enforcing the limits in its own memory. */
  async function expectPerInstanceLimits(mode: string) {
    const agent = `${mode}-${randomUUID()}`;
    expect(await statuses(ANON_PER_MINUTE + 1, () => search(t.app, agent))).toEqual(limited(ANON_PER_MINUTE, 1));
    // The other instance has its own counters while Redis is away: the documented consequence.
    expect(await statuses(ANON_PER_MINUTE + 1, () => search(other, agent))).toEqual(limited(ANON_PER_MINUTE, 1));
    // An API key's window (a new key: the memory windows of earlier tests are still open),
    // likewise enforced from memory.
    const created = await t.call({ method: 'POST', url: `${V1}/agent-api/keys`, payload: { name: `${mode} crawler`, plan: 'pro' } });
    expect(created.statusCode).toBe(200);
    const key = created.json<{ key: string }>().key;
    expect(await statuses(KEY_PER_MINUTE + 1, () => search(t.app, `${agent}-keyed`, { key }))).toEqual(limited(KEY_PER_MINUTE, 1));
    // Failed authentication keeps being counted per address, and the address is refused past it.
    const ip = mode === 'refuse' ? '203.0.113.71' : '203.0.113.72';
    const failures = await statuses(AUTH_FAILURES_PER_MINUTE + 1, () => badToken(t.app, ip));
    expect(failures).toEqual([...Array(AUTH_FAILURES_PER_MINUTE).fill(401), 429]);
  }

  it('counts in Redis, shared by both instances, while Redis answers', async () => {
    expect(t.app.agentApi.limiter.store).toBe('redis');
    expect(redisStates()).toEqual([true, true, true, true]);
    await expectSharedCounting();
  });

  it('refused connections: answers at once from memory, limits still enforced per instance, then counts in Redis again', async () => {
    proxy.cut('refuse');
    await waitForRedis(false);
    await expectPerInstanceLimits('refuse');
    proxy.restore();
    await waitForRedis(true);
    await expectSharedCounting();
  });

  it('a silent Redis (black hole): at most a command timeout, then memory; back to Redis once it answers', async () => {
    proxy.cut('blackhole');
    // The connections stay open, so the first command on each finds out, within the command
    // timeout; the limiter then drops the silent connection, and later calls are answered from
    // memory without waiting.
    for (const app of [t.app, other]) {
      expect((await search(app, `probe-${randomUUID()}`)).statusCode).toBe(200);
      expect((await badToken(app, '203.0.113.99')).statusCode).toBe(401);
    }
    await waitForRedis(false);
    const started = performance.now();
    await expectPerInstanceLimits('blackhole');
    // 4 × 6 calls: none waited out a command timeout (1 s), or this would take far longer.
    expect(performance.now() - started).toBeLessThan(HANG_MS);
    proxy.restore();
    await waitForRedis(true);
    await expectSharedCounting();
  });
});
