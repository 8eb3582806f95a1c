import { randomUUID } from 'node:crypto';
import { Cron } from 'croner';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { BeforeScheduledRun, SkipDecision } from '../faults/index.ts';
import type { Metrics } from '../metrics.ts';
import * as repo from './repository.ts';

export type JobStats = Record<string, unknown>;

export interface JobContext {
  /** The time the run stands for: the cron fire time, or the clock's now for on-demand runs. */
  now: Date;
  db: Db;
  log: FastifyBaseLogger;
  trigger: 'schedule' | 'manual';
}

export interface JobDefinition {
  name: string;
  description: string;
  /** Five-field cron expression in UTC, or null for a job that only runs on demand. */
  schedule: string | null;
  run(ctx: JobContext): Promise<JobStats>;
}

export interface JobRun {
  id: string;
  job: string;
  trigger: 'schedule' | 'manual';
  scheduledFor: string | null;
  /** `skipped`: a scheduled run the before-run hook (a chaos experiment) told not to run; its stats say why. */
  outcome: 'ok' | 'error' | 'running' | 'skipped';
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  stats: JobStats;
  errorText: string | null;
}

/**
 * A missed fire time (the service was down) is caught up once if it is at most this old;
 * older ones are skipped and the job waits for its next time.
 */
export const CATCH_UP_WINDOW_MS = 24 * 60 * 60 * 1000;

/** How long a scheduled run waits for the before-run hook's answer before it runs as usual. */
export const BEFORE_RUN_TIMEOUT_MS = 10_000;

const RUN_AS_USUAL: SkipDecision = { skip: false };

export interface Scheduler {
  jobs(): readonly JobDefinition[];
  find(name: string): JobDefinition | undefined;
  /** Runs a job now, recorded like a scheduled run; errors are recorded, not thrown. */
  runNow(name: string): Promise<JobRun>;
  /** Runs every job whose latest fire time at `now` has not been run by any instance yet. */
  tick(now?: Date): Promise<JobRun[]>;
  nextRunAt(name: string, after: Date): Date | null;
  start(intervalMs: number): void;
  stop(): Promise<void>;
}

export function toJobRun(row: repo.JobRunRow): JobRun {
  return {
    id: row.id,
    job: row.job,
    trigger: row.trigger as JobRun['trigger'],
    scheduledFor: row.scheduledFor?.toISOString() ?? null,
    outcome: row.outcome as JobRun['outcome'],
    startedAt: row.startedAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
    durationMs: row.durationMs,
    stats: (row.stats ?? {}) as JobStats,
    errorText: row.errorText,
  };
}

export function createScheduler(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  metrics: Metrics;
  jobs: readonly JobDefinition[];
  /**
   * Asked about each scheduled run once it is claimed (so one instance decides), never about
   * on-demand runs: a skip is recorded as outcome `skipped` and the job does not run. A hook that
   * throws or does not answer within `beforeRunTimeoutMs` is logged and the job runs as usual.
   */
  beforeScheduledRun?: BeforeScheduledRun;
  beforeRunTimeoutMs?: number;
}): Scheduler {
  const { db, clock, log, metrics } = deps;
  const instanceId = randomUUID();
  const byName = new Map(deps.jobs.map((job) => [job.name, job]));
  const crons = new Map<string, Cron>();
  for (const job of deps.jobs) {
    if (job.schedule !== null) crons.set(job.name, new Cron(job.schedule, { timezone: 'UTC', paused: true }));
  }
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<unknown> = Promise.resolve();

  async function beforeRun(job: JobDefinition, fireTime: Date): Promise<SkipDecision> {
    const hook = deps.beforeScheduledRun;
    if (!hook) return RUN_AS_USUAL;
    const timeoutMs = deps.beforeRunTimeoutMs ?? BEFORE_RUN_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    try {
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        timer.unref();
      });
      const decision = await Promise.race([hook(job.name, fireTime), late]);
      return decision.skip ? decision : RUN_AS_USUAL;
    } catch (error) {
      // A broken hook (the chaos domain's) must never stop the scheduler: the job runs as usual.
      log.error({ job: job.name, err: error }, 'the before-run hook failed; the job runs as usual');
      return RUN_AS_USUAL;
    } finally {
      clearTimeout(timer);
    }
  }

  async function execute(job: JobDefinition, trigger: JobRun['trigger'], scheduledFor: Date | null): Promise<JobRun | null> {
    const startedAt = clock.now();
    const row: repo.JobRunRow = {
      id: randomUUID(),
      job: job.name,
      trigger,
      scheduledFor,
      startedAt,
      finishedAt: null,
      durationMs: null,
      outcome: 'running',
      stats: {},
      errorText: null,
      instanceId,
    };
    if (!(await repo.claimRun(db, row))) return null;
    const began = performance.now();
    let outcome: 'ok' | 'error' | 'skipped' = 'ok';
    let stats: JobStats = {};
    let errorText: string | null = null;
    const decision = trigger === 'schedule' && scheduledFor !== null ? await beforeRun(job, scheduledFor) : RUN_AS_USUAL;
    if (decision.skip) {
      outcome = 'skipped';
      stats = { ...decision.stats, reason: decision.reason };
      log.info({ job: job.name, scheduledFor, reason: decision.reason }, 'scheduled run skipped');
    } else {
      try {
        stats = await job.run({ now: scheduledFor ?? startedAt, db, log: log.child({ job: job.name }), trigger });
      } catch (error) {
        outcome = 'error';
        errorText = error instanceof Error ? error.message : String(error);
        log.warn({ job: job.name, err: error }, 'job run failed');
      }
    }
    const durationMs = Math.round(performance.now() - began);
    const finished = { finishedAt: clock.now(), durationMs, outcome, stats, errorText };
    await repo.finishRun(db, row.id, finished);
    metrics.observeJob(job.name, outcome, durationMs / 1000);
    return toJobRun({ ...row, ...finished });
  }

  function dueFireTime(name: string, now: Date): Date | null {
    const cron = crons.get(name);
    if (!cron) return null;
    // previousRuns looks strictly before the reference; a run due exactly now must count.
    const [previous] = cron.previousRuns(1, new Date(now.getTime() + 1));
    if (!previous || now.getTime() - previous.getTime() > CATCH_UP_WINDOW_MS) return null;
    return previous;
  }

  async function tick(now: Date = clock.now()): Promise<JobRun[]> {
    const runs: JobRun[] = [];
    for (const job of byName.values()) {
      const fireTime = dueFireTime(job.name, now);
      if (fireTime === null || (await repo.hasScheduledRun(db, job.name, fireTime))) continue;
      const run = await execute(job, 'schedule', fireTime);
      if (run) runs.push(run);
    }
    return runs;
  }

  return {
    jobs: () => [...byName.values()],
    find: (name) => byName.get(name),
    async runNow(name) {
      const job = byName.get(name);
      if (!job) throw new Error(`unknown job ${name}`);
      const run = await execute(job, 'manual', null);
      // On-demand runs never collide, so a run record always exists here.
      return run as JobRun;
    },
    tick,
    nextRunAt(name, after) {
      return crons.get(name)?.nextRun(after) ?? null;
    },
    start(intervalMs) {
      if (timer) return;
      timer = setInterval(() => {
        inFlight = inFlight
          .then(() => tick())
          .catch((error: unknown) => log.error({ err: error }, 'scheduler tick failed'));
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await inFlight;
    },
  };
}
