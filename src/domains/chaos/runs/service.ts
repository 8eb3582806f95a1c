import type { AuditLog } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { decodeTimeCursor, isUuid, pageOf } from '../../../platform/db/paging.ts';
import { withWritableTransaction } from '../../../platform/db/transaction.ts';
import { notFound, ServiceError } from '../../../platform/errors.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import type { ChaosKind } from '../kinds.ts';
import * as repo from './repository.ts';
import type { ChaosRunner } from './runner.ts';

export const RUNS_LIMIT_DEFAULT = 50;
export const RUNS_LIMIT_MAX = 200;
/** When the chaos-schedule job looks for an experiment to run (UTC). */
export const CHAOS_SCHEDULE_CRON = '17,47 * * * *';

export function toRunView(row: repo.RunWithExperiment) {
  return {
    id: row.id,
    experimentId: row.experimentId,
    experimentSlug: row.experimentSlug,
    experimentKind: row.experimentKind as ChaosKind | null,
    target: row.target,
    trigger: row.trigger as 'schedule' | 'manual',
    phase: row.phase as 'injected' | 'recovering' | 'ended',
    startedAt: row.startedAt.toISOString(),
    windowEndsAt: row.windowEndsAt.toISOString(),
    endedAt: row.endedAt?.toISOString() ?? null,
    outcome: row.outcome as 'ok' | 'sla-breach' | 'aborted' | 'partial',
    recoverySloSec: row.recoverySloSec,
    observedRecoverySec: row.observedRecoverySec,
    errorText: row.errorText,
    abortReason: row.abortReason,
    measurements: (row.measurements ?? {}) as Record<string, unknown>,
  };
}
export type RunView = ReturnType<typeof toRunView>;

/**
 * The runs of chaos experiments: the list, a run started by hand, and the chaos-schedule job,
 * which picks the eligible experiment that has waited longest (never run first) past its cooldown.
 */
export function createRunService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  runner: ChaosRunner;
  /** The experiment registry's lookup (an id that is no UUID names none). */
  experimentById(id: string): Promise<repo.ExperimentRow | null>;
}) {
  const { db, clock, audit, runner } = deps;

  async function list(query: { cursor?: string | undefined; experimentId?: string | undefined; outcome?: string | undefined; limit?: number | undefined }) {
    const limit = query.limit ?? RUNS_LIMIT_DEFAULT;
    const cursor = decodeTimeCursor(query.cursor);
    // An id that is no UUID names no run (a uuid column would refuse it with an error).
    if (query.experimentId !== undefined && !isUuid(query.experimentId)) return { runs: [], nextCursor: null };
    const rows = await repo.listRuns(db, { limit: limit + 1, cursor, experimentId: query.experimentId, outcome: query.outcome });
    const { page, nextCursor } = pageOf(rows, limit, (row) => row.startedAt);
    return { runs: page.map(toRunView), nextCursor };
  }

  async function startByHand(experimentId: string, caller: { principal: Principal; requestId: string }) {
    const experiment = await deps.experimentById(experimentId);
    if (!experiment) throw notFound(`There is no chaos experiment ${experimentId}.`);
    const started = await runner.start(experiment, 'manual');
    if (!started.ok) throw new ServiceError(409, started.reason, started.human);
    // Written even when the run just made this instance's sessions read-only.
    await withWritableTransaction(db, (tx) =>
      audit.record(tx, {
        verb: 'chaos.run',
        target: `chaos-experiment:${experiment.slug}`,
        surface: 'api',
        actor: { userId: caller.principal.userId, username: caller.principal.username },
        after: { runId: started.run.id, kind: experiment.kind, target: experiment.target },
        requestId: caller.requestId,
      }),
    );
    return { ok: true as const, run: toRunView(started.run) };
  }

  /** The schedule's pick at `now`: eligible experiments past their cooldown, the longest-waiting first. */
  async function runScheduled(now: Date) {
    const closed = await runner.closedGate();
    if (closed) return { started: null, skippedReason: closed.reason, considered: 0, refusals: [] };
    const experiments = await repo.activeExperimentsWithLastRun(db);
    const due = experiments
      .filter((e) => e.lastRunAt === null || e.lastRunAt.getTime() + e.cooldownMinutes * 60_000 <= now.getTime())
      .sort((a, b) => (a.lastRunAt?.getTime() ?? -1) - (b.lastRunAt?.getTime() ?? -1));
    if (due.length === 0) return { started: null, skippedReason: experiments.length === 0 ? 'no-active-experiment' : 'all-cooling-down', considered: experiments.length };
    const refusals: { slug: string; reason: string }[] = [];
    for (const experiment of due) {
      const started = await runner.start(experiment, 'schedule');
      if (started.ok) return { started: { runId: started.run.id, slug: experiment.slug, kind: experiment.kind }, skippedReason: null, considered: experiments.length, refusals };
      refusals.push({ slug: experiment.slug, reason: started.reason });
      // A gate that holds for every experiment (it closed since the check above) stops the pick.
      if (started.reason === 'run-open' || started.reason === 'frozen' || started.reason === 'critical-drift-open') {
        return { started: null, skippedReason: started.reason, considered: experiments.length, refusals };
      }
    }
    return { started: null, skippedReason: 'none-eligible', considered: experiments.length, refusals };
  }

  const scheduleJob: JobDefinition = {
    name: 'chaos-schedule',
    description: 'Starts the eligible chaos experiment that has waited longest (active, past its cooldown, blast radius in OBSERVATORY_CHAOS_ALLOW, not frozen, no unresolved critical drift, no run open).',
    schedule: CHAOS_SCHEDULE_CRON,
    run: async (ctx) => runScheduled(ctx.now),
  };

  return { list, startByHand, runScheduled, scheduleJob };
}

export type RunService = ReturnType<typeof createRunService>;
