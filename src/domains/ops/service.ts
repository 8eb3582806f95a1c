import { listOperatorAudit, type OperatorAuditRow } from '../../platform/audit/repository.ts';
import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { assertThat, notFound } from '../../platform/errors.ts';
import type { Principal } from '../../platform/http/registry.ts';
import { latestRunPerJob, listRecentRuns } from '../../platform/jobs/repository.ts';
import { type JobRun, type Scheduler, toJobRun } from '../../platform/jobs/scheduler.ts';

export function toAuditView(row: OperatorAuditRow) {
  return {
    id: row.id,
    seqNo: String(row.seqNo),
    ts: row.ts.toISOString(),
    actor: row.actor,
    actorUserId: row.actorUserId,
    surface: row.surface,
    verb: row.verb,
    target: row.target,
    before: row.before ?? null,
    after: row.after ?? null,
    requestId: row.requestId,
  };
}

export interface IntegrationStatus {
  id: 'chat' | 'metrics' | 'ci_dispatch' | 'csv_since';
  configured: boolean;
  notes: string;
}

/** Which outbound integrations are configured. Only presence is reported, never a value. */
export function integrationsStatus(integrations: Config['integrations']): IntegrationStatus[] {
  return [
    {
      id: 'chat',
      configured: integrations.chatWebhookUrl !== null,
      notes:
        integrations.chatWebhookUrl !== null
          ? 'Default chat-service incoming webhook set by OBSERVATORY_CHAT_WEBHOOK_URL; rules may name their own.'
          : 'Set OBSERVATORY_CHAT_WEBHOOK_URL to a chat-service incoming webhook; rules may still name their own.',
    },
    {
      id: 'metrics',
      configured: integrations.metricsForwardUrl !== null,
      notes:
        integrations.metricsForwardUrl !== null
          ? `Alert firings are forwarded to the metrics endpoint${integrations.metricsForwardToken ? ' with a bearer token' : ''}.`
          : 'Set OBSERVATORY_METRICS_FORWARD_URL (and optionally OBSERVATORY_METRICS_FORWARD_TOKEN) to forward alert firings.',
    },
    {
      id: 'ci_dispatch',
      configured: integrations.ciDispatchUrl !== null && integrations.ciDispatchToken !== null,
      notes:
        integrations.ciDispatchUrl !== null && integrations.ciDispatchToken !== null
          ? 'Alert firings can dispatch a CI workflow.'
          : 'Set both OBSERVATORY_CI_DISPATCH_URL and OBSERVATORY_CI_DISPATCH_TOKEN to dispatch CI workflows from alerts.',
    },
    {
      id: 'csv_since',
      configured: integrations.csvSinceUrl !== null,
      notes:
        integrations.csvSinceUrl !== null
          ? 'Events recorded since the last successful export are pushed as CSV to the configured URL.'
          : 'Set OBSERVATORY_CSV_SINCE_URL to push events recorded since the last export as CSV.',
    },
  ];
}

export function createOpsService(deps: { db: Db; clock: Clock; audit: AuditLog; scheduler: Scheduler; config: Config }) {
  const { db, clock, audit, scheduler } = deps;
  return {
    async listAudit(filter: { limit: number; cursor?: string | undefined; verb?: string | undefined }) {
      const rows = await listOperatorAudit(db, {
        limit: filter.limit + 1,
        beforeSeqNo: filter.cursor === undefined ? undefined : Number(filter.cursor),
        verb: filter.verb,
      });
      const page = rows.slice(0, filter.limit);
      const last = page.at(-1);
      return { rows: page.map(toAuditView), nextCursor: rows.length > filter.limit && last ? String(last.seqNo) : null };
    },

    async cronHealth(recentLimit: number) {
      const latest = new Map((await latestRunPerJob(db)).map((row) => [row.job, toJobRun(row)]));
      const now = clock.now();
      return {
        latestPerJob: scheduler.jobs().map((job) => ({
          job: job.name,
          description: job.description,
          schedule: job.schedule,
          nextRunAt: scheduler.nextRunAt(job.name, now)?.toISOString() ?? null,
          lastRun: latest.get(job.name) ?? null,
        })),
        recent: (await listRecentRuns(db, recentLimit)).map(toJobRun),
      };
    },

    /** Runs a job now through the scheduler's own code path, and audits who asked. */
    async runJob(name: string, principal: Principal, requestId: string): Promise<JobRun> {
      assertThat(scheduler.find(name), notFound(`There is no job named ${name}.`));
      const run = await scheduler.runNow(name);
      await withTransaction(db, (tx) =>
        audit.record(tx, {
          verb: 'job.run',
          target: `job:${name}`,
          surface: 'api',
          actor: { userId: principal.userId, username: principal.username },
          after: { runId: run.id, outcome: run.outcome, durationMs: run.durationMs },
          requestId,
        }),
      );
      return run;
    },

    integrations: () => integrationsStatus(deps.config.integrations),
  };
}

export type OpsService = ReturnType<typeof createOpsService>;
