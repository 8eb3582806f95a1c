import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSender, type IngestAnswer } from '@observatory/sender';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { GPTBOT_UA } from './helpers/honeypot.ts';
import { startTcpProxy } from './helpers/tcp-proxy.ts';

/**
 * The sender package (packages/sender) against the real service on a real port: its signature,
 * batches and ids are what the ingest takes, the answers it hands back carry the verdicts, and
 * events recorded while the service is unreachable arrive once when it is back.
 */

let t: TestApp;
let base: string;
let secret: string;
const dirs: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
  base = await t.app.server.listen({ port: 0, host: '127.0.0.1' });
  const created = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug: 'sender-site', name: 'Sender site' } });
  expect(created.statusCode).toBe(200);
  secret = created.json().signingSecret;
}, 180_000);

afterAll(async () => {
  await t?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function storedSenderIds(): Promise<string[]> {
  const recent = await t.call({ method: 'GET', url: `${V1}/honeypot/recent?tenant=sender-site&limit=100` });
  expect(recent.statusCode).toBe(200);
  return (recent.json().events as Array<{ senderId: string }>).map((e) => e.senderId).sort();
}

describe('the sender against the service', () => {
  it('delivers signed batches whose answers carry the verdicts: a GPTBot from a published range is verified, one from elsewhere lies', async () => {
    const answers: IngestAnswer[] = [];
    const sender = createSender({ url: base, tenant: 'sender-site', secret, batchMaxWaitMs: 10, onAnswers: (got) => answers.push(...got) });
    sender.record({ id: 'gptbot-real', path: '/honeypot/topics/a', ip: '52.230.152.10', ua: GPTBOT_UA });
    sender.record({ id: 'gptbot-fake', path: '/honeypot/topics/b', ip: '198.51.100.23', ua: GPTBOT_UA });
    sender.record({ id: 'browser', path: '/q/c', ip: '198.51.100.24', ua: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' });
    expect(await sender.flush(10_000)).toBe(true);
    await sender.close();
    expect(answers.map((a) => [a.id, a.uaClass])).toEqual([
      ['gptbot-real', 'KNOWN_LLM_AGENT'],
      ['gptbot-fake', 'LIAR'],
      ['browser', expect.not.stringMatching(/^(KNOWN_LLM_AGENT|LIAR)$/)],
    ]);
    expect(sender.stats()).toMatchObject({ sent: 3, duplicates: 0, rejected: 0, retried: 0 });
    expect(await storedSenderIds()).toEqual(['browser', 'gptbot-fake', 'gptbot-real']);
  });

  it('drops the one event the service refuses and delivers the rest', async () => {
    const sender = createSender({ url: base, tenant: 'sender-site', secret, batchMaxWaitMs: 10 });
    sender.record({ id: 'valid-1', path: '/q/1', ip: '198.51.100.30' });
    sender.record({ id: 'invalid', path: '/q/2', ip: 'not-an-ip' });
    sender.record({ id: 'valid-2', path: '/q/3', ip: '198.51.100.31' });
    expect(await sender.flush(10_000)).toBe(true);
    await sender.close();
    expect(sender.stats()).toMatchObject({ sent: 2, rejected: 1, lastProblem: { status: 400, reason: 'invalid-body' } });
    expect(await storedSenderIds()).toEqual(expect.arrayContaining(['valid-1', 'valid-2']));
    expect(await storedSenderIds()).not.toContain('invalid');
  });

  it('spools while the service is unreachable and delivers every event once when it is back, also from a new process', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sender-e2e-'));
    dirs.push(dir);
    // A port nothing listens on stands in for the service being down.
    const down = createSender({ url: 'http://127.0.0.1:9', tenant: 'sender-site', secret, spoolDir: dir, batchMaxWaitMs: 5, backoff: { baseMs: 10, maxMs: 50 } });
    for (let i = 0; i < 120; i += 1) down.record({ id: `spooled-${i}`, path: `/agents/${i}`, ip: '198.51.100.40' });
    await expect.poll(() => down.stats().retried).toBeGreaterThan(1);
    await down.close(0);
    expect(down.stats()).toMatchObject({ spooled: 120, pending: 120, sent: 0 });

    const back = createSender({ url: base, tenant: 'sender-site', secret, spoolDir: dir, batchMaxWaitMs: 5 });
    expect(await back.flush(20_000)).toBe(true);
    await back.close();
    expect(back.stats()).toMatchObject({ sent: 120, duplicates: 0, pending: 0 });
    const count = await t.call({ method: 'GET', url: `${V1}/honeypot/recent?tenant=sender-site&limit=100` });
    expect((count.json().events as Array<{ senderId: string }>).filter((e) => e.senderId.startsWith('spooled-')).length).toBe(100);
  });
  it('keeps recording through 30 seconds of the service down, then delivers every event once and in order', async () => {
    const port = Number(new URL(base).port);
    const proxy = await startTcpProxy({ host: '127.0.0.1', port });
    const dir = mkdtempSync(path.join(tmpdir(), 'sender-outage-'));
    dirs.push(dir);
    const sender = createSender({
      url: `http://${proxy.host}:${proxy.port}`,
      tenant: 'sender-site',
      secret,
      spoolDir: dir,
      batchMaxWaitMs: 50,
      requestTimeoutMs: 1000,
      backoff: { baseMs: 200, maxMs: 2000 },
    });
    const ids = Array.from({ length: 90 }, (_, i) => `outage-${String(i).padStart(2, '0')}`);
    const record = (id: string) => sender.record({ id, path: `/q/${id}`, ip: '198.51.100.41', ts: new Date().toISOString() });
    try {
      for (const id of ids.slice(0, 10)) record(id);
      expect(await sender.flush(10_000)).toBe(true);
      // Down for 30 s: refusing connections for the first half, then a partition where requests
      // go out and no answer comes back. One event every 375 ms meanwhile.
      proxy.cut('refuse');
      const downFrom = Date.now();
      for (const [i, id] of ids.slice(10).entries()) {
        if (i === 40) proxy.cut('blackhole');
        record(id);
        await new Promise((resolve) => setTimeout(resolve, 375));
      }
      expect(Date.now() - downFrom).toBeGreaterThanOrEqual(30_000);
      expect(sender.stats()).toMatchObject({ pending: 80, dropped: 0, rejected: 0, failing: true });
      expect(sender.stats().retried).toBeGreaterThan(5);
      proxy.restore();
      expect(await sender.flush(20_000)).toBe(true);
    } finally {
      await sender.close();
      await proxy.close();
    }
    expect(sender.stats()).toMatchObject({ recorded: 90, sent: 90, spooled: 90, pending: 0, dropped: 0 });
    const recent = await t.call({ method: 'GET', url: `${V1}/honeypot/recent?tenant=sender-site&limit=100` });
    const stored = (recent.json().events as Array<{ senderId: string; receivedAt: string }>).filter((e) => e.senderId.startsWith('outage-'));
    // Once each, whatever the refused and timed-out attempts left half done.
    expect(stored.map((e) => e.senderId).sort()).toEqual(ids);
    // In order: no event was stored before one recorded earlier.
    const receivedAt = new Map(stored.map((e) => [e.senderId, Date.parse(e.receivedAt)]));
    for (let i = 1; i < ids.length; i += 1) expect(receivedAt.get(ids[i]!)!).toBeGreaterThanOrEqual(receivedAt.get(ids[i - 1]!)!);
  }, 90_000);
});
