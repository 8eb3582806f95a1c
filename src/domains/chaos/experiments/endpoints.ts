import { Type } from '@sinclair/typebox';
import { checkedByEndpoint } from '../../../platform/http/openapi.ts';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, PageLimitParam, type Principal, StringEnum, TimeCursorParam, V1 } from '../../../platform/http/registry.ts';
import { FAULT_CATEGORIES } from '../../../platform/faults/index.ts';
import { CHAOS_KINDS } from '../kinds.ts';
import {
  COOLDOWN_DEFAULT,
  COOLDOWN_MAX,
  COOLDOWN_MIN,
  DESCRIPTION_MAX,
  type ExperimentService,
  type ExperimentView,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  SEVERITIES,
  SEVERITY_DEFAULT,
  SLUG_PATTERN,
  STATUSES,
  TARGET_MAX,
} from './service.ts';

/** The chaos experiment registry (spec B group 5 `chaos/experiments` rows; docs/chaos/README.md, "Experiments"). */

const generatedAt = '2026-11-28T08:00:00.000Z';
export const CHAOS_TAG = 'chaos';
const UI_PATH = '/chaos/experiments';
/**
 * Completes "… spans every toolset" (docs/operations.md, "Toolset binding"): an experiment acts on
 * the whole deployment, every toolset's traffic included, and its target and description are free
 * text that may name any route; like the failover drills, chaos is fleet-wide by nature.
 */
export const EXPERIMENTS_SPAN = 'the chaos experiment registry';

export const Experiment = Type.Object({
  id: Type.String({ format: 'uuid' }),
  slug: Type.String(),
  kind: StringEnum(CHAOS_KINDS),
  target: Type.String({ description: 'What the kind acts on (docs/chaos/README.md, "Kinds and targets").' }),
  description: Type.String(),
  blastRadius: StringEnum(FAULT_CATEGORIES, { description: 'The kind\'s category: what OBSERVATORY_CHAOS_ALLOW must list (or `*`) for it to run.' }),
  recoverySloSec: Type.Integer({ minimum: 1, description: 'The recovery objective: a run whose measured recovery takes longer ends `sla-breach`.' }),
  cooldownMinutes: Type.Integer({ minimum: COOLDOWN_MIN, maximum: COOLDOWN_MAX, description: 'The schedule runs it again no sooner than this after its last run.' }),
  severity: StringEnum(SEVERITIES),
  status: StringEnum(STATUSES),
  ownerUserId: Nullable(Type.String({ description: 'The operator who registered it.' })),
  createdAt: IsoDate,
  updatedAt: IsoDate,
});

export const exampleExperiment: ExperimentView = {
  id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  slug: 'search-latency',
  kind: 'synthetic-latency',
  target: 'searchTopics',
  description: 'Slow topic search down for 30 s and check it answers in time again within the objective.',
  blastRadius: 'http',
  recoverySloSec: 30,
  cooldownMinutes: 60,
  severity: 'minor',
  status: 'active',
  ownerUserId: 'b6a0c1d2-3e4f-4a5b-8c6d-7e8f9a0b1c2d',
  createdAt: generatedAt,
  updatedAt: generatedAt,
};

const REASONS = 'invalid-slug, slug-taken, invalid-kind, invalid-target, unknown-target, invalid-recovery-slo, invalid-cooldown, invalid-severity, invalid-description';
const ExperimentOutcomeFields = {
  ok: Type.Boolean({ description: 'false: the registration was refused (HTTP 400) and `reason`, `human` say why.' }),
  experiment: Type.Optional(Experiment),
  reason: Type.Optional(Type.String({ description: `When ok is false: ${REASONS}.` })),
  human: Type.Optional(Type.String()),
};
const OUTCOME_SCHEMA = 'svc-chaos-experiment.v1';

const ExperimentId = Type.Object({ id: Type.String({ format: 'uuid' }) }, { examples: [{ id: exampleExperiment.id }] });
const who = (principal: Principal | null) => principal as Principal;

/** pause, resume and retire: one shape, one audit verb each. */
function transitionEndpoint(
  experiments: ExperimentService,
  action: 'pause' | 'resume' | 'retire',
  text: { id: string; title: string; description: string; status: ExperimentView['status'] },
): Endpoint {
  return defineEndpoint({
    id: text.id,
    title: text.title,
    description: text.description,
    method: 'POST',
    path: `${V1}/chaos/experiments/{id}/${action}`,
    auth: 'session-or-bearer',
    spansEveryToolset: EXPERIMENTS_SPAN,
    scope: 'write:alerts',
    tag: CHAOS_TAG,
    kind: 'write',
    uiPath: UI_PATH,
    errors: action === 'retire' ? [] : [409],
    params: ExperimentId,
    body: Type.Object({}, { additionalProperties: false, examples: [{}] }),
    response: { schemaId: OUTCOME_SCHEMA, fields: ExperimentOutcomeFields },
    example: { schema: OUTCOME_SCHEMA, generatedAt, ok: true, experiment: { ...exampleExperiment, status: text.status } },
    handler: async ({ params, principal, requestId }) => experiments[action]({ principal: who(principal), requestId }, params.id),
  });
}

export function experimentEndpoints(experiments: ExperimentService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listChaosExperiments',
      title: 'List chaos experiments',
      description:
        `Registered experiments newest first, of one kind and one status when given. \`cursor\` is the nextCursor of the previous page (or an ISO 8601 createdAt: rows strictly older); \`limit\` 1 to ${LIST_LIMIT_MAX}, default ${LIST_LIMIT_DEFAULT}. A token bound to toolsets is refused (403).`,
      method: 'GET',
      path: `${V1}/chaos/experiments`,
      auth: 'session-or-bearer',
      spansEveryToolset: EXPERIMENTS_SPAN,
      scope: 'read:empire',
      tag: CHAOS_TAG,
      kind: 'read',
      uiPath: UI_PATH,
      query: Type.Object(
        {
          cursor: TimeCursorParam,
          kind: Type.Optional(StringEnum(CHAOS_KINDS)),
          status: Type.Optional(StringEnum(STATUSES)),
          limit: PageLimitParam(LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX),
        },
        { examples: [{ cursor: generatedAt, kind: 'synthetic-latency', status: 'active', limit: 50 }] },
      ),
      response: { schemaId: 'svc-chaos-experiments.v1', fields: { experiments: Type.Array(Experiment), nextCursor: Nullable(Type.String()) } },
      example: { schema: 'svc-chaos-experiments.v1', generatedAt, experiments: [exampleExperiment], nextCursor: null },
      handler: async ({ query }) => experiments.list(query),
    }),
    defineEndpoint({
      id: 'registerChaosExperiment',
      title: 'Register a chaos experiment',
      description:
        'Registers an experiment, active at once (the chaos-schedule job may pick it; docs/chaos/README.md). `blastRadius` is the kind\'s category. ' +
        'recoverySloSec defaults to the category\'s default and is capped at the category\'s maximum window; cooldownMinutes defaults to ' +
        `${COOLDOWN_DEFAULT}, severity to ${SEVERITY_DEFAULT}. A request breaking a rule answers 400 with ok false, reason (${REASONS}) and human. Audited as chaos.register. A token bound to toolsets is refused (403).`,
      method: 'POST',
      path: `${V1}/chaos/experiments`,
      auth: 'session-or-bearer',
      spansEveryToolset: EXPERIMENTS_SPAN,
      scope: 'write:alerts',
      tag: CHAOS_TAG,
      kind: 'write',
      uiPath: UI_PATH,
      refusedStatus: 400,
      body: Type.Object(
        {
          // Checked by the endpoint, so a missing or bad one is refused with ok false (spec C, Errors item 3); the documents say required.
          slug: checkedByEndpoint(Type.Optional(Type.String({ description: `1 to 128 characters of a-z, 0-9 and - (${SLUG_PATTERN}); unique.` }))),
          kind: checkedByEndpoint(Type.Optional(Type.String({ description: `One of ${CHAOS_KINDS.join(', ')}.` }))),
          target: checkedByEndpoint(Type.Optional(Type.String({ description: `1 to ${TARGET_MAX} characters naming what the kind acts on (docs/chaos/README.md, "Kinds and targets").` }))),
          description: Type.Optional(Type.String({ description: `At most ${DESCRIPTION_MAX} characters.` })),
          recoverySloSec: Type.Optional(Type.Number({ description: 'A whole number of seconds, at least 1; capped at the category\'s maximum window. Default: the category\'s.' })),
          cooldownMinutes: Type.Optional(Type.Number({ description: `A whole number from ${COOLDOWN_MIN} to ${COOLDOWN_MAX}; default ${COOLDOWN_DEFAULT}.` })),
          severity: Type.Optional(Type.String({ description: `One of ${SEVERITIES.join(', ')}; default ${SEVERITY_DEFAULT}.` })),
        },
        {
          additionalProperties: false,
          examples: [
            {
              slug: exampleExperiment.slug,
              kind: exampleExperiment.kind,
              target: exampleExperiment.target,
              description: exampleExperiment.description,
              recoverySloSec: 30,
              cooldownMinutes: 60,
              severity: 'minor',
            },
          ],
        },
      ),
      response: { schemaId: OUTCOME_SCHEMA, fields: ExperimentOutcomeFields },
      example: { schema: OUTCOME_SCHEMA, generatedAt, ok: true, experiment: exampleExperiment },
      handler: async ({ body, principal, requestId }) => experiments.register({ principal: who(principal), requestId }, body),
    }),
    transitionEndpoint(experiments, 'pause', {
      id: 'pauseChaosExperiment',
      title: 'Pause a chaos experiment',
      description:
        'active → paused: the schedule leaves it alone until it is resumed (a run already open is not stopped; freeze for that). A paused one answers unchanged; a retired one is 409 conflict; an unknown id 404. Audited as chaos.pause. A token bound to toolsets is refused (403).',
      status: 'paused',
    }),
    transitionEndpoint(experiments, 'resume', {
      id: 'resumeChaosExperiment',
      title: 'Resume a chaos experiment',
      description: 'paused → active. An active one answers unchanged; a retired one is 409 conflict; an unknown id 404. Audited as chaos.resume. A token bound to toolsets is refused (403).',
      status: 'active',
    }),
    transitionEndpoint(experiments, 'retire', {
      id: 'retireChaosExperiment',
      title: 'Retire a chaos experiment',
      description:
        'active or paused → retired, for good: it never runs again and cannot be paused or resumed; its runs stay listed. A retired one answers unchanged (nothing audited); an unknown id 404. Audited as chaos.retire. A token bound to toolsets is refused (403).',
      status: 'retired',
    }),
  ];
}
