import { api, unwrap } from '../../../api/client';

/** The chaos reads and writes, typed from the served OpenAPI document. */
export const CHAOS_KINDS = ['synthetic-latency', 'bridge-token-rotate-rehearsal', 'cron-skip-one', 'feature-flag-flip', 'prisma-readonly-window'] as const;
export type ChaosKind = (typeof CHAOS_KINDS)[number];
export const EXPERIMENT_STATUSES = ['active', 'paused', 'retired'] as const;
export type ExperimentStatus = (typeof EXPERIMENT_STATUSES)[number];
export const RUN_OUTCOMES = ['ok', 'sla-breach', 'aborted', 'partial'] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];
export const SEVERITIES = ['major', 'minor'] as const;
export type ChaosSeverity = (typeof SEVERITIES)[number];

/** What an experiment's target names, per kind (docs/chaos/README.md has the table). */
export const TARGET_MEANS: Record<ChaosKind, string> = {
  'synthetic-latency': 'An endpoint id (searchTopics) or a path prefix starting with / (/v1/agent-api/).',
  'bridge-token-rotate-rehearsal': 'A region key, or * for every active peer region.',
  'cron-skip-one': 'The name of a scheduled job, as Ops → Jobs lists it.',
  'feature-flag-flip': 'A runtime flag name.',
  'prisma-readonly-window': 'The database: primary.',
};

export const loadExperiments = (filter: { kind: ChaosKind | null; status: ExperimentStatus | null; cursor: string | undefined; limit?: number }) =>
  unwrap(
    api.GET('/api/observatory/v1/chaos/experiments', {
      params: {
        query: {
          ...(filter.kind ? { kind: filter.kind } : {}),
          ...(filter.status ? { status: filter.status } : {}),
          ...(filter.cursor ? { cursor: filter.cursor } : {}),
          ...(filter.limit ? { limit: filter.limit } : {}),
        },
      },
    }),
  );
export type Experiment = Awaited<ReturnType<typeof loadExperiments>>['experiments'][number];

export interface Registration {
  slug: string;
  kind: ChaosKind;
  target: string;
  description?: string;
  recoverySloSec?: number;
  cooldownMinutes?: number;
  severity?: ChaosSeverity;
}
export const registerExperiment = (body: Registration) => unwrap(api.POST('/api/observatory/v1/chaos/experiments', { body }));

export type Move = 'pause' | 'resume' | 'retire';
export const moveExperiment = (id: string, move: Move) => {
  const params = { params: { path: { id } }, body: {} };
  if (move === 'pause') return unwrap(api.POST('/api/observatory/v1/chaos/experiments/{id}/pause', params));
  if (move === 'resume') return unwrap(api.POST('/api/observatory/v1/chaos/experiments/{id}/resume', params));
  return unwrap(api.POST('/api/observatory/v1/chaos/experiments/{id}/retire', params));
};
export const runExperimentNow = (id: string) => unwrap(api.POST('/api/observatory/v1/chaos/experiments/{id}/run', { params: { path: { id } }, body: {} }));

export const loadRuns = (filter: { experimentId: string | null; outcome: RunOutcome | null; cursor: string | undefined }) =>
  unwrap(
    api.GET('/api/observatory/v1/chaos/runs', {
      params: {
        query: {
          ...(filter.experimentId ? { experimentId: filter.experimentId } : {}),
          ...(filter.outcome ? { outcome: filter.outcome } : {}),
          ...(filter.cursor ? { cursor: filter.cursor } : {}),
        },
      },
    }),
  );
export type Run = Awaited<ReturnType<typeof loadRuns>>['runs'][number];

export const loadFreeze = () => unwrap(api.GET('/api/observatory/v1/chaos/freeze'));
export type Freeze = Awaited<ReturnType<typeof loadFreeze>>['freeze'];
export const setFreeze = (frozen: boolean, reason: string) => unwrap(api.POST('/api/observatory/v1/chaos/freeze', { body: { frozen, ...(reason ? { reason } : {}) } }));

/** Fails the console's build when the service's list of choices and the page's differ. */
type SameChoices<Listed extends string, Served extends string> = [Exclude<Served, Listed>, Exclude<Listed, Served>] extends [never, never] ? true : never;
export const kindsAreTheServices: SameChoices<ChaosKind, Experiment['kind']> = true;
export const statusesAreTheServices: SameChoices<ExperimentStatus, Experiment['status']> = true;
export const severitiesAreTheServices: SameChoices<ChaosSeverity, Experiment['severity']> = true;
export const outcomesAreTheServices: SameChoices<RunOutcome, Run['outcome']> = true;
