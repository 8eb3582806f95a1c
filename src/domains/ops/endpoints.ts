import { Type } from '@sinclair/typebox';
import { EmptyBody, defineEndpoint, type Endpoint, IsoDate, LONG_WORK_TIMEOUT_MS, Nullable, V1 } from '../../platform/http/registry.ts';
import type { OpsService } from './service.ts';

const generatedAt = '2026-11-23T08:00:00.000Z';

const JobRunSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  job: Type.String(),
  trigger: Type.Union([Type.Literal('schedule'), Type.Literal('manual')]),
  scheduledFor: Nullable(IsoDate),
  outcome: Type.Union([Type.Literal('ok'), Type.Literal('error'), Type.Literal('running'), Type.Literal('skipped')], {
    description: '`skipped`: a scheduled run a chaos experiment (cron-skip-one) told not to run; the job did not run and `stats.reason` says why.',
  }),
  startedAt: IsoDate,
  finishedAt: Nullable(IsoDate),
  durationMs: Nullable(Type.Integer()),
  stats: Type.Record(Type.String(), Type.Unknown()),
  errorText: Nullable(Type.String()),
});

const exampleRun = {
  id: '6c1b2a3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  job: 'session-sweep',
  trigger: 'manual' as const,
  scheduledFor: null,
  outcome: 'ok' as const,
  startedAt: '2026-11-23T08:00:00.000Z',
  finishedAt: '2026-11-23T08:00:00.012Z',
  durationMs: 12,
  stats: { sessionsDeleted: 3, challengesDeleted: 1 },
  errorText: null,
};

const AuditRow = Type.Object({
  id: Type.String({ format: 'uuid' }),
  seqNo: Type.String({ description: 'Position of this row in the audit hash chain (decimal).' }),
  ts: IsoDate,
  actor: Nullable(Type.String()),
  actorUserId: Nullable(Type.String()),
  surface: Type.String(),
  verb: Type.String(),
  target: Type.String(),
  before: Type.Unknown(),
  after: Type.Unknown(),
  requestId: Nullable(Type.String()),
});

export function opsEndpoints(ops: OpsService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listOperatorAudit',
      title: 'Operator audit log',
      description: 'Every state-changing call: verb, target, surface, actor, before and after. Newest first; page with `cursor` (the last row\'s seqNo). A token bound to toolsets is refused (403): the log spans every toolset.',
      method: 'GET',
      path: `${V1}/honeypot/ops/audit`,
      auth: 'session-or-bearer',
      spansEveryToolset: 'the operator audit log',
      scope: 'read:empire',
      tag: 'ops',
      kind: 'read',
      uiPath: '/ops/audit',
      query: Type.Object({
        limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
        cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })),
        verb: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      }, { examples: [{ limit: 100, cursor: '120', verb: 'tenant.create' }] }),
      response: {
        schemaId: 'svc-observatory-ops-audit.v1',
        fields: { rows: Type.Array(AuditRow), nextCursor: Nullable(Type.String()) },
      },
      example: {
        schema: 'svc-observatory-ops-audit.v1',
        generatedAt,
        rows: [
          {
            id: '9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d',
            seqNo: '42',
            ts: generatedAt,
            actor: 'admin',
            actorUserId: '0b7f9a1c-5d2e-4c6b-8e3a-1f2d3c4b5a69',
            surface: 'api',
            verb: 'token.create',
            target: 'token:3f0c7d0e-2f43-4a53-9d55-6a4f0a0b9c11',
            before: null,
            after: { name: 'grafana-reader', scopes: ['read:dashboard'] },
            requestId: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e',
          },
        ],
        nextCursor: null,
      },
      handler: async ({ query }) => ops.listAudit(query),
    }),
    defineEndpoint({
      id: 'getCronHealth',
      title: 'Scheduled job health',
      description: 'For every job: its UTC cron schedule, next run and latest run; plus the most recent runs of all jobs (`limit`, default 20).',
      method: 'GET',
      path: `${V1}/honeypot/ops/cron-health`,
      auth: 'session-or-bearer',
      scope: 'read:dashboard',
      tag: 'ops',
      kind: 'read',
      uiPath: '/ops/jobs',
      query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 200, default: 20 }) }, { examples: [{ limit: 20 }] }),
      response: {
        schemaId: 'svc-observatory-ops-cron-health.v1',
        fields: {
          latestPerJob: Type.Array(
            Type.Object({
              job: Type.String(),
              description: Type.String(),
              schedule: Nullable(Type.String()),
              nextRunAt: Nullable(IsoDate),
              lastRun: Nullable(JobRunSchema),
            }),
          ),
          recent: Type.Array(JobRunSchema),
        },
      },
      example: {
        schema: 'svc-observatory-ops-cron-health.v1',
        generatedAt,
        latestPerJob: [
          {
            job: 'session-sweep',
            description: 'Deletes expired operator sessions and WebAuthn challenges.',
            schedule: '17 * * * *',
            nextRunAt: '2026-11-23T08:17:00.000Z',
            lastRun: exampleRun,
          },
        ],
        recent: [exampleRun],
      },
      handler: async ({ query }) => ops.cronHealth(query.limit),
    }),
    defineEndpoint({
      id: 'runJob',
      title: 'Run a scheduled job now',
      description: 'Runs the named job through the same code path and run record as its schedule (spec D5). A failing job answers 200 with outcome `error` and its error text; an unknown job answers 404. A token bound to toolsets is refused (403): every job spans every toolset.',
      method: 'POST',
      path: `${V1}/ops/jobs/{job}/run`,
      auth: 'session-or-bearer',
      // Every job works over the whole fleet (a snapshot, the forecaster, the rollups): none is one toolset's.
      spansEveryToolset: 'a job run',
      // Jobs run on demand as on schedule: a snapshot, a drill's restore or a forecast take minutes.
      timeoutMs: LONG_WORK_TIMEOUT_MS,
      scope: 'write:alerts',
      tag: 'ops',
      kind: 'write',
      uiPath: '/ops/jobs',
      params: Type.Object({ job: Type.String({ pattern: '^[a-z0-9-]{1,64}$' }) }, { examples: [{ job: 'session-sweep' }] }),
      body: EmptyBody,
      response: { schemaId: 'svc-ops-job-run.v1', fields: { job: Type.String(), run: JobRunSchema } },
      example: { schema: 'svc-ops-job-run.v1', generatedAt, job: 'session-sweep', run: exampleRun },
      handler: async ({ params, principal, requestId }) => {
        const run = await ops.runJob(params.job, principal!, requestId);
        return { job: params.job, run };
      },
    }),
    defineEndpoint({
      id: 'getIntegrationsStatus',
      title: 'Integration status',
      description: 'Which outbound integrations (chat webhook, metrics forwarder, CI dispatch, CSV export) are configured. Secret values are never returned.',
      method: 'GET',
      path: `${V1}/integrations/status`,
      auth: 'session-or-bearer',
      scope: 'read:alerts',
      tag: 'integrations',
      kind: 'read',
      uiPath: '/settings/integrations',
      response: {
        schemaId: 'svc-observatory-integrations-status.v1',
        fields: {
          integrations: Type.Array(
            Type.Object({
              id: Type.Union([Type.Literal('chat'), Type.Literal('metrics'), Type.Literal('ci_dispatch'), Type.Literal('csv_since')]),
              configured: Type.Boolean(),
              notes: Type.String(),
            }),
          ),
        },
      },
      example: {
        schema: 'svc-observatory-integrations-status.v1',
        generatedAt,
        integrations: [{ id: 'chat', configured: false, notes: 'Set OBSERVATORY_CHAT_WEBHOOK_URL to a chat-service incoming webhook.' }],
      },
      handler: async () => ({ integrations: ops.integrations() }),
    }),
  ];
}
