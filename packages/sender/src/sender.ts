import { randomUUID } from 'node:crypto';
import { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF } from './backoff.ts';
import { diskQueue, type EventQueue, memoryQueue } from './queue.ts';
import { ingestSignature } from './signature.ts';
import { fetchTransport, nodeTransport } from './transport.ts';
import type { DeliveryProblem, HoneypotEvent, IngestAnswer, SenderStats } from './types.ts';

export const INGEST_PATH = '/api/observatory/honeypot/ingest';
/** The service's limits on one ingest request. */
export const MAX_EVENTS_PER_REQUEST = 500;
export const MAX_BODY_BYTES = 1024 * 1024;
const WRAPPER_BYTES = Buffer.byteLength('{"events":[]}');

export interface SenderOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  tenant: string;
  /** The tenant's signing secret. */
  secret: string;
  /** Where to spool events (see `diskQueue`); without it they wait in memory only. */
  spoolDir?: string;
  /** The most the queue holds, in bytes (default 64 MiB); past it new events are dropped and counted. */
  maxQueueBytes?: number;
  /** A batch is sent when it holds this many events (default 500, the service's limit)… */
  batchMaxEvents?: number;
  /** …or when its oldest event has waited this long (default 1,000 ms). */
  batchMaxWaitMs?: number;
  /** A request without an answer after this long is abandoned and retried (default 10,000 ms). */
  requestTimeoutMs?: number;
  backoff?: BackoffPolicy;
  /** Called with the service's answers, in the order the events were recorded. */
  onAnswers?: (answers: IngestAnswer[]) => void;
  /** Called on every failed attempt and refusal (log it; it must not throw). */
  onProblem?: (problem: DeliveryProblem) => void;
  now?: () => number;
  random?: () => number;
  /** Send through this instead of node:http(s) on a kept-alive connection (tests, a custom dispatcher). */
  fetch?: typeof fetch;
  newId?: () => string;
}

export interface Sender {
  /**
   * Queues one event and returns its id at once (never waits, never throws), or null when the
   * event was not kept: invalid, too large, or the queue full (each counted in `stats`).
   */
  record(event: HoneypotEvent): string | null;
  /** Sends what waits now; true once the queue is empty, false if `timeoutMs` passed first. */
  flush(timeoutMs?: number): Promise<boolean>;
  stats(): SenderStats;
  /** Whether the last attempt failed and a retry waits (cheap: for a check on every request). */
  readonly failing: boolean;
  /**
   * Flushes for at most `timeoutMs` (not at all while the service is failing), cuts a request
   * still in flight, and stops; what is left stays in the spool, if any.
   */
  close(timeoutMs?: number): Promise<void>;
}

type Outcome =
  | { kind: 'delivered'; count: number; duplicates: number; answers: IngestAnswer[] }
  | { kind: 'refused-entry'; index: number; problem: DeliveryProblem }
  | { kind: 'split'; problem: DeliveryProblem }
  | { kind: 'retry'; problem: DeliveryProblem };

/**
 * Batches, signs and delivers honeypot events to the service's ingest. One request is in flight
 * at a time and the queue is read from its head, so events arrive in the order they were
 * recorded, also after an outage. Any answer but a 2xx or a refusal of the request's content
 * (400, 413) is retried with backoff for as long as it takes: a wrong secret or a disabled
 * tenant keeps the events waiting (and spooled) until an operator fixes it, instead of losing
 * them.
 */
export function createSender(options: SenderOptions): Sender {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  // A random UUID drawn once, and a counter: as unique as a UUID per event, at a fraction of its cost.
  const idBase = `${randomUUID()}-`;
  let idCount = 0;
  const newId = options.newId ?? (() => idBase + (idCount++).toString(36));
  const batchMaxEvents = Math.min(options.batchMaxEvents ?? MAX_EVENTS_PER_REQUEST, MAX_EVENTS_PER_REQUEST);
  const batchMaxWaitMs = options.batchMaxWaitMs ?? 1000;
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const maxEntryBytes = MAX_BODY_BYTES - WRAPPER_BYTES;
  const limits = { maxBytes: options.maxQueueBytes ?? 64 * 1024 * 1024 };
  const queue: EventQueue = options.spoolDir === undefined ? memoryQueue(limits) : diskQueue({ ...limits, dir: options.spoolDir });
  const endpoint = new URL(INGEST_PATH, options.url).toString();
  const transport = options.fetch === undefined ? nodeTransport(endpoint, requestTimeoutMs) : fetchTransport(endpoint, requestTimeoutMs, options.fetch);

  const stats: Omit<SenderStats, 'pending' | 'pendingBytes' | 'failing'> = { recorded: 0, sent: 0, duplicates: 0, retried: 0, spooled: 0, dropped: 0, rejected: 0, lastProblem: null };
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let attempt = 0;
  let batchLimit = batchMaxEvents;
  let waitingSince: number | null = queue.length > 0 ? now() : null;
  let flushing = 0;
  let closed = false;
  let idleWaiters: Array<() => void> = [];
  /** Cuts the request in flight when the sender closes. */
  const closing = new AbortController();

  const problem = (status: number | null, reason: string | null, message: string): DeliveryProblem => {
    const found = { at: new Date(now()).toISOString(), status, reason, message };
    stats.lastProblem = found;
    try {
      options.onProblem?.(found);
    } catch {
      // A faulty hook must not stop delivery.
    }
    return found;
  };

  const wake = () => {
    if (queue.length > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  /** When the scheduled send is due (ms since the epoch), while `timer` is set. */
  let timerDue = 0;
  const schedule = (delayMs: number) => {
    if (closed && flushing === 0) return;
    const due = now() + Math.max(0, delayMs);
    // A send already due no later stands: `record` calls this for every event, and a timer
    // replaced per event would cost more than the event.
    if (timer !== null && timerDue <= due) return;
    if (timer !== null) clearTimeout(timer);
    timerDue = due;
    timer = setTimeout(() => {
      timer = null;
      if (inFlight === null) inFlight = sendNext().finally(() => (inFlight = null));
    }, Math.max(0, delayMs));
    timer.unref();
  };

  /** Whether what waits fills a batch, or a flush asks for it now: then it goes out at once. */
  const dueNow = () => queue.length >= batchLimit || queue.bytes >= maxEntryBytes || flushing > 0;

  /** When the next batch is due, given what waits. */
  const plan = () => {
    if (inFlight !== null || queue.length === 0) return;
    if (attempt > 0) return; // a retry is already scheduled
    const waited = now() - (waitingSince ?? now());
    schedule(dueNow() ? 0 : batchMaxWaitMs - waited);
  };

  async function attemptBatch(lines: string[]): Promise<Outcome> {
    const body = Buffer.from(`{"events":[${lines.join(',')}]}`);
    const unixSeconds = Math.floor(now() / 1000);
    let response: { status: number; text: string };
    try {
      response = await transport.post(
        body,
        {
          'content-type': 'application/json',
          'x-observatory-tenant': options.tenant,
          'x-observatory-signature': ingestSignature(options.secret, unixSeconds, body),
        },
        closing.signal,
      );
    } catch (error) {
      return { kind: 'retry', problem: problem(null, null, `no answer: ${(error as Error).message}`) };
    }
    const { text } = response;
    const ok = response.status >= 200 && response.status < 300;
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Not JSON (a proxy's error page): the status decides.
    }
    if (ok) {
      const answers = Array.isArray(json.events) ? (json.events as IngestAnswer[]) : [];
      return { kind: 'delivered', count: lines.length, duplicates: typeof json.duplicates === 'number' ? json.duplicates : 0, answers };
    }
    const reason = typeof json.reason === 'string' ? json.reason : null;
    const message = typeof json.message === 'string' ? json.message : `HTTP ${response.status}`;
    const found = problem(response.status, reason, message);
    if (response.status === 400 || response.status === 413) {
      const field = (json.details as { field?: unknown } | undefined)?.field ?? json.field;
      const index = typeof field === 'string' ? /^body\.events\[(\d+)\]/.exec(field)?.[1] : undefined;
      if (index !== undefined && Number(index) < lines.length) return { kind: 'refused-entry', index: Number(index), problem: found };
      if (lines.length === 1) return { kind: 'refused-entry', index: 0, problem: found };
      return { kind: 'split', problem: found };
    }
    return { kind: 'retry', problem: found };
  }

  async function sendNext(): Promise<void> {
    const startedAt = now();
    let outcomeWasDelivery = false;
    const lines = queue.head(batchLimit, maxEntryBytes);
    if (lines.length === 0) return;
    if (lines.length === 1 && Buffer.byteLength(lines[0] as string) > maxEntryBytes) {
      queue.shift(1);
      stats.rejected += 1;
      problem(null, 'payload-too-large', 'an event larger than one request may be was dropped');
    } else {
      const outcome = await attemptBatch(lines);
      switch (outcome.kind) {
        case 'delivered':
          outcomeWasDelivery = true;
          queue.shift(outcome.count);
          stats.sent += outcome.count;
          stats.duplicates += outcome.duplicates;
          attempt = 0;
          batchLimit = batchMaxEvents;
          try {
            if (outcome.answers.length > 0) options.onAnswers?.(outcome.answers);
          } catch {
            // The site's hook must not stop delivery.
          }
          break;
        case 'refused-entry':
          attempt = 0;
          if (outcome.index === 0) {
            // The head is the event the service refused: nothing sending it again would change.
            queue.shift(1);
            stats.rejected += 1;
            batchLimit = batchMaxEvents;
          } else {
            // Deliver the valid events before it first, so the order holds.
            batchLimit = outcome.index;
          }
          break;
        case 'split':
          attempt = 0;
          batchLimit = Math.max(1, Math.ceil(lines.length / 2));
          break;
        case 'retry':
          attempt += 1;
          stats.retried += 1;
          if (!closed) schedule(backoffDelay(attempt, backoff, random));
          wake();
          return;
      }
    }
    // What queued during the request arrived after it started: its batch is due batchMaxWaitMs
    // after that (at once when full, after a refusal, or when flushing). Sending it at once
    // instead would make a busy site send a request per round trip, each nearly empty.
    waitingSince = queue.length > 0 ? startedAt : null;
    wake();
    if (queue.length === 0 || (closed && flushing === 0)) return;
    const due = outcomeWasDelivery ? batchMaxWaitMs - (now() - startedAt) : 0;
    schedule(dueNow() ? 0 : due);
  }

  const afterIdle = (timeoutMs: number) =>
    new Promise<boolean>((resolve) => {
      if (queue.length === 0) return resolve(true);
      const deadline = setTimeout(() => {
        idleWaiters = idleWaiters.filter((waiter) => waiter !== done);
        resolve(false);
      }, timeoutMs);
      const done = () => {
        clearTimeout(deadline);
        resolve(true);
      };
      idleWaiters.push(done);
    });

  // What an earlier run left in the spool goes out without waiting for a new event.
  if (queue.length > 0) plan();

  async function flush(timeoutMs = 10_000): Promise<boolean> {
    flushing += 1;
    try {
      if (attempt === 0) plan();
      return await afterIdle(timeoutMs);
    } finally {
      flushing -= 1;
    }
  }

  return {
    record(event) {
      stats.recorded += 1;
      if (closed || typeof event?.path !== 'string' || typeof event.ip !== 'string') {
        stats.rejected += 1;
        return null;
      }
      const given = typeof event.id === 'string' && event.id.length > 0;
      const id = given ? (event.id as string) : newId();
      // The id goes first, spliced in as text: a copy of each event to add it would cost more
      // than the event. `path` and `ip` are there, so the object's text is never `{}`.
      const line = given ? JSON.stringify(event) : event.id === undefined ? `{"id":${JSON.stringify(id)},${JSON.stringify(event).slice(1)}` : JSON.stringify({ ...event, id });
      const bytes = Buffer.byteLength(line);
      if (bytes > maxEntryBytes) {
        stats.rejected += 1;
        return null;
      }
      if (!queue.push(line, bytes)) {
        stats.dropped += 1;
        return null;
      }
      if (options.spoolDir !== undefined) stats.spooled += 1;
      if (waitingSince === null) waitingSince = now();
      plan();
      return id;
    },
    flush,
    stats() {
      return { ...stats, pending: queue.length, pendingBytes: queue.bytes, failing: attempt > 0 };
    },
    get failing() {
      return attempt > 0;
    },
    async close(timeoutMs = 5000) {
      if (closed) return;
      // A sender whose service is failing does not wait for it: the queue keeps what is left.
      if (attempt === 0) await flush(timeoutMs);
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      closing.abort();
      await inFlight;
      transport.close();
      queue.close();
    },
  };
}
