import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, PageLimitParam, type Principal, StringEnum, TimeCursorParam, V1 } from '../../../platform/http/registry.ts';
import { Destinations } from '../../../platform/outbound/destinations.ts';
import { forbidden } from '../../../platform/errors.ts';
import { LOOKBACK_DAYS_DEFAULT, LOOKBACK_DAYS_MAX, type RunService, WINDOW_MINUTES_DEFAULT, WINDOW_MINUTES_MAX } from '../runs/service.ts';
import { EXAMPLE_EVENT_ID, EXAMPLE_PROPOSAL_ID, EXAMPLE_RUN_ID, exampleProposal, generatedAt, MODEL_CALL, Proposal, PROPOSAL_KINDS, TAG, UI_PATH, UI_PROPOSAL, UI_RUNS } from '../schemas.ts';
import { BULK_IDS_MAX, PROPOSAL_STATUSES, PROPOSALS_LIMIT_DEFAULT, PROPOSALS_LIMIT_MAX, type ProposalService } from './service.ts';

/** Triage proposals: the three agents' runs, the lists, decisions and bulk acceptance (spec B group 2; docs/triage/README.md). */

const who = (principal: Principal | null) => principal as Principal;
/** A run reads and proposes across the whole fleet: a credential bound to toolsets may not start one. */
function assertFleetWide(principal: Principal | null) {
  if (principal?.toolsets) throw forbidden('This token is bound to toolsets; a triage run reads the whole fleet, so it needs a credential that is not.');
}
const StatusParam = Type.Optional(StringEnum([...PROPOSAL_STATUSES, 'all'] as const, { default: 'pending', description: 'Default `pending`; `all` lists every status.' }));
const ListQuery = (withKind: boolean) =>
  Type.Object(
    {
      ...(withKind ? { kind: Type.Optional(StringEnum(PROPOSAL_KINDS)) } : {}),
      status: StatusParam,
      toolset: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
      cursor: TimeCursorParam,
      limit: PageLimitParam(PROPOSALS_LIMIT_DEFAULT, PROPOSALS_LIMIT_MAX),
    },
    { examples: [{ ...(withKind ? { kind: 'incident' } : {}), status: 'pending', toolset: 'crawler-lab', cursor: '2026-11-26T12:00:00.000Z', limit: 50 }] },
  );
const ListFields = { proposals: Type.Array(Proposal), nextCursor: Nullable(Type.String()) };
const WindowMinutes = Type.Integer({ minimum: 1, maximum: WINDOW_MINUTES_MAX, default: WINDOW_MINUTES_DEFAULT, description: `Minutes before now the agent reads (default ${WINDOW_MINUTES_DEFAULT}).` });
const Stub = Type.Boolean({ default: false, description: 'true returns the deterministic empty pass: the stub run id, nothing read, nothing written.' });
const RunFields = {
  ok: Type.Boolean(),
  runId: Type.String({ format: 'uuid' }),
  proposalCount: Type.Integer({ description: 'Proposals stored pending.' }),
  autoRejected: Type.Integer({ description: 'Proposals rejected automatically (docs/triage/README.md, "Automatic rejection").' }),
};
const RUN_ERRORS = 'At or over the month\'s model budget the non-safety agents are deferred: 429 `budget-exhausted` with Retry-After. A live model that fails after its retries is 502 `model-unavailable` (the run is recorded).';

export function proposalEndpoints(deps: { proposals: ProposalService; runs: RunService }): Endpoint[] {
  const { proposals, runs } = deps;
  const list = (id: string, title: string, path: string, kind: (typeof PROPOSAL_KINDS)[number] | null, schemaId: string, example: object, uiPath: string) =>
    defineEndpoint({
      id,
      title,
      description: `${kind === null ? 'Proposals of every kind' : `The ${kind} proposals`}, newest first, \`pending\` unless \`status\` says otherwise, with a cursor. A token bound to toolsets sees only proposals of its toolsets that cite no event of another toolset.`,
      method: 'GET',
      path,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath,
      query: ListQuery(kind === null),
      response: { schemaId, fields: ListFields },
      example: { schema: schemaId, generatedAt, proposals: [example], nextCursor: null },
      handler: async ({ query, principal }) => proposals.list(principal, { ...(query as object), ...(kind === null ? {} : { kind }) }),
    });

  return [
    list('listTriageProposals', 'List triage proposals', `${V1}/empire/triage/proposals`, null, 'svc-triage-proposals.v1', exampleProposal, UI_PATH),
    list('listTriageInvestigations', 'List investigation proposals', `${V1}/empire/triage/investigations`, 'investigation', 'svc-triage-investigations.v1', {
      ...exampleProposal,
      kind: 'investigation',
      agent: 'investigation-proposer',
      agentVersion: 'investigation-proposer@1.1.0',
      title: 'LIAR cluster on edge-eu',
      payload: {
        kind: 'investigation',
        toolset: 'honeypot',
        name: 'LIAR cluster on edge-eu',
        rationale: ['180 LIAR events in 15 minutes.', '4 fingerprints share one JA4.', 'Two tarpits were triggered.'],
        filters: { toolset: 'honeypot', tenant: 'edge-eu', eventType: null, uaClass: 'LIAR', fingerprintId: null, focalEventId: null, from: '2026-11-26T07:45:00.000Z', to: '2026-11-26T08:00:00.000Z' },
        evidenceEventIds: [EXAMPLE_EVENT_ID],
      },
    }, UI_RUNS),
    list('listTriageRules', 'List rule proposals', `${V1}/empire/triage/rules`, 'alert-rule', 'svc-triage-rules.v1', {
      ...exampleProposal,
      kind: 'alert-rule',
      agent: 'rule-proposer',
      agentVersion: 'rule-proposer@1.1.0',
      title: 'crawler-lab: ≥ 300 events an hour',
      evidenceEventIds: [],
      payload: { kind: 'alert-rule', toolset: 'crawler-lab', name: 'crawler-lab: ≥ 300 events an hour', predicate: { kind: 'empire_count_gte', count: 300, windowMinutes: 60 }, rationale: 'Caught 3 of 4 incidents, 1 false alarm.' },
      backtest: { method: 'hourly-count', lookbackDays: 30, TP: 3, FP: 1, meanLeadTimeSec: 5400, incidents: 4, caught: 3, firings: 4 },
    }, UI_RUNS),
    defineEndpoint({
      id: 'readTriageProposal',
      title: 'Read a triage proposal',
      description: 'One proposal of any kind and status. 404 for an unknown id (or one out of the token\'s reach: of another toolset, or citing another toolset\'s events).',
      method: 'GET',
      path: `${V1}/empire/triage/proposals/{id}`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PROPOSAL,
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { examples: [{ id: EXAMPLE_PROPOSAL_ID }] }),
      response: { schemaId: 'svc-triage-proposal.v1', fields: { proposal: Proposal } },
      example: { schema: 'svc-triage-proposal.v1', generatedAt, proposal: exampleProposal },
      handler: async ({ params, principal }) => proposals.read(principal, params.id),
    }),
    defineEndpoint({
      id: 'runTriage',
      title: 'Run the incident classifier',
      description:
        `Runs the incident classifier over the last \`windowMinutes\` (default ${WINDOW_MINUTES_DEFAULT}): event-rate spikes against the forecast, silent toolsets, liar floods and tarpits, cross-toolset tenants. Each proposal is stored \`pending\` or \`auto-rejected\`; the run keeps its replay envelope (\`GET triage/replay/{runId}\`). ` +
        'The classifier is the safety agent: the budget never defers it. A live model that fails after its retries is 502 `model-unavailable`.',
      method: 'POST',
      path: `${V1}/empire/triage/proposals`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_RUNS,
      ...MODEL_CALL,
      errors: [502],
      body: Type.Object({ windowMinutes: Type.Optional(WindowMinutes), stub: Type.Optional(Stub) }, { additionalProperties: false, examples: [{ windowMinutes: 15, stub: false }] }),
      response: { schemaId: 'svc-triage-run.v1', fields: { ...RunFields, windowStart: IsoDate, windowEnd: IsoDate, agentVersion: Type.String() } },
      example: { schema: 'svc-triage-run.v1', generatedAt, ok: true, runId: EXAMPLE_RUN_ID, proposalCount: 2, autoRejected: 1, windowStart: '2026-11-26T07:45:00.000Z', windowEnd: generatedAt, agentVersion: 'incident-classifier@1.1.0' },
      handler: async ({ body, principal }) => {
        assertFleetWide(principal);
        return runs.triage({ ...body, trigger: 'api' });
      },
    }),
    defineEndpoint({
      id: 'runTriageInvestigations',
      title: 'Run the investigation proposer',
      description: `Proposes up to three cluster-level investigations of the last \`windowMinutes\`, or one narrowed to \`focalEventId\` (an empire event id; 404 when unknown) and its lineage. Accepting one creates a saved view. ${RUN_ERRORS}`,
      method: 'POST',
      path: `${V1}/empire/triage/investigations`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_RUNS,
      ...MODEL_CALL,
      errors: [404, 429, 502],
      body: Type.Object(
        { focalEventId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })), windowMinutes: Type.Optional(WindowMinutes), stub: Type.Optional(Stub) },
        { additionalProperties: false, examples: [{ focalEventId: EXAMPLE_EVENT_ID, windowMinutes: 60, stub: false }] },
      ),
      response: { schemaId: 'svc-triage-investigation-run.v1', fields: { ...RunFields, windowStart: IsoDate, windowEnd: IsoDate, focalEventId: Nullable(Type.String()) } },
      example: { schema: 'svc-triage-investigation-run.v1', generatedAt, ok: true, runId: EXAMPLE_RUN_ID, proposalCount: 1, autoRejected: 0, windowStart: '2026-11-26T07:00:00.000Z', windowEnd: generatedAt, focalEventId: EXAMPLE_EVENT_ID },
      handler: async ({ body, principal }) => {
        assertFleetWide(principal);
        return runs.investigations({ ...body, trigger: 'api' });
      },
    }),
    defineEndpoint({
      id: 'runTriageRules',
      title: 'Run the rule proposer',
      description:
        `Proposes empire alert rules from the last \`lookbackDays\` (1 to ${LOOKBACK_DAYS_MAX}, default ${LOOKBACK_DAYS_DEFAULT}) of hourly event counts and resolved incidents; each proposal carries its backtest (TP, FP, meanLeadTimeSec). The 10 newest accepted and 10 newest rejected rule decisions are fed back as examples. ${RUN_ERRORS}`,
      method: 'POST',
      path: `${V1}/empire/triage/rules`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_RUNS,
      ...MODEL_CALL,
      errors: [429, 502],
      body: Type.Object(
        { lookbackDays: Type.Optional(Type.Integer({ minimum: 1, maximum: LOOKBACK_DAYS_MAX, default: LOOKBACK_DAYS_DEFAULT })), stub: Type.Optional(Stub) },
        { additionalProperties: false, examples: [{ lookbackDays: 30, stub: false }] },
      ),
      response: { schemaId: 'svc-triage-rule-run.v1', fields: { ...RunFields, lookbackDays: Type.Integer(), agentVersion: Type.String() } },
      example: { schema: 'svc-triage-rule-run.v1', generatedAt, ok: true, runId: EXAMPLE_RUN_ID, proposalCount: 1, autoRejected: 0, lookbackDays: 30, agentVersion: 'rule-proposer@1.1.0' },
      handler: async ({ body, principal }) => {
        assertFleetWide(principal);
        return runs.rules({ ...body, trigger: 'api' });
      },
    }),
    defineEndpoint({
      id: 'decideTriageProposal',
      title: 'Accept or reject a proposal',
      description:
        'Decides a pending proposal. Accepting an incident opens it (source `triage`) and seeds its postmortem with the proposal\'s draft; an investigation creates a saved view; a rule creates an empire alert rule with `destinations` (required then: 400 `destinations-required`; an invalid predicate is 400 `invalid-predicate`). ' +
        'A decided proposal cannot be decided again (409 `conflict`). The decision, what it created and their audit rows (`triage.decide`) commit together. 404 for an unknown id, and for a bound token, for a proposal of another toolset or citing another toolset\'s events.',
      method: 'POST',
      path: `${V1}/empire/triage/decide`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_PATH,
      errors: [404, 409],
      body: Type.Object(
        {
          id: Type.String({ minLength: 1, maxLength: 64 }),
          accept: Type.Boolean(),
          destinations: Type.Optional(Destinations),
          notes: Type.Optional(Type.String({ maxLength: 2000 })),
        },
        { additionalProperties: false, examples: [{ id: EXAMPLE_PROPOSAL_ID, accept: true, destinations: [{ kind: 'webhook', url: 'https://alerts.example.com/observatory', secret: 'whsec-example-0123456789abcdef' }], notes: 'Confirmed with the crawler-lab owners.' }] },
      ),
      response: {
        schemaId: 'svc-triage-decide.v1',
        fields: {
          ok: Type.Boolean(),
          id: Type.String({ format: 'uuid' }),
          decision: StringEnum(['accepted', 'rejected'] as const),
          openedIncidentId: Nullable(Type.String({ format: 'uuid' })),
          createdSavedViewId: Nullable(Type.String({ format: 'uuid' })),
          createdAlertRuleId: Nullable(Type.String({ format: 'uuid' })),
        },
      },
      example: { schema: 'svc-triage-decide.v1', generatedAt, ok: true, id: EXAMPLE_PROPOSAL_ID, decision: 'accepted', openedIncidentId: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f', createdSavedViewId: null, createdAlertRuleId: null },
      handler: async ({ body, principal, requestId }) => proposals.decide({ principal: who(principal), requestId }, body),
    }),
    defineEndpoint({
      id: 'bulkAcceptTriageRules',
      title: 'Accept rule proposals in bulk',
      description: `Accepts up to ${BULK_IDS_MAX} rule proposals, each becoming an alert rule with \`destinations\`. Each id is its own transaction: a failing id (not-found, also for a proposal out of a bound token's reach; not-a-rule-proposal, conflict when decided, invalid-predicate) is reported in \`results\` and the batch goes on.`,
      method: 'POST',
      path: `${V1}/empire/triage/rules/bulk-accept`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_PATH,
      body: Type.Object(
        {
          ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: BULK_IDS_MAX }),
          destinations: Destinations,
          notes: Type.Optional(Type.String({ maxLength: 2000 })),
        },
        { additionalProperties: false, examples: [{ ids: [EXAMPLE_PROPOSAL_ID], destinations: [{ kind: 'webhook', url: 'https://alerts.example.com/observatory', secret: 'whsec-example-0123456789abcdef' }], notes: 'Backtests look good.' }] },
      ),
      response: {
        schemaId: 'svc-triage-bulk-accept.v1',
        fields: {
          ok: Type.Boolean(),
          acceptedCount: Type.Integer(),
          results: Type.Array(
            Type.Object({ id: Type.String(), ok: Type.Boolean(), createdAlertRuleId: Nullable(Type.String({ format: 'uuid' })), reason: Nullable(Type.String()), human: Nullable(Type.String()) }),
          ),
        },
      },
      example: {
        schema: 'svc-triage-bulk-accept.v1',
        generatedAt,
        ok: true,
        acceptedCount: 1,
        results: [
          { id: EXAMPLE_PROPOSAL_ID, ok: true, createdAlertRuleId: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a', reason: null, human: null },
          { id: '1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e', ok: false, createdAlertRuleId: null, reason: 'conflict', human: 'Proposal 1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e is rejected; a decided proposal cannot be decided again.' },
        ],
      },
      handler: async ({ body, principal, requestId }) => proposals.bulkAccept({ principal: who(principal), requestId }, body),
    }),
  ];
}
