import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSender, INGEST_PATH, type Sender, type SenderOptions } from './sender.ts';
import type { HoneypotEvent } from './types.ts';

const SECRET = 'whsec_test';

/**
 * A stand-in for the service's ingest that checks what a sender sends (path, headers, the
 * signature over the raw body, the body's shape) and answers as the service does, or as told.
 * The sender's agreement with the real service is tested end to end in test/sender.e2e.test.ts.
 */
interface FakeIngest {
  url: string;
  bodies: Array<{ events: HoneypotEvent[] }>;
  stored: Map<string, HoneypotEvent>;
  /** Answers to give before behaving: a status, or 'hang' (never answer), or 'close' (drop the socket). */
  script: Array<number | 'hang' | 'close' | { status: number; body: unknown }>;
  /** When each stored body arrived (ms since the epoch), in order. */
  arrivals: number[];
  /** How long to wait before answering a request that is stored. */
  answerDelayMs: number;
  close(): Promise<void>;
}

async function fakeIngest(): Promise<FakeIngest> {
  const state = { bodies: [] as FakeIngest['bodies'], stored: new Map<string, HoneypotEvent>(), script: [] as FakeIngest['script'], arrivals: [] as number[], answerDelayMs: 0 };
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const next = state.script.shift();
    if (next === 'hang') return;
    if (next === 'close') return req.socket.destroy();
    const reply = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (typeof next === 'number') return reply(next, { schema: 'svc-error.v1', reason: 'unavailable', message: 'scripted' });
    if (next !== undefined) return reply(next.status, next.body);
    const signature = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['x-observatory-signature']));
    const expected = signature && createHmac('sha256', SECRET).update(`${signature[1]}.${raw}`).digest('hex');
    if (req.url !== INGEST_PATH || req.headers['x-observatory-tenant'] !== 'site-a' || !signature || signature[2] !== expected) {
      return reply(401, { schema: 'svc-error.v1', reason: 'bad-signature', message: 'bad signature' });
    }
    const body = JSON.parse(raw) as { events: HoneypotEvent[] };
    const invalid = body.events.findIndex((event) => event.ip === 'not-an-ip');
    if (invalid >= 0) {
      const field = `body.events[${invalid}].ip`;
      return reply(400, { schema: 'svc-error.v1', reason: 'invalid-body', message: `${field} must be an IP address`, details: { field } });
    }
    state.bodies.push(body);
    state.arrivals.push(Date.now());
    if (state.answerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.answerDelayMs));
    let duplicates = 0;
    const events = body.events.map((event) => {
      if (state.stored.has(event.id as string)) duplicates += 1;
      else state.stored.set(event.id as string, event);
      const liar = event.ua === 'liar';
      return { id: event.id, eventId: `ev-${event.id}`, uaClass: liar ? 'LIAR' : 'UNKNOWN', fingerprintId: `fp-${event.ip}`, tarpit: { active: liar, delayMs: liar ? 8000 : 0 } };
    });
    reply(200, { schema: 'svc-observatory-ingest.v1', accepted: events.length - duplicates, duplicates, events });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ...state,
    get script() {
      return state.script;
    },
    get answerDelayMs() {
      return state.answerDelayMs;
    },
    set answerDelayMs(value) {
      state.answerDelayMs = value;
    },
    set script(value) {
      state.script = value;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempSpool(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sender-spool-'));
  cleanups.unshift(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function setUp(options: Partial<SenderOptions> = {}) {
  const ingest = await fakeIngest();
  cleanups.push(() => ingest.close());
  const sender = createSender({ url: ingest.url, tenant: 'site-a', secret: SECRET, batchMaxWaitMs: 20, backoff: { baseMs: 10, maxMs: 40 }, ...options });
  cleanups.push(() => sender.close(1000));
  return { ingest, sender };
}

const event = (n: number, extra: Partial<HoneypotEvent> = {}): HoneypotEvent => ({ id: `e-${n}`, path: `/q/${n}`, ip: '192.0.2.7', ...extra });
const ids = (bodies: FakeIngest['bodies']) => bodies.flatMap((b) => b.events.map((e) => e.id));

describe('sender', () => {
  it('signs and delivers what it records, in order, and reports the answers', async () => {
    const answers: string[] = [];
    const { ingest, sender } = await setUp({ onAnswers: (got) => answers.push(...got.map((a) => `${a.id}:${a.uaClass}`)) });
    for (let i = 0; i < 5; i += 1) expect(sender.record(event(i))).toBe(`e-${i}`);
    expect(await sender.flush(2000)).toBe(true);
    expect(ids(ingest.bodies)).toEqual(['e-0', 'e-1', 'e-2', 'e-3', 'e-4']);
    expect(answers).toEqual(['e-0:UNKNOWN', 'e-1:UNKNOWN', 'e-2:UNKNOWN', 'e-3:UNKNOWN', 'e-4:UNKNOWN']);
    expect(sender.stats()).toMatchObject({ recorded: 5, sent: 5, duplicates: 0, retried: 0, dropped: 0, rejected: 0, pending: 0, pendingBytes: 0, lastProblem: null });
  });

  it('gives an event without an id one, so that sending it again cannot store it twice', async () => {
    const { ingest, sender } = await setUp({ newId: () => 'made-up' });
    expect(sender.record({ path: '/', ip: '192.0.2.1' })).toBe('made-up');
    await sender.flush(2000);
    expect(ingest.bodies[0]?.events[0]).toEqual({ path: '/', ip: '192.0.2.1', id: 'made-up' });
  });

  it('waits up to batchMaxWaitMs to fill a batch, and sends a full batch at once', async () => {
    const { ingest, sender } = await setUp({ batchMaxWaitMs: 60_000, batchMaxEvents: 3 });
    sender.record(event(1));
    sender.record(event(2));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ingest.bodies).toHaveLength(0);
    sender.record(event(3));
    await expect.poll(() => ingest.bodies.length).toBe(1);
    expect(ids(ingest.bodies)).toEqual(['e-1', 'e-2', 'e-3']);
  });

  it('never sends more than 500 events or 1 MiB in one request', async () => {
    const { ingest, sender } = await setUp({ batchMaxWaitMs: 0 });
    const filler = 'f'.repeat(4000);
    for (let i = 0; i < 700; i += 1) sender.record(event(i, { referer: filler }));
    expect(await sender.flush(10_000)).toBe(true);
    expect(ingest.bodies.length).toBeGreaterThan(2);
    for (const body of ingest.bodies) {
      expect(body.events.length).toBeLessThanOrEqual(500);
      expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThanOrEqual(1024 * 1024);
    }
    expect(ids(ingest.bodies)).toEqual(Array.from({ length: 700 }, (_, i) => `e-${i}`));
  });

  it('retries a failed request with backoff until it is delivered, keeping the order', async () => {
    const problems: Array<number | null> = [];
    const { ingest, sender } = await setUp({ onProblem: (p) => problems.push(p.status) });
    ingest.script = [503, 'close', 502];
    sender.record(event(1));
    sender.record(event(2));
    await expect.poll(() => ingest.bodies.length, { timeout: 5000 }).toBe(1);
    sender.record(event(3));
    expect(await sender.flush(2000)).toBe(true);
    expect(ids(ingest.bodies)).toEqual(['e-1', 'e-2', 'e-3']);
    expect(problems).toEqual([503, null, 502]);
    expect(sender.stats()).toMatchObject({ sent: 3, retried: 3, failing: false, lastProblem: { status: 502, reason: 'unavailable' } });
  });

  it('abandons a request without an answer after requestTimeoutMs and tries it again', async () => {
    const { ingest, sender } = await setUp({ requestTimeoutMs: 200 });
    ingest.script = ['hang'];
    sender.record(event(1));
    expect(await sender.flush(5000)).toBe(true);
    expect(ids(ingest.bodies)).toEqual(['e-1']);
    expect(sender.stats().retried).toBe(1);
    expect(sender.stats().lastProblem?.message).toMatch(/no answer/);
  });

  it('keeps retrying a refused credential instead of dropping events (a rotated secret is fixed by an operator)', async () => {
    const { ingest, sender } = await setUp({ secret: 'wrong' });
    sender.record(event(1));
    await expect.poll(() => sender.stats().retried, { timeout: 5000 }).toBeGreaterThanOrEqual(3);
    expect(sender.stats()).toMatchObject({ sent: 0, pending: 1, dropped: 0, failing: true, lastProblem: { status: 401, reason: 'bad-signature' } });
    expect(ingest.bodies).toHaveLength(0);
  });

  it('drops only the event the service names as invalid, delivering the others in order', async () => {
    const { ingest, sender } = await setUp({ batchMaxWaitMs: 50 });
    for (let i = 0; i < 5; i += 1) sender.record(event(i, i === 2 ? { ip: 'not-an-ip' } : {}));
    expect(await sender.flush(3000)).toBe(true);
    // [e-0…e-4] refused at index 2 → [e-0, e-1] delivered → [e-2…] refused at 0: e-2 dropped.
    expect(ingest.bodies.map((b) => b.events.map((e) => e.id))).toEqual([['e-0', 'e-1'], ['e-3', 'e-4']]);
    expect(sender.stats()).toMatchObject({ rejected: 1, sent: 4, pending: 0, retried: 0, lastProblem: { status: 400, reason: 'invalid-body' } });
  });

  it('halves a batch the service finds too large, and drops an event that is too large alone', async () => {
    const { ingest, sender } = await setUp({ batchMaxWaitMs: 50 });
    const tooLarge = { status: 413, body: { schema: 'svc-error.v1', reason: 'payload-too-large', message: 'too large' } };
    ingest.script = [tooLarge, tooLarge, tooLarge];
    for (let i = 0; i < 4; i += 1) sender.record(event(i));
    expect(await sender.flush(3000)).toBe(true);
    // 4 → refused; 2 → refused; 1 (e-0) → refused alone: dropped; then e-1 alone, e-2..e-3.
    expect(sender.stats()).toMatchObject({ rejected: 1, sent: 3 });
    expect(ids(ingest.bodies)).toEqual(['e-1', 'e-2', 'e-3']);
  });

  it('refuses at record time what the service could never take, without throwing', async () => {
    const { sender } = await setUp();
    expect(sender.record({ ip: '192.0.2.1' } as HoneypotEvent)).toBeNull();
    expect(sender.record(null as unknown as HoneypotEvent)).toBeNull();
    expect(sender.record(event(1, { referer: 'x'.repeat(1024 * 1024) }))).toBeNull();
    expect(sender.stats()).toMatchObject({ recorded: 3, rejected: 3, pending: 0 });
  });

  it('drops and counts what passes the queue bound while the service is down', async () => {
    const { ingest, sender } = await setUp({ maxQueueBytes: 200 });
    ingest.script = Array(100).fill(503);
    let kept = 0;
    for (let i = 0; i < 10; i += 1) if (sender.record(event(i)) !== null) kept += 1;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(10);
    expect(sender.stats()).toMatchObject({ dropped: 10 - kept, pending: kept });
  });

  it('spools to disk while the service is down, and a new process drains the spool once, in order', async () => {
    const dir = tempSpool();
    const ingest = await fakeIngest();
    cleanups.push(() => ingest.close());
    ingest.script = Array(1000).fill(503);
    const first = createSender({ url: ingest.url, tenant: 'site-a', secret: SECRET, spoolDir: dir, batchMaxWaitMs: 5, backoff: { baseMs: 10, maxMs: 20 } });
    for (let i = 0; i < 50; i += 1) first.record(event(i));
    expect(await first.flush(200)).toBe(false);
    expect(first.stats()).toMatchObject({ spooled: 50, pending: 50, sent: 0 });
    await first.close(0);

    // The service comes back as a new instance. (A request the first sender had in flight when it
    // closed may still reach the old one after close returns; that one keeps answering 503, so
    // it cannot be mistaken for a second delivery here.)
    const restarted = await fakeIngest();
    cleanups.push(() => restarted.close());
    const second = createSender({ url: restarted.url, tenant: 'site-a', secret: SECRET, spoolDir: dir, batchMaxWaitMs: 5 });
    cleanups.push(() => second.close(1000));
    expect(second.stats().pending).toBe(50);
    // Without a new event or a flush: what the spool held goes out on its own.
    await expect.poll(() => second.stats().pending, { timeout: 5000 }).toBe(0);
    expect(ids(restarted.bodies)).toEqual(Array.from({ length: 50 }, (_, i) => `e-${i}`));
    expect(second.stats()).toMatchObject({ sent: 50, duplicates: 0, pending: 0 });
  });

  it('sends again what was sent but not acknowledged, which the service counts as duplicates', async () => {
    const dir = tempSpool();
    const { ingest } = await setUp();
    // The service stored the events, but the answer was lost (the sender never saw it).
    ingest.stored.set('e-1', event(1));
    const sender = createSender({ url: ingest.url, tenant: 'site-a', secret: SECRET, spoolDir: dir, batchMaxWaitMs: 5 });
    cleanups.push(() => sender.close(1000));
    sender.record(event(1));
    sender.record(event(2));
    await sender.flush(2000);
    expect(sender.stats()).toMatchObject({ sent: 2, duplicates: 1 });
  });

  it('keeps a faulty hook from stopping delivery', async () => {
    const { ingest, sender } = await setUp({
      onAnswers: () => {
        throw new Error('site bug');
      },
    });
    sender.record(event(1));
    await sender.flush(2000);
    sender.record(event(2));
    expect(await sender.flush(2000)).toBe(true);
    expect(ids(ingest.bodies)).toEqual(['e-1', 'e-2']);
  });

  it('closes promptly while the service does not answer, cutting the request in flight and keeping its events', async () => {
    const dir = tempSpool();
    const ingest = await fakeIngest();
    cleanups.push(() => ingest.close());
    ingest.script = ['hang'];
    const sender = createSender({ url: ingest.url, tenant: 'site-a', secret: SECRET, spoolDir: dir, batchMaxWaitMs: 5, requestTimeoutMs: 60_000 });
    sender.record(event(1));
    await expect.poll(() => ingest.script.length).toBe(0);
    const started = Date.now();
    await sender.close(200);
    expect(Date.now() - started).toBeLessThan(2000);
    const reopened = createSender({ url: ingest.url, tenant: 'site-a', secret: SECRET, spoolDir: dir, batchMaxWaitMs: 5 });
    cleanups.push(() => reopened.close(1000));
    expect(reopened.stats().pending).toBe(1);
    expect(await reopened.flush(3000)).toBe(true);
    expect(ids(ingest.bodies)).toEqual(['e-1']);
  });

  it('sends what queued during a request batchMaxWaitMs after that request started, not at once (few, full requests on a busy site)', async () => {
    const { ingest, sender } = await setUp({ batchMaxWaitMs: 300 });
    ingest.answerDelayMs = 150;
    sender.record(event(1));
    await expect.poll(() => ingest.arrivals.length, { timeout: 2000, interval: 5 }).toBe(1);
    const firstStarted = ingest.arrivals[0] as number;
    // Recorded while the first request waits for its answer.
    sender.record(event(2));
    sender.record(event(3));
    await expect.poll(() => ingest.arrivals.length, { timeout: 3000, interval: 5 }).toBe(2);
    expect((ingest.arrivals[1] as number) - firstStarted).toBeGreaterThanOrEqual(250);
    expect(ingest.bodies.map((b) => b.events.map((e) => e.id))).toEqual([['e-1'], ['e-2', 'e-3']]);
  });

  it('still sends a full batch at once, whatever the window', async () => {
    const { ingest, sender } = await setUp({ batchMaxWaitMs: 60_000, batchMaxEvents: 2 });
    ingest.answerDelayMs = 100;
    sender.record(event(1));
    sender.record(event(2));
    await expect.poll(() => ingest.arrivals.length, { interval: 5 }).toBe(1);
    sender.record(event(3));
    sender.record(event(4));
    await expect.poll(() => ingest.arrivals.length, { timeout: 2000, interval: 5 }).toBe(2);
    expect(ids(ingest.bodies)).toEqual(['e-1', 'e-2', 'e-3', 'e-4']);
  });
});
