import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PoolStats } from './db/client.ts';

/**
 * Prometheus metrics for one app instance. Each instance has its own registry (not prom-client's
 * global one), so tests can run several instances in one process.
 */
export interface Metrics {
  readonly registry: Registry;
  observeRequest(endpointId: string, method: string, status: number, seconds: number): void;
  observeJob(job: string, outcome: 'ok' | 'error', seconds: number): void;
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
  };
}
