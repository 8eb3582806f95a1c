import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PoolStats } from './db/client.ts';

/**
 * Prometheus metrics for one app instance (docs/operations.md, "Metrics"). Each instance has its
 * own registry (not prom-client's global one), so tests can run several instances in one process.
 *
 * Two sorts, kept apart on purpose:
 * - **Counters of this instance** (requests, jobs, events stored, tarpits opened, ingest refusals,
 *   delivery attempts): what this process did. Sum them over instances.
 * - **Fleet gauges** (active tarpits, pending deliveries, graph and rollup lag): facts of the
 *   shared database, read at scrape time; every instance reports the same value, so take `max`
 *   over instances, never `sum`. They are read at most once per FLEET_TTL_MS per instance, by
 *   index-backed statements over small sets, and a read that fails or takes longer than
 *   FLEET_TIMEOUT_MS leaves the previous values (counted in `observatory_fleet_gauge_failures_total`)
 *   instead of failing or stalling the scrape.
 */
export interface Metrics {
  readonly registry: Registry;
  observeRequest(endpointId: string, method: string, status: number, seconds: number): void;
  observeJob(job: string, outcome: 'ok' | 'error' | 'skipped', seconds: number): void;
  /** A request to an ingest endpoint answered other than 2xx, by its svc-error reason. */
  observeIngestRefusal(endpointId: string, reason: string): void;
  /** The counters the domains feed (hot paths: each call is a few map operations). */
  readonly domains: DomainMetrics;
  /** Sets how the fleet gauges are read (once, by the composition root, after the domains exist). */
  useFleetReadings(read: () => Promise<FleetReadings>): void;
}

/** What the domains count, per instance. Every method takes already aggregated numbers. */
export interface DomainMetrics {
  /** Honeypot events stored (duplicates not counted) for one tenant, by verification class. */
  honeypotEventsStored(tenant: string, byClass: ReadonlyMap<string, number>): void;
  /** Tarpits opened for fingerprints of one tenant. */
  tarpitsOpened(tenant: string, count: number): void;
  /** Empire events stored for one toolset: signed (attested) and unsigned (admitted in compatibility mode). */
  empireEventsStored(toolset: string, signed: number, unsigned: number): void;
  /** Empire events refused one by one inside an accepted request, by rejection reason. */
  empireEventsRejected(reason: string, count: number): void;
  /** One delivery attempt's outcome. */
  deliveryAttempted(source: string, kind: string, outcome: DeliveryOutcome): void;
}

export type DeliveryOutcome = 'delivered' | 'retried' | 'failed';

/** For services built without metrics (unit tests, the CLI). */
export const noDomainMetrics: DomainMetrics = {
  honeypotEventsStored: () => {},
  tarpitsOpened: () => {},
  empireEventsStored: () => {},
  empireEventsRejected: () => {},
  deliveryAttempted: () => {},
};

/** Fleet-wide facts read from the database at scrape time; null when not known (never computed). */
export interface FleetReadings {
  activeTarpits: number;
  pendingDeliveries: number;
  /** Per graph node kind, seconds behind now; null for a kind never materialised. */
  graphLagSec: ReadonlyMap<string, number | null>;
  /** Per rollup, seconds behind now; null when it never ran. */
  rollupLagSec: ReadonlyMap<string, number | null>;
}

/** Fleet gauges are read at most this often per instance (scrapes in between see the last values). */
export const FLEET_TTL_MS = 10_000;
/** A fleet read taking longer leaves the previous values; the scrape answers without waiting more. */
export const FLEET_TIMEOUT_MS = 2_000;
/**
 * Distinct values one instance gives a user-named label (tenant, toolset); further values are
 * counted under `_other`. Tenants are created by operators and toolsets by token holders, so both
 * are few in practice; the cap keeps a runaway (a script creating toolsets) from growing the
 * series without bound.
 */
export const MAX_LABEL_VALUES = 200;
export const OTHER_LABEL = '_other';

/** `value` while fewer than `max` distinct values were seen (or it is one of them), else `_other`. */
export function labelCap(max: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= max) return OTHER_LABEL;
    seen.add(value);
    return value;
  };
}

export function createMetrics(poolStats: () => PoolStats): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'observatory_process_' });

  const requests = new Counter({
    name: 'observatory_http_requests_total',
    help: 'HTTP requests answered, by endpoint id, method and status.',
    labelNames: ['endpoint', 'method', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'observatory_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by endpoint id and status.',
    labelNames: ['endpoint', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const jobRuns = new Counter({
    name: 'observatory_job_runs_total',
    help: 'Scheduled and on-demand job runs, by job and outcome.',
    labelNames: ['job', 'outcome'] as const,
    registers: [registry],
  });
  const jobDuration = new Histogram({
    name: 'observatory_job_run_duration_seconds',
    help: 'Duration of job runs, by job.',
    labelNames: ['job'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
    registers: [registry],
  });
  for (const [name, help, pick] of [
    ['observatory_db_pool_connections', 'Database connections open in the pool.', (s: PoolStats) => s.total],
    ['observatory_db_pool_idle', 'Database connections idle in the pool.', (s: PoolStats) => s.idle],
    ['observatory_db_pool_waiting', 'Queries waiting for a database connection.', (s: PoolStats) => s.waiting],
  ] as const) {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(pick(poolStats()));
      },
    });
  }

  // Counters of this instance.
  const ingestRefusals = new Counter({
    name: 'observatory_ingest_refusals_total',
    help: 'Ingest requests (honeypot and empire) answered other than 2xx, by endpoint id and svc-error reason.',
    labelNames: ['endpoint', 'reason'] as const,
    registers: [registry],
  });
  const honeypotEvents = new Counter({
    name: 'observatory_honeypot_events_total',
    help: `Honeypot events stored by this instance (duplicates not counted), by tenant slug (at most ${MAX_LABEL_VALUES}, then ${OTHER_LABEL}) and verification class.`,
    labelNames: ['tenant', 'class'] as const,
    registers: [registry],
  });
  const tarpitsOpened = new Counter({
    name: 'observatory_honeypot_tarpits_opened_total',
    help: 'Tarpits this instance opened (a liar fingerprint reached the threshold), by tenant slug.',
    labelNames: ['tenant'] as const,
    registers: [registry],
  });
  const empireEvents = new Counter({
    name: 'observatory_empire_events_total',
    help: `Empire toolset events stored by this instance (duplicates not counted), by toolset (at most ${MAX_LABEL_VALUES}, then ${OTHER_LABEL}) and verification: signed or unsigned (compatibility mode).`,
    labelNames: ['toolset', 'verification'] as const,
    registers: [registry],
  });
  const empireRejected = new Counter({
    name: 'observatory_empire_events_rejected_total',
    help: 'Empire toolset events refused one by one within an accepted request, by rejection reason.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'observatory_outbound_deliveries_total',
    help: 'Alert delivery attempts this instance made, by producer (source), destination kind and outcome (delivered, retried, failed).',
    labelNames: ['source', 'kind', 'outcome'] as const,
    registers: [registry],
  });
  const tenantLabel = labelCap(MAX_LABEL_VALUES);
  const toolsetLabel = labelCap(MAX_LABEL_VALUES);

  // Fleet gauges, read from the database at scrape time.
  let readFleet: (() => Promise<FleetReadings>) | null = null;
  let lastRead = -Infinity;
  let reading: Promise<void> | null = null;
  const fleetFailures = new Counter({
    name: 'observatory_fleet_gauge_failures_total',
    help: `Scrape-time reads of the fleet gauges that failed or took over ${FLEET_TIMEOUT_MS} ms (the gauges kept their previous values).`,
    registers: [registry],
  });
  const refreshFleet = (): Promise<void> => {
    if (readFleet === null || reading !== null) return reading ?? Promise.resolve();
    if (performance.now() - lastRead < FLEET_TTL_MS) return Promise.resolve();
    const read = readFleet;
    reading = (async () => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const deadline = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('fleet gauges timed out')), FLEET_TIMEOUT_MS);
        });
        applyFleet(await Promise.race([read(), deadline]));
      } catch {
        fleetFailures.inc();
      } finally {
        clearTimeout(timer);
        // A failed read waits its turn too, so a sick database is not asked on every scrape.
        lastRead = performance.now();
        reading = null;
      }
    })();
    return reading;
  };
  const fleetGauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        await refreshFleet();
      },
    });
  const activeTarpits = fleetGauge('observatory_honeypot_tarpits_active', 'Tarpits active now (not expired), fleet-wide: the same on every instance.');
  const pendingDeliveries = fleetGauge(
    'observatory_outbound_deliveries_pending',
    'Alert deliveries waiting to be sent or retried, fleet-wide: the same on every instance.',
  );
  const graphLag = fleetGauge(
    'observatory_graph_lag_seconds',
    'How far behind now the knowledge graph reflects its sources, per node kind (absent for a kind never materialised); fleet-wide.',
    ['kind'],
  );
  const rollupLag = fleetGauge(
    'observatory_rollup_lag_seconds',
    'How far behind now a rollup has read its facts (honeypot-dashboard: the oldest committed event not yet added; analytics: the oldest source watermark); absent when it never ran; fleet-wide.',
    ['rollup'],
  );
  function applyFleet(readings: FleetReadings): void {
    activeTarpits.set(readings.activeTarpits);
    pendingDeliveries.set(readings.pendingDeliveries);
    for (const [gauge, values, label] of [
      [graphLag, readings.graphLagSec, 'kind'],
      [rollupLag, readings.rollupLagSec, 'rollup'],
    ] as const) {
      for (const [key, value] of values) {
        if (value === null) (gauge as Gauge<string>).remove({ [label]: key });
        else (gauge as Gauge<string>).set({ [label]: key }, value);
      }
    }
  }

  return {
    registry,
    observeRequest(endpoint, method, status, seconds) {
      requests.inc({ endpoint, method, status: String(status) });
      latency.observe({ endpoint, status: String(status) }, seconds);
    },
    observeJob(job, outcome, seconds) {
      jobRuns.inc({ job, outcome });
      jobDuration.observe({ job }, seconds);
    },
    observeIngestRefusal(endpoint, reason) {
      ingestRefusals.inc({ endpoint, reason });
    },
    domains: {
      honeypotEventsStored(tenant, byClass) {
        const label = tenantLabel(tenant);
        for (const [uaClass, count] of byClass) honeypotEvents.inc({ tenant: label, class: uaClass }, count);
      },
      tarpitsOpened(tenant, count) {
        if (count > 0) tarpitsOpened.inc({ tenant: tenantLabel(tenant) }, count);
      },
      empireEventsStored(toolset, signed, unsigned) {
        const label = toolsetLabel(toolset);
        if (signed > 0) empireEvents.inc({ toolset: label, verification: 'signed' }, signed);
        if (unsigned > 0) empireEvents.inc({ toolset: label, verification: 'unsigned' }, unsigned);
      },
      empireEventsRejected(reason, count) {
        if (count > 0) empireRejected.inc({ reason }, count);
      },
      deliveryAttempted(source, kind, outcome) {
        deliveries.inc({ source, kind, outcome });
      },
    },
    useFleetReadings(read) {
      readFleet = read;
      lastRead = -Infinity;
    },
  };
}
