import { generateKeyPairSync, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createToolsetClient, type ToolsetClientOptions } from './client.ts';
import { diskQueue } from '@observatory/sender';
import { type SignedEvent, signedBytes, signEvent } from './signing.ts';
import type { DeliveryProblem } from './types.ts';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

interface Sent {
  toolset: string;
  events: SignedEvent[];
}

/**
 * A stand-in for the ingest: answers each request with `answer` (by default every event accepted,
 * an id seen before a duplicate), and keeps what it was sent.
 */
function fakeService(answer?: (body: Sent, call: number) => { status: number; body: unknown } | 'unreachable' | undefined) {
  const requests: Sent[] = [];
  const seen = new Set<string>();
  const fetchFn = (async (input: Request) => {
    const body = (await input.json()) as Sent;
    requests.push(body);
    const custom = answer?.(body, requests.length);
    if (custom === 'unreachable') throw new TypeError('fetch failed');
    if (custom !== undefined) return Response.json(custom.body, { status: custom.status });
    const results = body.events.map((e) => ({ id: e.id, eventId: '00000000-0000-4000-8000-000000000001', compatMode: false, rejectionReason: null }));
    const duplicates = body.events.filter((e) => seen.has(e.id)).length;
    body.events.forEach((e) => seen.add(e.id));
    return Response.json({ schema: 'svc-empire-ingest.v1', accepted: results.length - duplicates, duplicates, rejected: 0, results });
  }) as unknown as typeof fetch;
  return { requests, fetchFn };
}

const client = (fetchFn: typeof fetch, extra: Partial<ToolsetClientOptions> = {}) =>
  createToolsetClient({ url: 'http://service.test', token: 't', toolset: 'crawler-lab', privateKey, batchMaxWaitMs: 5, backoff: { baseMs: 5, maxMs: 20 }, fetch: fetchFn, ...extra });

describe('createToolsetClient', () => {
  it('assigns ids and ts when recording, signs each event, and sends full batches in the order recorded', async () => {
    const service = fakeService();
    let n = 0;
    const c = client(service.fetchFn, { batchMaxEvents: 3, newId: () => `id-${(n += 1)}`, now: () => Date.parse('2026-11-28T12:00:00Z') });
    const ids = Array.from({ length: 7 }, (_, i) => c.record({ eventType: 'crawl.page', payload: { i } }));
    expect(ids).toEqual(['id-1', 'id-2', 'id-3', 'id-4', 'id-5', 'id-6', 'id-7']);
    expect(await c.flush(2000)).toBe(true);
    await c.close();
    expect(service.requests.map((r) => r.events.length)).toEqual([3, 3, 1]);
    const events = service.requests.flatMap((r) => r.events);
    expect(events.map((e) => e.id)).toEqual(ids);
    expect(events[0]).toMatchObject({ ts: '2026-11-28T12:00:00.000Z', payload: { i: 0 } });
    for (const e of events) expect(verify(null, signedBytes('crawler-lab', e), publicKey, Buffer.from(e.signatureB64, 'base64'))).toBe(true);
    expect(service.requests[0]?.toolset).toBe('crawler-lab');
    expect(c.stats()).toMatchObject({ recorded: 7, sent: 7, rejected: 0, retried: 0, pending: 0 });
  });

  it('sends a batch that is not full once its oldest event has waited batchMaxWaitMs', async () => {
    const service = fakeService();
    const c = client(service.fetchFn, { batchMaxWaitMs: 30 });
    c.record({ eventType: 'a' });
    c.record({ eventType: 'b' });
    expect(service.requests).toHaveLength(0);
    await expect.poll(() => service.requests.length, { timeout: 1000, interval: 5 }).toBe(1);
    expect(service.requests[0]?.events.map((e) => e.eventType)).toEqual(['a', 'b']);
    await c.close();
  });

  it('drops and counts only the events the answer rejects', async () => {
    const service = fakeService((body) => ({
      status: 200,
      body: {
        accepted: 2,
        duplicates: 0,
        rejected: 1,
        results: body.events.map((e) => ({ id: e.id, eventId: e.id === 'bad' ? null : '00000000-0000-4000-8000-000000000001', compatMode: false, rejectionReason: e.id === 'bad' ? 'bad-signature' : null })),
      },
    }));
    const problems: DeliveryProblem[] = [];
    const c = client(service.fetchFn, { onProblem: (p) => problems.push(p) });
    for (const id of ['a', 'bad', 'b']) c.record({ id, eventType: 't' });
    expect(await c.flush(2000)).toBe(true);
    await c.close();
    expect(c.stats()).toMatchObject({ sent: 2, rejected: 1, pending: 0 });
    expect(problems).toEqual([expect.objectContaining({ reason: 'bad-signature', eventId: 'bad' })]);
    expect(service.requests).toHaveLength(1);
  });

  it('delivers the events before one a 400 names, drops that one, then sends the rest', async () => {
    const service = fakeService((body) => {
      const index = body.events.findIndex((e) => e.id === 'too-old');
      return index < 0 ? undefined : { status: 400, body: { schema: 'svc-error.v1', reason: 'invalid-body', human: 'too old', field: `body.events[${index}].ts` } };
    });
    const c = client(service.fetchFn);
    for (const id of ['a', 'too-old', 'b']) c.record({ id, eventType: 't' });
    expect(await c.flush(2000)).toBe(true);
    await c.close();
    expect(service.requests.map((r) => r.events.map((e) => e.id))).toEqual([['a', 'too-old', 'b'], ['a'], ['too-old', 'b'], ['b']]);
    expect(c.stats()).toMatchObject({ sent: 2, rejected: 1, lastProblem: { status: 400, reason: 'invalid-body', eventId: 'too-old' } });
  });

  it('retries the same signed bytes with backoff until the service answers, then counts a resend as a duplicate', async () => {
    const service = fakeService((_body, call) => (call === 1 ? 'unreachable' : call === 2 ? { status: 503, body: { reason: 'unavailable' } } : undefined));
    const c = client(service.fetchFn, { random: () => 0 });
    c.record({ id: 'once', eventType: 't' });
    expect(await c.flush(2000)).toBe(true);
    expect(c.stats()).toMatchObject({ sent: 1, retried: 2, duplicates: 0, failing: false });
    expect(new Set(service.requests.map((r) => JSON.stringify(r.events)))).toHaveProperty('size', 1);
    c.record({ id: 'once', eventType: 't' });
    expect(await c.flush(2000)).toBe(true);
    await c.close();
    expect(c.stats()).toMatchObject({ sent: 2, duplicates: 1 });
  });

  it('never throws from record: what cannot be sent is refused and counted', () => {
    const c = client(fakeService().fetchFn);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const bad: unknown[] = [null, 'text', {}, { eventType: '' }, { eventType: 'x'.repeat(129) }, { eventType: 't', payload: [] }, { eventType: 't', payload: { n: 1n } }, { eventType: 't', payload: cyclic }, { eventType: 't', extra: 1 }, { eventType: 't', ts: 'yesterday' }, { eventType: 't', payload: { big: 'x'.repeat(70_000) } }];
    for (const event of bad) expect(c.record(event as never)).toBeNull();
    expect(c.stats()).toMatchObject({ recorded: bad.length, rejected: bad.length, pending: 0 });
    void c.close(0);
  });

  it('drops a spool line it cannot read back, after delivering the events before it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'toolset-spool-'));
    dirs.push(dir);
    const queue = diskQueue({ dir, maxBytes: 1_000_000 });
    const line = (id: string) => JSON.stringify(signEvent('crawler-lab', { id, eventType: 't' }, privateKey));
    for (const text of [line('a'), '{"id":"torn', line('b')]) queue.push(text);
    queue.close();
    const service = fakeService();
    const c = client(service.fetchFn, { spoolDir: dir });
    expect(await c.flush(2000)).toBe(true);
    await c.close();
    expect(service.requests.flatMap((r) => r.events.map((e) => e.id))).toEqual(['a', 'b']);
    expect(c.stats()).toMatchObject({ sent: 2, rejected: 1, lastProblem: { status: null, reason: 'unreadable-spool-line' } });
  });

  it('drops and counts events past the queue bound', async () => {
    const service = fakeService(() => 'unreachable');
    const c = client(service.fetchFn, { maxQueueBytes: 600 });
    const kept = Array.from({ length: 10 }, () => c.record({ eventType: 't' })).filter((id) => id !== null);
    expect(kept.length).toBeGreaterThan(0);
    expect(c.stats()).toMatchObject({ dropped: 10 - kept.length, pending: kept.length });
    await c.close(0);
  });

  it('spools to disk and a new client drains it in order', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'toolset-spool-'));
    dirs.push(dir);
    const down = client(fakeService(() => 'unreachable').fetchFn, { spoolDir: dir });
    for (let i = 0; i < 5; i += 1) down.record({ id: `s-${i}`, eventType: 't' });
    await expect.poll(() => down.stats().retried).toBeGreaterThan(0);
    await down.close(0);
    expect(down.stats()).toMatchObject({ spooled: 5, pending: 5, sent: 0 });
    const service = fakeService();
    const back = client(service.fetchFn, { spoolDir: dir });
    expect(await back.flush(2000)).toBe(true);
    await back.close();
    expect(service.requests.flatMap((r) => r.events.map((e) => e.id))).toEqual(['s-0', 's-1', 's-2', 's-3', 's-4']);
  });
});
