import { randomUUID, type KeyObject } from 'node:crypto';
import { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF, diskQueue, type EventQueue, memoryQueue } from '@observatory/sender';
import canonicalize from 'canonicalize';
import { EMPIRE_INGEST_PATH, type EmpireIngestBody, type IngestResult, observatoryApi } from './api.ts';
import { type BatchOutcome, readIngestAnswer } from './answers.ts';
import { signEvent, type SignedEvent, type ToolsetEvent } from './signing.ts';
import type { DeliveryProblem, ToolsetClientStats } from './types.ts';

/** The empire ingest's limits on one request (test/toolset-client-limits.test.ts holds them to the service's). */
export const MAX_EVENTS_PER_REQUEST = 500;
export const MAX_BODY_BYTES = 1024 * 1024;
/** The most one event's payload may be in its RFC 8785 form. */
export const MAX_PAYLOAD_BYTES = 64 * 1024;
/** The most an event's `id`, `eventType`, `tenant` and `causedBy` may be, in characters. */
export const MAX_NAME_LENGTH = 128;

export interface ToolsetClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** An API token with `write:events` (bound to this toolset, ideally). */
  token: string;
  toolset: string;
  /** The toolset's Ed25519 private key, whose public key is registered. */
  privateKey: KeyObject;
  /** The registration's id: the service then tries that key only. */
  keyId?: string;
  /** Where to spool events (the sender's `diskQueue`); without it they wait in memory only. */
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
  /** Called with the service's results, in the order the events were recorded. */
  onResults?: (results: IngestResult[]) => void;
  /** Called on every failed attempt and every refused event (log it; it must not throw). */
  onProblem?: (problem: DeliveryProblem) => void;
  now?: () => number;
  random?: () => number;
  fetch?: typeof fetch;
  newId?: () => string;
}

export interface ToolsetClient {
  /**
   * Signs and queues one event and returns its id at once (never waits, never throws), or null
   * when it was not kept: invalid, too large, or the queue full (each counted in `stats`).
   */
  record(event: ToolsetEvent): string | null;
  /** Sends what waits now; true once the queue is empty, false if `timeoutMs` passed first. */
  flush(timeoutMs?: number): Promise<boolean>;
  stats(): ToolsetClientStats;
  readonly failing: boolean;
  /** Flushes for at most `timeoutMs` (not at all while failing), cuts a request in flight, stops; the spool keeps the rest. */
  close(timeoutMs?: number): Promise<void>;
}

const WRAPPER_BYTES = (toolset: string) => Buffer.byteLength(JSON.stringify({ toolset, events: [] }));

/** Why an event cannot be sent as it is, or null. */
export function eventProblem(event: ToolsetEvent): string | null {
  if (event === null || typeof event !== 'object') return 'an event must be an object';
  const text = (name: 'id' | 'eventType' | 'tenant', required: boolean) => {
    const value = event[name];
    if (value === undefined && !required) return null;
    if (typeof value !== 'string' || value.length === 0 || value.length > MAX_NAME_LENGTH) return `${name} must be a string of 1 to ${MAX_NAME_LENGTH} characters`;
    return null;
  };
  const found = text('eventType', true) ?? text('id', false) ?? text('tenant', false);
  if (found) return found;
  if (event.causedBy !== undefined && event.causedBy !== null && (typeof event.causedBy !== 'string' || event.causedBy.length === 0 || event.causedBy.length > MAX_NAME_LENGTH))
    return `causedBy must be null or a string of 1 to ${MAX_NAME_LENGTH} characters`;
  if (event.ts !== undefined && (typeof event.ts !== 'string' || Number.isNaN(Date.parse(event.ts)))) return 'ts must be an ISO 8601 time';
  if (event.payload !== undefined) {
    if (event.payload === null || typeof event.payload !== 'object' || Array.isArray(event.payload)) return 'payload must be a JSON object';
    const canonical = canonicalize(event.payload);
    if (canonical === undefined || Buffer.byteLength(canonical) > MAX_PAYLOAD_BYTES) return `payload must be at most ${MAX_PAYLOAD_BYTES} bytes in its RFC 8785 form`;
  }
  const known = new Set(['id', 'eventType', 'ts', 'tenant', 'causedBy', 'payload']);
  const unknown = Object.keys(event).find((key) => !known.has(key));
  return unknown === undefined ? null : `${unknown} is not a member of an event`;
}

/**
 * Signs toolset events and delivers them to the empire ingest. Ids and `ts` are fixed when an
 * event is recorded, and the queue holds the signed wire form, so a resend (after a lost answer
 * or from the spool of an earlier run) is the same event and the service answers it as a
 * duplicate. One request is in flight at a time and the queue is read from its head, so events
 * arrive in the order recorded, also after an outage. A request the service did not answer
 * per event is retried with equal-jitter backoff for as long as it takes; an event it rejects
 * (in its answer, or by refusing the request for it) is dropped and counted.
 */
export function createToolsetClient(options: ToolsetClientOptions): ToolsetClient {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const newId = options.newId ?? randomUUID;
  const { toolset, privateKey, keyId } = options;
  const batchMaxEvents = Math.max(1, Math.min(options.batchMaxEvents ?? MAX_EVENTS_PER_REQUEST, MAX_EVENTS_PER_REQUEST));
  const batchMaxWaitMs = options.batchMaxWaitMs ?? 1000;
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  // Each event after the first costs a comma besides its line.
  const maxBatchBytes = MAX_BODY_BYTES - WRAPPER_BYTES(toolset) - batchMaxEvents;
  const limits = { maxBytes: options.maxQueueBytes ?? 64 * 1024 * 1024 };
  const queue: EventQueue = options.spoolDir === undefined ? memoryQueue(limits) : diskQueue({ ...limits, dir: options.spoolDir });
  const api = observatoryApi(options.url, options.token, options.fetch ?? fetch);

  const stats: Omit<ToolsetClientStats, 'pending' | 'pendingBytes' | 'failing'> = { recorded: 0, sent: 0, duplicates: 0, retried: 0, spooled: 0, dropped: 0, rejected: 0, lastProblem: null };
  let timer: NodeJS.Timeout | null = null;
  let timerDue = 0;
  let inFlight: Promise<void> | null = null;
  let attempt = 0;
  let batchLimit = batchMaxEvents;
  let waitingSince: number | null = queue.length > 0 ? now() : null;
  let flushing = 0;
  let closed = false;
  let idleWaiters: Array<() => void> = [];
  const closing = new AbortController();

  const problem = (found: Omit<DeliveryProblem, 'at'>) => {
    const full = { at: new Date(now()).toISOString(), ...found };
    stats.lastProblem = full;
    try {
      options.onProblem?.(full);
    } catch {
      // A faulty hook must not stop delivery.
    }
  };

  const wake = () => {
    if (queue.length > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const schedule = (delayMs: number) => {
    if (closed && flushing === 0) return;
    const due = now() + Math.max(0, delayMs);
    if (timer !== null && timerDue <= due) return;
    if (timer !== null) clearTimeout(timer);
    timerDue = due;
    timer = setTimeout(() => {
      timer = null;
      if (inFlight === null) inFlight = sendNext().finally(() => (inFlight = null));
    }, Math.max(0, delayMs));
    timer.unref();
  };

  const dueNow = () => queue.length >= batchLimit || queue.bytes >= maxBatchBytes || flushing > 0;

  const plan = () => {
    if (inFlight !== null || queue.length === 0 || attempt > 0) return;
    const waited = now() - (waitingSince ?? now());
    schedule(dueNow() ? 0 : batchMaxWaitMs - waited);
  };

  async function attemptBatch(lines: string[]): Promise<BatchOutcome> {
    const events: SignedEvent[] = [];
    for (const [index, line] of lines.entries()) {
      try {
        events.push(JSON.parse(line) as SignedEvent);
      } catch {
        // A spool line damaged on disk: deliver what is before it, then drop it like a refused event.
        return { kind: 'refused-entry', index, status: null, reason: 'unreadable-spool-line', message: 'a spooled event could not be read back' };
      }
    }
    try {
      const { data, error, response } = await api.POST(EMPIRE_INGEST_PATH, {
        body: { toolset, events } as EmpireIngestBody,
        signal: AbortSignal.any([AbortSignal.timeout(requestTimeoutMs), closing.signal]),
      });
      return readIngestAnswer(response.status, data ?? error, lines.length);
    } catch (error) {
      return { kind: 'retry', status: null, reason: null, message: `no answer: ${(error as Error).message}` };
    }
  }

  const idOf = (line: string | undefined) => {
    try {
      return (JSON.parse(line ?? '{}') as { id?: string }).id;
    } catch {
      return undefined;
    }
  };

  async function sendNext(): Promise<void> {
    const startedAt = now();
    let delivered = false;
    const lines = queue.head(batchLimit, maxBatchBytes);
    if (lines.length === 0) return;
    const outcome = await attemptBatch(lines);
    switch (outcome.kind) {
      case 'answered': {
        delivered = true;
        queue.shift(lines.length);
        attempt = 0;
        batchLimit = batchMaxEvents;
        const rejected = outcome.results.filter((r) => r.rejectionReason !== null);
        stats.sent += lines.length - rejected.length;
        stats.duplicates += outcome.duplicates;
        stats.rejected += rejected.length;
        for (const r of rejected) problem({ status: 200, reason: r.rejectionReason, message: `event ${r.id} was rejected: ${r.rejectionReason}`, eventId: r.id });
        try {
          options.onResults?.(outcome.results);
        } catch {
          // The toolset's hook must not stop delivery.
        }
        break;
      }
      case 'refused-entry':
        attempt = 0;
        if (outcome.index === 0) {
          // The head is the event the service refused: nothing sending it again would change.
          queue.shift(1);
          stats.rejected += 1;
          batchLimit = batchMaxEvents;
          problem({ status: outcome.status, reason: outcome.reason, message: outcome.message, eventId: idOf(lines[0]) });
        } else {
          // Deliver the events before it first, so the order holds.
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
        problem({ status: outcome.status, reason: outcome.reason, message: outcome.message });
        if (!closed) schedule(backoffDelay(attempt, backoff, random));
        wake();
        return;
    }
    waitingSince = queue.length > 0 ? startedAt : null;
    wake();
    if (queue.length === 0 || (closed && flushing === 0)) return;
    schedule(dueNow() ? 0 : delivered ? batchMaxWaitMs - (now() - startedAt) : 0);
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
      try {
        const invalid = closed ? 'the client is closed' : eventProblem(event);
        if (invalid !== null) {
          stats.rejected += 1;
          problem({ status: null, reason: 'invalid-event', message: invalid, eventId: typeof event?.id === 'string' ? event.id : undefined });
          return null;
        }
        const id = event.id ?? newId();
        const ts = event.ts ?? new Date(now()).toISOString();
        const signed = signEvent(toolset, { ...event, id, ts }, privateKey, keyId);
        const line = JSON.stringify(signed);
        const bytes = Buffer.byteLength(line);
        if (bytes > maxBatchBytes) {
          stats.rejected += 1;
          problem({ status: null, reason: 'payload-too-large', message: 'an event larger than one request may be', eventId: id });
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
      } catch (error) {
        // A payload canonicalize cannot write (a BigInt, a cycle) or a failing disk: never the caller's problem.
        stats.rejected += 1;
        problem({ status: null, reason: 'invalid-event', message: (error as Error).message });
        return null;
      }
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
      if (attempt === 0) await flush(timeoutMs);
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      closing.abort();
      await inFlight;
      queue.close();
    },
  };
}
