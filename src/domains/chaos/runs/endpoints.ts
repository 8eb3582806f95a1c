import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, PageLimitParam, type Principal, StringEnum, TimeCursorParam, V1 } from '../../../platform/http/registry.ts';
import { CHAOS_TAG } from '../experiments/endpoints.ts';
import { CHAOS_KINDS } from '../kinds.ts';
import { RUNS_LIMIT_DEFAULT, RUNS_LIMIT_MAX, type RunService } from './service.ts';

/** Chaos runs (spec B group 5 `chaos/runs`; docs/chaos/README.md): the record, and a run started by hand. */

const generatedAt = '2026-11-28T10:00:00.000Z';
const RUNS_SPAN = 'the chaos runs, which act on the whole deployment';
const OUTCOMES = ['ok', 'sla-breach', 'aborted', 'partial'] as const;

const Run = Type.Object({
  id: Type.String({ format: 'uuid' }),
  experimentId: Type.String({ format: 'uuid' }),
  experimentSlug: Nullable(Type.String()),
  experimentKind: Nullable(StringEnum(CHAOS_KINDS)),
  target: Type.String({ description: 'The experiment\'s target when the run started.' }),
  trigger: StringEnum(['schedule', 'manual'] as const),
  phase: StringEnum(['injected', 'recovering', 'ended'] as const, {
    description: '`injected`: the fault is on; `recovering`: undone, the kind\'s probe not green yet; `ended`.',
  }),
  startedAt: IsoDate,
  windowEndsAt: IsoDate,
  endedAt: Nullable(IsoDate),
  outcome: StringEnum(OUTCOMES, { description: '`partial` with endedAt null while the run is in progress.' }),
  recoverySloSec: Type.Integer({ minimum: 1 }),
  observedRecoverySec: Nullable(Type.Number({ description: 'From the window\'s end until the kind\'s health probe was green again.' })),
  errorText: Nullable(Type.String()),
  abortReason: Nullable(Type.String()),
  measurements: Type.Record(Type.String(), Type.Unknown(), {
    description: 'What the run measured: `inject` (the fault seen during the window, e.g. duringWindowMs, writeRefusedDuringWindow, stagedAnswered), `skipped` (the job run skipped), `probe` (the probe that turned green).',
  }),
});
const exampleRun = {
  id: '3a1f6c2e-8b4d-4e5f-9a6b-7c8d9e0f1a2b',
  experimentId: '5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a',
  experimentSlug: 'search-latency',
  experimentKind: 'synthetic-latency',
  target: 'searchTopics',
  trigger: 'schedule',
  phase: 'ended',
  startedAt: '2026-11-28T09:47:00.000Z',
  windowEndsAt: '2026-11-28T09:47:30.000Z',
  endedAt: '2026-11-28T09:47:30.412Z',
  outcome: 'ok',
  recoverySloSec: 30,
  observedRecoverySec: 0.412,
  errorText: null,
  abortReason: null,
  measurements: { inject: { injectedMs: 2000, probeUrl: '/v1/agent-api/search?q=crawler', duringWindowMs: 2004, duringWindowStatus: 200 }, probe: { afterWindowMs: 3, afterWindowStatus: 200 } },
};

const who = (principal: Principal | null) => principal as Principal;

export function runEndpoints(runs: RunService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listChaosRuns',
      title: 'List chaos runs',
      description:
        'Runs of chaos experiments, newest first, with what each measured: the fault seen during its window, the recovery observed after it against the experiment\'s objective, and its outcome (ok, sla-breach, aborted, partial). Filters by experiment and outcome; cursor paging.',
      method: 'GET',
      path: `${V1}/chaos/runs`,
      auth: 'session-or-bearer',
      spansEveryToolset: RUNS_SPAN,
      scope: 'read:empire',
      tag: CHAOS_TAG,
      kind: 'read',
      uiPath: '/chaos/runs',
      query: Type.Object(
        {
          cursor: TimeCursorParam,
          experimentId: Type.Optional(Type.String({ maxLength: 64 })),
          outcome: Type.Optional(StringEnum(OUTCOMES)),
          limit: PageLimitParam(RUNS_LIMIT_DEFAULT, RUNS_LIMIT_MAX),
        },
        { examples: [{ experimentId: '5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a', outcome: 'ok', cursor: '2026-11-28T10:00:00.000Z', limit: 20 }] },
      ),
      response: { schemaId: 'svc-chaos-runs.v1', fields: { runs: Type.Array(Run), nextCursor: Nullable(Type.String()) } },
      example: { schema: 'svc-chaos-runs.v1', generatedAt, runs: [exampleRun], nextCursor: null },
      handler: async ({ query }) => runs.list(query),
    }),
    defineEndpoint({
      id: 'runChaosExperiment',
      title: 'Run a chaos experiment now',
      description:
        'Starts a run of the experiment now, through the same gates as the chaos-schedule job except its cooldown: the experiment is active, its blast radius is in OBSERVATORY_CHAOS_ALLOW, chaos is not frozen, no critical drift event is unresolved and no other run is open. A gate that holds answers 409 naming it. The run ends by itself (its window, then the recovery probe); follow it at GET {v1}/chaos/runs. 404 for an unknown experiment. Audited as chaos.run.',
      method: 'POST',
      path: `${V1}/chaos/experiments/{id}/run`,
      auth: 'session-or-bearer',
      spansEveryToolset: RUNS_SPAN,
      scope: 'write:alerts',
      tag: CHAOS_TAG,
      kind: 'write',
      uiPath: '/chaos/runs',
      errors: [409],
      params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { examples: [{ id: '5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a' }] }),
      body: Type.Object({}, { examples: [{}] }),
      response: { schemaId: 'svc-chaos-run.v1', fields: { ok: Type.Boolean(), run: Run } },
      example: { schema: 'svc-chaos-run.v1', generatedAt, ok: true, run: { ...exampleRun, trigger: 'manual', phase: 'injected', endedAt: null, outcome: 'partial', observedRecoverySec: null, measurements: {} } },
      handler: async ({ params, principal, requestId }) => runs.startByHand(params.id, { principal: who(principal), requestId }),
    }),
  ];
}
