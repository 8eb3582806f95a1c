import { api, unwrap } from '../../../api/client';
import type { paths } from '../../../api/schema';

/** The triage endpoints these pages call, typed from the OpenAPI document. */

export type ProposalQuery = NonNullable<paths['/api/observatory/v1/empire/triage/proposals']['get']['parameters']['query']>;
export type ProposalKind = NonNullable<ProposalQuery['kind']>;
export type ProposalStatusFilter = NonNullable<ProposalQuery['status']>;
export type DecideBody = NonNullable<paths['/api/observatory/v1/empire/triage/decide']['post']['requestBody']>['content']['application/json'];
export type Destination = NonNullable<DecideBody['destinations']>[number];

export const PROPOSAL_KINDS: ProposalKind[] = ['incident', 'investigation', 'alert-rule'];
export const STATUS_FILTERS: ProposalStatusFilter[] = ['pending', 'accepted', 'rejected', 'auto-rejected', 'all'];

export const listProposals = (query: ProposalQuery) => unwrap(api.GET('/api/observatory/v1/empire/triage/proposals', { params: { query } }));
export type ProposalList = Awaited<ReturnType<typeof listProposals>>;
export type Proposal = ProposalList['proposals'][number];

export const listInvestigations = (query: Omit<ProposalQuery, 'kind'>) => unwrap(api.GET('/api/observatory/v1/empire/triage/investigations', { params: { query } }));
export const listRuleProposals = (query: Omit<ProposalQuery, 'kind'>) => unwrap(api.GET('/api/observatory/v1/empire/triage/rules', { params: { query } }));

export const readProposal = (id: string) => unwrap(api.GET('/api/observatory/v1/empire/triage/proposals/{id}', { params: { path: { id } } }));

export const decide = (body: DecideBody) => unwrap(api.POST('/api/observatory/v1/empire/triage/decide', { body }));
export type Decision = Awaited<ReturnType<typeof decide>>;

export const bulkAcceptRules = (body: { ids: string[]; destinations: Destination[]; notes?: string }) =>
  unwrap(api.POST('/api/observatory/v1/empire/triage/rules/bulk-accept', { body }));

export const runClassifier = (body: { windowMinutes?: number }) => unwrap(api.POST('/api/observatory/v1/empire/triage/proposals', { body }));
export const runInvestigations = (body: { windowMinutes?: number; focalEventId?: string }) => unwrap(api.POST('/api/observatory/v1/empire/triage/investigations', { body }));
export const runRules = (body: { lookbackDays?: number }) => unwrap(api.POST('/api/observatory/v1/empire/triage/rules', { body }));

export const replayRun = (runId: string) => unwrap(api.GET('/api/observatory/v1/empire/triage/replay/{runId}', { params: { path: { runId } } }));

export const readMetrics = () => unwrap(api.GET('/api/observatory/v1/empire/triage/metrics'));
export const readBudget = (month: string) => unwrap(api.GET('/api/observatory/v1/empire/triage/budget', { params: { query: month ? { month } : {} } }));
export type Budget = Awaited<ReturnType<typeof readBudget>>['budgets'][number];
export const setBudget = (body: { budgetUsdCents?: number; degradedUntil?: string | null; month?: string; toolset?: string }) =>
  unwrap(api.POST('/api/observatory/v1/empire/triage/budget', { body }));

export const readPostmortem = (id: string) => unwrap(api.GET('/api/observatory/v1/empire/incidents/{id}/postmortem', { params: { path: { id } } }));
export type Postmortem = NonNullable<Awaited<ReturnType<typeof readPostmortem>>['postmortem']>;
export type Draft = Postmortem['draft'];
export const autoDraft = (id: string, body: { operatorNotes?: string; persist?: boolean }) =>
  unwrap(api.POST('/api/observatory/v1/empire/incidents/{id}/auto-draft', { params: { path: { id } }, body }));

/** Recent incidents, to pick one whose postmortem to read or draft. */
export const listIncidents = () => unwrap(api.GET('/api/observatory/v1/empire/incidents', { params: { query: { limit: 50 } } }));

export const listSavedViews = () => unwrap(api.GET('/api/observatory/v1/empire/saved-views', { params: { query: { limit: 20 } } }));
