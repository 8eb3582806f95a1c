import { Type } from '@sinclair/typebox';
import { IsoDate, LONG_WORK_TIMEOUT_MS, Nullable, StringEnum } from '../../platform/http/registry.ts';
import { POSTMORTEM_SECTIONS } from './agents/types.ts';
import { PROPOSAL_STATUSES } from './proposals/service.ts';

/** Response shapes the triage endpoints share, and the examples they show (docs/triage/README.md). */

export const TAG = 'triage';
/** The console's triage pages (under /console) that show these endpoints: the inbox, one proposal, runs, metrics and the budget, postmortems. */
export const UI_PATH = '/empire/triage';
export const UI_PROPOSAL = '/empire/triage/proposal';
export const UI_RUNS = '/empire/triage/runs';
export const UI_METRICS = '/empire/triage/metrics';
export const UI_POSTMORTEMS = '/empire/triage/postmortems';
export const generatedAt = '2026-11-26T08:00:00.000Z';
/**
 * What an endpoint that calls the model declares: a run may wait minutes on a live model (its
 * timeout times its attempts), so it has its own pool (OBSERVATORY_MODEL_CALL_CONCURRENCY, 503
 * `overloaded` beyond it) and the long deadline.
 */
export const MODEL_CALL = { concurrency: 'model-call', timeoutMs: LONG_WORK_TIMEOUT_MS } as const;
export const PROPOSAL_KINDS = ['alert-rule', 'incident', 'investigation'] as const;
export const EXAMPLE_RUN_ID = '6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
export const EXAMPLE_PROPOSAL_ID = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
export const EXAMPLE_INCIDENT_ID = 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f';
export const EXAMPLE_EVENT_ID = '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d01';

export const Claim = Type.Object({ text: Type.String(), eventIds: Type.Array(Type.String()) });
export const Draft = Type.Object(
  {
    title: Type.String(),
    sections: Type.Object(Object.fromEntries(POSTMORTEM_SECTIONS.map((s) => [s, Type.Array(Claim)])) as Record<(typeof POSTMORTEM_SECTIONS)[number], ReturnType<typeof Type.Array<typeof Claim>>>),
  },
  { description: `A five-section postmortem: ${POSTMORTEM_SECTIONS.join(', ')}; each claim cites the event ids it rests on.` },
);

export const Proposal = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: StringEnum(PROPOSAL_KINDS),
  status: StringEnum(PROPOSAL_STATUSES),
  toolset: Nullable(Type.String()),
  title: Type.String(),
  agent: Type.String(),
  agentVersion: Type.String({ description: '`<agent>@<version>`, e.g. `incident-classifier@1.1.0`.' }),
  runId: Type.String({ format: 'uuid' }),
  payload: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: 'The validated proposal (docs/triage/README.md, "Output"); null when the agent\'s output failed the schema.' })),
  backtest: Nullable(
    Type.Object(
      {
        method: StringEnum(['hourly-count', 'unsupported'] as const),
        lookbackDays: Type.Integer(),
        TP: Type.Integer(),
        FP: Type.Integer(),
        meanLeadTimeSec: Type.Number(),
        incidents: Type.Integer(),
        caught: Type.Integer(),
        firings: Type.Integer(),
      },
      { description: 'Rule proposals: the predicate replayed over the lookback against resolved incidents (docs/triage/README.md, "Backtest").' },
    ),
  ),
  autoRejectReason: Nullable(Type.String({ description: 'Why it was rejected automatically: `<reason>: <sentence>` (docs/triage/README.md, "Automatic rejection").' })),
  evidenceEventIds: Type.Array(Type.String()),
  windowStart: Nullable(IsoDate),
  windowEnd: Nullable(IsoDate),
  focalEventId: Nullable(Type.String()),
  createdAt: IsoDate,
  decidedAt: Nullable(IsoDate),
  decidedBy: Nullable(Type.String()),
  decisionNotes: Nullable(Type.String()),
  openedIncidentId: Nullable(Type.String({ format: 'uuid' })),
  createdSavedViewId: Nullable(Type.String({ format: 'uuid' })),
  createdAlertRuleId: Nullable(Type.String({ format: 'uuid' })),
});

const exampleDraft = {
  title: 'Rate spike: crawler-lab',
  sections: {
    summary: [{ text: 'crawler-lab received 412 events in 15 minutes against about 25 expected.', eventIds: [EXAMPLE_EVENT_ID] }],
    timeline: [{ text: 'The first event of the spike arrived at 07:46 UTC.', eventIds: [EXAMPLE_EVENT_ID] }],
    impact: [{ text: '3 source tenants sent crawl.page events.', eventIds: [] }],
    rootCause: [{ text: 'Not yet known.', eventIds: [] }],
    actionItems: [{ text: "Check the toolset's crawl schedule for a change at 07:45.", eventIds: [] }],
  },
};

export const exampleProposal = {
  id: EXAMPLE_PROPOSAL_ID,
  kind: 'incident' as const,
  status: 'pending' as const,
  toolset: 'crawler-lab',
  title: 'Rate spike: crawler-lab',
  agent: 'incident-classifier',
  agentVersion: 'incident-classifier@1.1.0',
  runId: EXAMPLE_RUN_ID,
  payload: {
    kind: 'incident',
    toolset: 'crawler-lab',
    severity: 'major',
    signal: 'rate-spike',
    title: 'Rate spike: crawler-lab',
    summary: '412 events in 15 minutes against 25 expected (16.5×).',
    evidenceEventIds: [EXAMPLE_EVENT_ID],
    postmortemDraft: exampleDraft,
  },
  backtest: null,
  autoRejectReason: null,
  evidenceEventIds: [EXAMPLE_EVENT_ID],
  windowStart: '2026-11-26T07:45:00.000Z',
  windowEnd: '2026-11-26T08:00:00.000Z',
  focalEventId: null,
  createdAt: generatedAt,
  decidedAt: null,
  decidedBy: null,
  decisionNotes: null,
  openedIncidentId: null,
  createdSavedViewId: null,
  createdAlertRuleId: null,
};

export { exampleDraft };
