import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy, throughProxy } from '../../test/helpers/tcp-proxy.ts';
import { createRateLimiter, type RateLimiter } from './rate-limit.ts';

// The Redis outage rules of the rate limiter (docs/operations.md, "When PostgreSQL or Redis goes
// away"), at the module's level: Redis reached through a loopback TCP proxy the test cuts. A
// silent Redis is bounded by the command timeout, after which the client drops its connection and
// the fallback answers from memory at once; the client never sends a timed-out call again; once
// Redis answers again the limiter counts there again, without a restart.

const REDIS_URL = process.env.REDIS_URL;
const tiers = [{ name: 'tier', points: 10, durationSec: 60 }];

/** Waits (polling, no fixed sleep) until `check` holds; fails after `withinMs`. */
async function until(check: () => boolean, withinMs: number, what: string): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('redisReady without Redis', () => {
  it('is false for a limiter counting in memory', async () => {
    const limiter = await createRateLimiter({ tiers, redisUrl: null });
    expect(limiter.redisReady()).toBe(false);
    await limiter.close();
  });
});

describe.runIf(REDIS_URL)(`the rate limiter when Redis goes away (REDIS_URL)${REDIS_URL ? '' : ' (skipped: REDIS_URL is not set)'}`, () => {
  let proxy: TcpProxy | undefined;
  let limiter: RateLimiter | undefined;
  let direct: Redis | undefined;
  afterEach(async () => {
    await limiter?.close();
    direct?.disconnect();
    await proxy?.close();
    limiter = undefined;
    direct = undefined;
    proxy = undefined;
  });

  async function setUp(options: { commandTimeoutMs?: number } = {}) {
    const target = new URL(REDIS_URL!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const keyPrefix = `rl-outage-${randomUUID()}`;
    limiter = await createRateLimiter({ tiers, redisUrl: throughProxy(REDIS_URL!, proxy), keyPrefix, connectTimeoutMs: 300, ...options });
    direct = new Redis(REDIS_URL!);
    return { proxy, limiter, direct, redisKey: (key: string) => `${keyPrefix}:tier:${key}` };
  }

  it('is ready once started, counts in Redis, and is no longer ready once closed', async () => {
    const { limiter, direct, redisKey } = await setUp();
    expect(limiter.redisReady()).toBe(true);
    expect(await limiter.consume('tier', 'k')).toMatchObject({ allowed: true, remaining: 9 });
    expect(await direct.get(redisKey('k'))).toBe('1');
    await limiter.close();
    await until(() => !limiter.redisReady(), 10_000, 'the closed limiter is not ready');
  });

  it('answers from memory when Redis goes silent (default command timeout), drops the silent connection, does not send its calls again, and counts in Redis again once it is back', async () => {
    const { proxy, limiter, direct, redisKey } = await setUp();
    await limiter.consume('tier', 'k', 3);
    expect(await direct.get(redisKey('k'))).toBe('3');

    proxy.cut('blackhole');
    // The first call waits out the command timeout, then the in-memory fallback (a fresh count) answers.
    expect(await limiter.consume('tier', 'k')).toMatchObject({ allowed: true, remaining: 9 });
    // The timed-out connection is dropped: the limiter is not ready while it reconnects…
    await until(() => !limiter.redisReady(), 10_000, 'the silent connection is dropped');
    // …and the next call is answered from memory without reaching Redis.
    expect(await limiter.consume('tier', 'k')).toMatchObject({ allowed: true, remaining: 8 });

    proxy.restore();
    await until(() => limiter.redisReady(), 15_000, 'the limiter reconnects to Redis');
    // The timed-out command was already on the wire: the healed link delivers it late, as TCP would
    // (3 + 1). The client does not send it again, and the call answered from memory while the
    // client was reconnecting never reaches Redis.
    expect(await direct.get(redisKey('k'))).toBe('4');
    expect(await limiter.consume('tier', 'k')).toMatchObject({ allowed: true, remaining: 5 });
    expect(await direct.get(redisKey('k'))).toBe('5');
  });

  it('starts without waiting for a silent Redis: the fallback answers until it is back', async () => {
    const target = new URL(REDIS_URL!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    proxy.cut('blackhole');
    const keyPrefix = `rl-outage-${randomUUID()}`;
    // The connection is accepted and never answered: only the connect timeout ends the wait.
    limiter = await createRateLimiter({ tiers, redisUrl: throughProxy(REDIS_URL!, proxy), keyPrefix, connectTimeoutMs: 300, commandTimeoutMs: 300 });
    expect(limiter.redisReady()).toBe(false);
    expect(await limiter.consume('tier', 'k')).toMatchObject({ allowed: true, remaining: 9 });
    direct = new Redis(REDIS_URL!);
    expect(await direct.get(`${keyPrefix}:tier:k`)).toBeNull();
    proxy.restore();
    const ready = limiter;
    await until(() => ready.redisReady(), 15_000, 'the limiter connects to Redis');
    await limiter.consume('tier', 'k');
    expect(await direct.get(`${keyPrefix}:tier:k`)).toBe('1');
  });

  it('keeps its connection when Redis answers a call with an error (only a timeout drops it)', async () => {
    const { limiter, direct, redisKey } = await setUp({ commandTimeoutMs: 300 });
    // A key of the wrong type: Redis answers the limiter's script with an error reply at once.
    await direct.hset(redisKey('k'), 'not', 'a counter');
    expect(await limiter.consume('tier', 'k')).toMatchObject({ allowed: true, remaining: 9 });
    // Still the same connection, ready throughout (a dropped one is not ready while it reconnects).
    const watchUntil = Date.now() + 300;
    while (Date.now() < watchUntil) {
      expect(limiter.redisReady()).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await limiter.consume('tier', 'other');
    expect(await direct.get(redisKey('other'))).toBe('1');
  });

  it('answers from memory at once while Redis refuses connections, and goes back to Redis when it accepts them', async () => {
    const { proxy, limiter, direct, redisKey } = await setUp({ commandTimeoutMs: 300 });
    proxy.cut('refuse');
    await until(() => !limiter.redisReady(), 10_000, 'the limiter sees Redis gone');
    expect(await limiter.consume('tier', 'k', 2)).toMatchObject({ allowed: true, remaining: 8 });
    expect(await direct.get(redisKey('k'))).toBeNull();
    proxy.restore();
    await until(() => limiter.redisReady(), 15_000, 'the limiter reconnects to Redis');
    expect(await limiter.consume('tier', 'k')).toMatchObject({ allowed: true, remaining: 9 });
    expect(await direct.get(redisKey('k'))).toBe('1');
  });
});
