import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';

/**
 * Records every call to the public agent API as a honeypot event (docs/agent-api/README.md, "The bait
 * records what it catches"). Calls are buffered and handed to the honeypot's ingest service in
 * batches, after the answer has gone out, so recording never slows or fails a call: when the
 * database is down a batch is tried again a few times, and when the buffer is full new calls are
 * counted as dropped rather than held without bound.
 */

/** One call as the honeypot event it becomes (the fields of a D3 event). */
export interface RecordedCall {
  id: string;
  ts: string;
  method: string;
  path: string;
  query: string | null;
  ua: string;
  ip: string;
  referer: string | null;
  headers: Record<string, string>;
}

/** What the honeypot domain offers the recorder: ingest for a tenant by slug (null: no such tenant, or disabled). */
export interface CallSink {
  record(tenantSlug: string, events: RecordedCall[]): Promise<{ accepted: number; duplicates: number } | null>;
}

export const RECORD_FLUSH_COUNT = 500;
export const RECORD_FLUSH_MS = 200;
export const RECORD_BUFFER_MAX = 20_000;
/** A batch whose write fails is tried again this many times (RECORD_RETRY_MS apart), then its calls are dropped. */
export const RECORD_RETRIES = 3;
export const RECORD_RETRY_MS = RECORD_FLUSH_MS * 5;

/** Request headers worth keeping on the event: content negotiation and Web Bot Auth's signature. Never forwarding headers (they hold raw IPs). */
export const RECORDED_HEADERS = ['accept', 'accept-language', 'accept-encoding', 'from', 'signature', 'signature-input', 'signature-agent', 'sec-fetch-mode', 'sec-ch-ua'] as const;

export interface RecorderStats {
  recorded: number;
  dropped: number;
  failedAttempts: number;
  buffered: number;
}

export function createCallRecorder(deps: { tenantSlug: string | null; sink: CallSink; clock: Clock; log: FastifyBaseLogger }) {
  const { tenantSlug, sink, log } = deps;
  let buffer: { call: RecordedCall; failures: number }[] = [];
  let timer: NodeJS.Timeout | null = null;
  let flushing: Promise<void> = Promise.resolve();
  const stats = { recorded: 0, dropped: 0, failedAttempts: 0 };
  let warnedMissingTenant = false;

  function schedule(): void {
    if (buffer.length >= RECORD_FLUSH_COUNT) void flush();
    else timer ??= setTimeout(() => void flush(), RECORD_FLUSH_MS).unref();
  }

  function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = null;
    flushing = flushing.then(async () => {
      while (buffer.length > 0 && tenantSlug !== null) {
        const batch = buffer.slice(0, RECORD_FLUSH_COUNT);
        buffer = buffer.slice(batch.length);
        try {
          const stored = await sink.record(tenantSlug, batch.map((b) => b.call));
          if (stored === null) {
            stats.dropped += batch.length;
            if (!warnedMissingTenant) log.warn({ tenant: tenantSlug }, 'agent API calls are not recorded: the recording tenant is missing or disabled');
            warnedMissingTenant = true;
          } else {
            stats.recorded += stored.accepted;
            warnedMissingTenant = false;
          }
        } catch (error) {
          stats.failedAttempts += 1;
          const retry = batch.filter((b) => ++b.failures <= RECORD_RETRIES);
          stats.dropped += batch.length - retry.length;
          log.warn({ err: error, calls: batch.length, retrying: retry.length }, 'recording agent API calls failed');
          buffer = [...retry, ...buffer];
          if (retry.length > 0) timer ??= setTimeout(() => void flush(), RECORD_RETRY_MS).unref();
          return;
        }
      }
    });
    return flushing;
  }

  return {
    /** Buffers one call; never throws and never waits. */
    push(call: Omit<RecordedCall, 'id' | 'ts'>): void {
      if (tenantSlug === null) return;
      if (buffer.length >= RECORD_BUFFER_MAX) {
        stats.dropped += 1;
        return;
      }
      // The id makes a retried batch idempotent: ingest counts a repeat as a duplicate.
      buffer.push({ call: { id: `agent-api-${randomUUID()}`, ts: deps.clock.now().toISOString(), ...call }, failures: 0 });
      schedule();
    },
    /** Hands everything buffered to ingest now (tests, shutdown). */
    flush,
    stats: (): RecorderStats => ({ ...stats, buffered: buffer.length }),
    async close(): Promise<void> {
      await flush();
    },
  };
}

export type CallRecorder = ReturnType<typeof createCallRecorder>;
