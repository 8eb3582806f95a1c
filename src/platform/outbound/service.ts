import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { AuditLog } from '../audit/service.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import { canonicalJson } from '../crypto.ts';
import { pageOf, type TimeCursor } from '../db/paging.ts';
import { withTransaction } from '../db/transaction.ts';
import { OUTBOUND_DISPATCH_FLAG } from '../faults/flags.ts';
import type { RuntimeFlags } from '../faults/index.ts';
import type { JobDefinition } from '../jobs/scheduler.ts';
import type { DomainMetrics } from '../metrics.ts';
import { DEFAULT_CI_EVENT_TYPE, type Destination, destinationHost, redactDestination, type RedactedDestination } from './destinations.ts';
import {
  ciDispatchBody,
  DELIVERY_HEADER,
  escapeSlack,
  metricsBody,
  type OutboundMessage,
  SIGNATURE_HEADER,
  signatureHeader,
  slackBody,
  webhookBody,
} from './message.ts';
import * as repo from './repository.ts';
import { bareHost, checkOutboundUrl, OutboundFailed, OutboundRefused, type Resolver, safePost } from './safe-fetch.ts';

/** Attempts before a delivery is given up as `failed`. */
export const MAX_ATTEMPTS = 8;
/** The wait after the first failed attempt; it doubles after each further one. */
export const RETRY_BASE_MS = 30_000;
/** Rows one claim takes; a run keeps claiming until nothing is due (or RUN_LIMIT rows). */
const DEFAULT_BATCH_SIZE = 50;
/** Sends in flight at once within a batch. */
const CONCURRENCY = 10;
/** Upper bound of rows one `dispatchDue` handles, so a job run ends. */
const RUN_LIMIT = 2_000;
const MAX_ERROR_LENGTH = 500;

/** The wait before attempt `attempts + 1`, after `attempts` (≥ 1) failed ones: 30 s, 1 min, 2 min, … */
export function retryDelayMs(attempts: number): number {
  return RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1);
}

export interface EnqueueInput {
  /** e.g. `honeypot-rule`, `empire-rule`. */
  source: string;
  /** e.g. the rule id. */
  sourceId: string;
  destinations: readonly Destination[];
  /** `source` and `sourceId` are taken from above; `firedAt` defaults to the clock's now. */
  message: Omit<OutboundMessage, 'source' | 'sourceId' | 'firedAt'> & { firedAt?: string | Date };
}

export interface DispatchStats {
  sent: number;
  retried: number;
  failed: number;
}

export interface DeliveryView {
  id: string;
  source: string;
  sourceId: string;
  destination: RedactedDestination;
  status: repo.DeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  lastStatus: number | null;
  createdAt: string;
  deliveredAt: string | null;
}

export interface SlackTestResult {
  ok: boolean;
  /** The webhook's HTTP status; 0 when no answer came (DNS, connection or timeout failure). */
  status: number;
  /** The URL's host, the only part of it that may be recorded. */
  host: string;
}

export interface Outbound {
  /**
   * Inserts one pending delivery per destination inside the caller's transaction. No network call:
   * the firing commits with its deliveries or not at all, and ingest never waits on a webhook.
   */
  enqueue(tx: Db, input: EnqueueInput): Promise<string[]>;
  /** Claims due deliveries (safe across instances), sends them and records each outcome. */
  dispatchDue(now?: Date): Promise<DispatchStats>;
  /**
   * Sends one line to a chat webhook, once. Throws OutboundRefused when the URL is not allowed;
   * network failures answer `{ ok: false, status: 0 }`. The URL is not stored or logged.
   */
  sendSlackTest(url: string, text: string): Promise<SlackTestResult>;
  /** Audits a slack test with the host and outcome only. */
  recordSlackTest(
    audit: AuditLog,
    entry: { result: SlackTestResult; actor: { userId: string; username: string } | null; requestId: string | null },
  ): Promise<void>;
  /** Deliveries with redacted destinations, newest first (for status views). */
  listDeliveries(filter: {
    source?: string;
    sourceId?: string;
    status?: repo.DeliveryStatus;
    limit?: number;
  }): Promise<DeliveryView[]>;
  countByStatus(): Promise<Record<repo.DeliveryStatus, number>>;
  /**
   * One page of the deliveries of some producers (rules) of one `source`, newest first, each
   * numbered by its destination's position in the producer's current destinations
   * (`destinationIndex`, null when none matches). Destinations are redacted.
   */
  pageDeliveries(filter: DeliveryPageFilter): Promise<{ deliveries: (DeliveryView & { destinationIndex: number | null; firedAt: string })[]; nextCursor: string | null }>;
  /** Deliveries waiting to be sent or retried, fleet-wide (a metrics gauge). */
  countPending(): Promise<number>;
}

export interface DeliveryPageFilter {
  source: string;
  /** The producers whose deliveries to list, each with its destinations in order (to number them). */
  producers: ReadonlyMap<string, readonly Destination[]>;
  /** Only deliveries to exactly this destination. */
  destination?: Destination | undefined;
  kind?: Destination['kind'] | undefined;
  status?: repo.DeliveryStatus | undefined;
  cursor: TimeCursor | null;
  limit: number;
}

export interface OutboundDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'outbound' | 'integrations'>;
  log: FastifyBaseLogger;
  /** Replaces DNS resolution (tests); answers are still checked and pinned. */
  resolve?: Resolver;
  /** Rows per claim; tests lower it to make concurrent dispatchers interleave. */
  batchSize?: number;
  /** Counts each attempt's outcome (per instance); none when absent. */
  metrics?: Pick<DomainMetrics, 'deliveryAttempted'>;
}

/** A delivery that cannot succeed as configured (its integration was unset): no retries. */
class PermanentFailure extends Error {}

interface Request {
  url: string;
  body: string;
  headers: Record<string, string>;
}

function toView(row: repo.DeliveryRow): DeliveryView {
  return {
    id: row.id,
    source: row.source,
    sourceId: row.sourceId,
    destination: redactDestination(row.destination),
    status: row.status as repo.DeliveryStatus,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? row.nextAttemptAt.toISOString() : null,
    lastError: row.lastError,
    lastStatus: row.lastStatus,
    createdAt: row.createdAt.toISOString(),
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
  };
}

function errorText(error: unknown): string {
  const text = error instanceof OutboundRefused ? `refused: ${error.reason}` : error instanceof Error ? error.message : String(error);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  });
  await Promise.all(lanes);
}

export function createOutbound(deps: OutboundDeps): Outbound {
  const { db, clock, config, log } = deps;
  const batchSize = deps.batchSize ?? DEFAULT_BATCH_SIZE;
  const { timeoutMs, allowPrivate, allowedPorts } = config.outbound;
  const policy = { allowPrivate, allowedPorts };
  // A claimed row stays invisible to other dispatchers this long; longer than a batch can take
  // (each send, DNS included, is bounded by timeoutMs), so a live dispatcher never loses its rows.
  const leaseMs = 120_000 + 2 * timeoutMs * Math.ceil(batchSize / CONCURRENCY);
  const post = (url: string, body: string, headers: Record<string, string>) =>
    safePost(url, body, { headers, timeoutMs, ...policy, ...(deps.resolve ? { resolve: deps.resolve } : {}) });

  function render(id: string, destination: Destination, message: OutboundMessage, at: Date): Request {
    switch (destination.kind) {
      case 'slack':
        return { url: destination.url, body: slackBody(message), headers: {} };
      case 'webhook': {
        const body = webhookBody(message);
        return {
          url: destination.url,
          body,
          headers: { [SIGNATURE_HEADER]: signatureHeader(destination.secret, body, at), [DELIVERY_HEADER]: id },
        };
      }
      case 'metrics': {
        const { metricsForwardUrl, metricsForwardToken } = config.integrations;
        if (metricsForwardUrl === null) throw new PermanentFailure('the metrics forwarder is not configured');
        return {
          url: metricsForwardUrl,
          body: metricsBody(message),
          headers: { [DELIVERY_HEADER]: id, ...(metricsForwardToken ? { authorization: `Bearer ${metricsForwardToken}` } : {}) },
        };
      }
      case 'ci_dispatch': {
        const { ciDispatchUrl, ciDispatchToken } = config.integrations;
        if (ciDispatchUrl === null || ciDispatchToken === null) throw new PermanentFailure('CI dispatch is not configured');
        return {
          url: ciDispatchUrl,
          body: ciDispatchBody(message, destination.eventType ?? DEFAULT_CI_EVENT_TYPE),
          headers: {
            authorization: `Bearer ${ciDispatchToken}`,
            accept: 'application/vnd.github+json',
            'x-github-api-version': '2022-11-28',
          },
        };
      }
    }
  }

  /** Sends one claimed row and records its outcome; returns what happened to it. */
  async function deliver(row: repo.DeliveryRow, now: Date): Promise<'sent' | 'retried' | 'failed' | 'lost'> {
    let lastStatus: number | null = null;
    let failure: string;
    let permanent = false;
    try {
      const request = render(row.id, row.destination, row.payload, clock.now());
      const result = await post(request.url, request.body, request.headers);
      lastStatus = result.status;
      if (result.ok) {
        const recorded = await repo.finishAttempt(db, row, {
          status: 'delivered',
          nextAttemptAt: row.nextAttemptAt,
          lastError: null,
          lastStatus,
          deliveredAt: clock.now(),
        });
        return recorded ? 'sent' : 'lost';
      }
      failure = result.status >= 300 && result.status < 400 ? `HTTP ${result.status} (redirects are not followed)` : `HTTP ${result.status}`;
    } catch (error) {
      if (!(error instanceof OutboundRefused || error instanceof OutboundFailed || error instanceof PermanentFailure)) {
        log.error({ err: error, deliveryId: row.id }, 'outbound delivery threw unexpectedly');
      }
      // A refused URL or address is policy, not a passing fault: retrying would only ask again.
      permanent = error instanceof PermanentFailure || error instanceof OutboundRefused;
      failure = errorText(error);
    }
    const giveUp = permanent || row.attempts >= MAX_ATTEMPTS;
    log.warn(
      {
        deliveryId: row.id,
        kind: row.destination.kind,
        host: destinationHost(row.destination, config.integrations),
        attempts: row.attempts,
        lastStatus,
        error: failure,
        giveUp,
      },
      'outbound delivery failed',
    );
    const recorded = await repo.finishAttempt(db, row, {
      status: giveUp ? 'failed' : 'pending',
      nextAttemptAt: giveUp ? row.nextAttemptAt : new Date(now.getTime() + retryDelayMs(row.attempts)),
      lastError: failure,
      lastStatus,
      deliveredAt: null,
    });
    if (!recorded) return 'lost';
    return giveUp ? 'failed' : 'retried';
  }

  return {
    async enqueue(tx, input) {
      const createdAt = clock.now();
      const firedAt = input.message.firedAt ?? createdAt;
      const message: OutboundMessage = {
        title: input.message.title,
        text: input.message.text,
        severity: input.message.severity,
        source: input.source,
        sourceId: input.sourceId,
        firedAt: typeof firedAt === 'string' ? firedAt : firedAt.toISOString(),
        details: input.message.details,
      };
      const rows: repo.DeliveryRow[] = input.destinations.map((destination) => ({
        id: randomUUID(),
        source: input.source,
        sourceId: input.sourceId,
        destination,
        payload: message,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: createdAt,
        lastError: null,
        lastStatus: null,
        createdAt,
        deliveredAt: null,
      }));
      await repo.insertDeliveries(tx, rows);
      return rows.map((r) => r.id);
    },

    async dispatchDue(now = clock.now()) {
      const stats: DispatchStats = { sent: 0, retried: 0, failed: 0 };
      // Due-ness, the lease and the backoff count from the later of the run's time and the clock:
      // a scheduled run stands for its fire time, which may be a little (or, caught up, a lot) in
      // the past, yet should send what is due now and lease into the real future.
      const base = new Date(Math.max(now.getTime(), clock.now().getTime()));
      let handled = 0;
      while (handled < RUN_LIMIT) {
        const claimed = await repo.claimDue(db, {
          now: base,
          leaseUntil: new Date(base.getTime() + leaseMs),
          limit: Math.min(batchSize, RUN_LIMIT - handled),
        });
        if (claimed.length === 0) break;
        handled += claimed.length;
        await eachLimited(claimed, CONCURRENCY, async (row) => {
          const outcome = await deliver(row, base);
          if (outcome === 'lost') return;
          stats[outcome]++;
          deps.metrics?.deliveryAttempted(row.source, row.destination.kind, outcome === 'sent' ? 'delivered' : outcome);
        });
      }
      return stats;
    },

    async sendSlackTest(url, text) {
      const host = bareHost(checkOutboundUrl(url, policy));
      try {
        const result = await post(url, JSON.stringify({ text: escapeSlack(text) }), {});
        return { ...result, host };
      } catch (error) {
        if (error instanceof OutboundRefused) throw error;
        if (!(error instanceof OutboundFailed)) throw error;
        log.info({ host, error: error.message }, 'slack test delivery failed');
        return { ok: false, status: 0, host };
      }
    },

    async recordSlackTest(audit, { result, actor, requestId }) {
      await withTransaction(db, (tx) =>
        audit.record(tx, {
          verb: 'integrations.slack-test',
          target: `integration:slack:${result.host}`,
          surface: 'api',
          actor,
          after: { host: result.host, ok: result.ok, status: result.status },
          requestId,
        }),
      );
    },

    async listDeliveries(filter) {
      const rows = await repo.listDeliveries(db, { ...filter, limit: filter.limit ?? 100 });
      return rows.map(toView);
    },

    countByStatus: () => repo.countByStatus(db),

    async pageDeliveries(filter) {
      const rows = await repo.pageDeliveries(db, {
        source: filter.source,
        sourceIds: [...filter.producers.keys()],
        destination: filter.destination,
        kind: filter.kind,
        status: filter.status,
        cursor: filter.cursor,
        limit: filter.limit,
      });
      const { page, nextCursor } = pageOf(rows, filter.limit, (row) => row.createdAt);
      return {
        deliveries: page.map((row) => {
          const stored = canonicalJson(row.destination);
          const index = (filter.producers.get(row.sourceId) ?? []).findIndex((d) => canonicalJson(d) === stored);
          return { ...toView(row), destinationIndex: index === -1 ? null : index, firedAt: row.payload.firedAt };
        }),
        nextCursor,
      };
    },

    countPending: () => repo.countPending(db),
  };
}

/**
 * The dispatcher, every minute: sends what is due, retries with backoff, gives up after MAX_ATTEMPTS.
 * While the `outbound-dispatch` runtime flag is off (a chaos experiment holding it) a run sends
 * nothing: every delivery stays pending, claimed by no one, for the first run after the flag is back.
 */
export function outboundJobs(outbound: Outbound, flags?: RuntimeFlags): JobDefinition[] {
  return [
    {
      name: 'outbound-dispatch',
      description: `Sends pending alert notifications (chat, webhook, metrics, CI dispatch); retries failures with exponential backoff from ${RETRY_BASE_MS / 1000} s, up to ${MAX_ATTEMPTS} attempts.`,
      schedule: '* * * * *',
      run: async ({ now }) => {
        if (flags && !flags.enabled(OUTBOUND_DISPATCH_FLAG)) {
          return { sent: 0, retried: 0, failed: 0, heldByFlag: OUTBOUND_DISPATCH_FLAG, pending: await outbound.countPending() };
        }
        const stats = await outbound.dispatchDue(now);
        return { ...stats };
      },
    },
  ];
}
