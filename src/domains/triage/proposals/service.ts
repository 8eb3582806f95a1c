import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Config } from '../../../platform/config.ts';
import type { Db } from '../../../platform/db/client.ts';
import { decodeTimeCursor, isUuid, pageOf } from '../../../platform/db/paging.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { badRequest, conflict, notFound, ServiceError } from '../../../platform/errors.ts';
import { assertToolsetInReach, toolsetReach } from '../../../platform/http/auth.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import { type Destination, validateDestinations } from '../../../platform/outbound/destinations.ts';
import type { EmpireAlertService, EmpirePredicate, IncidentService } from '../../empire/index.ts';
import type { Backtest, PostmortemDraft } from '../agents/types.ts';
import type { PostmortemService } from '../postmortems/service.ts';
import * as viewsRepo from '../views/repository.ts';
import type { ProposalKind } from './checks.ts';
import * as repo from './repository.ts';

/**
 * Operator decisions on proposals (spec A "Triage proposal" state table; docs/triage/README.md,
 * "Decisions"). Accepting an incident proposal opens the incident and seeds its postmortem; an
 * investigation becomes a saved view; a rule becomes an empire alert rule with the destinations
 * given. The decision, what it created and their audit rows commit in one transaction; a decided
 * proposal cannot be decided again (409).
 */

export const PROPOSALS_LIMIT_DEFAULT = 50;
export const PROPOSALS_LIMIT_MAX = 200;
export const BULK_IDS_MAX = 100;
export const PROPOSAL_STATUSES = ['pending', 'accepted', 'rejected', 'auto-rejected'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

export interface ProposalView {
  id: string;
  kind: ProposalKind;
  status: ProposalStatus;
  toolset: string | null;
  title: string;
  agent: string;
  agentVersion: string;
  runId: string;
  payload: Record<string, unknown> | null;
  backtest: Backtest | null;
  autoRejectReason: string | null;
  evidenceEventIds: string[];
  windowStart: string | null;
  windowEnd: string | null;
  focalEventId: string | null;
  createdAt: string;
  decidedAt: string | null;
  decidedBy: string | null;
  decisionNotes: string | null;
  openedIncidentId: string | null;
  createdSavedViewId: string | null;
  createdAlertRuleId: string | null;
}

export const proposalView = (r: repo.ProposalRow): ProposalView => ({
  id: r.id,
  kind: r.kind as ProposalKind,
  status: r.status as ProposalStatus,
  toolset: r.toolset,
  title: r.title,
  agent: r.agent,
  agentVersion: r.agentVersion,
  runId: r.runId,
  payload: r.payload,
  backtest: r.backtest as unknown as Backtest | null,
  autoRejectReason: r.autoRejectReason,
  evidenceEventIds: r.evidenceEventIds,
  windowStart: r.windowStart?.toISOString() ?? null,
  windowEnd: r.windowEnd?.toISOString() ?? null,
  focalEventId: r.focalEventId,
  createdAt: r.createdAt.toISOString(),
  decidedAt: r.decidedAt?.toISOString() ?? null,
  decidedBy: r.decidedBy,
  decisionNotes: r.decisionNotes,
  openedIncidentId: r.openedIncidentId,
  createdSavedViewId: r.createdSavedViewId,
  createdAlertRuleId: r.createdAlertRuleId,
});

export interface DecisionResult {
  ok: true;
  id: string;
  decision: 'accepted' | 'rejected';
  openedIncidentId: string | null;
  createdSavedViewId: string | null;
  createdAlertRuleId: string | null;
}


export function createProposalService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Pick<Config, 'outbound' | 'integrations'>;
  incidents: IncidentService;
  alerts: EmpireAlertService;
  postmortems: PostmortemService;
}) {
  const { db, clock, audit, incidents, alerts, postmortems } = deps;

  /** Carries out an accept or reject inside `tx`, on a proposal locked and found pending. */
  async function decideWithin(
    tx: Db,
    ctx: CallContext,
    id: string,
    input: { accept: boolean; destinations?: Destination[] | undefined; notes?: string | undefined; onlyKind?: ProposalKind },
  ): Promise<DecisionResult> {
    // Reach first: a proposal out of a bound credential's reach (another toolset's, or citing
    // another toolset's events) is answered as if it did not exist, and says nothing of itself,
    // not even its kind (docs/operations.md, "Toolset binding").
    const row = isUuid(id) ? await repo.lockProposal(tx, id.toLowerCase(), toolsetReach(ctx.principal)) : null;
    if (!row) throw notFound(`There is no triage proposal ${id}.`);
    if (input.onlyKind !== undefined && row.kind !== input.onlyKind) {
      throw new ServiceError(400, 'not-a-rule-proposal', `Proposal ${row.id} is an ${row.kind} proposal; bulk-accept takes rule proposals only.`);
    }
    if (row.status !== 'pending') throw conflict(`Proposal ${row.id} is ${row.status}; a decided proposal cannot be decided again.`);
    const result: DecisionResult = { ok: true, id: row.id, decision: input.accept ? 'accepted' : 'rejected', openedIncidentId: null, createdSavedViewId: null, createdAlertRuleId: null };
    const payload = row.payload ?? {};
    if (input.accept) {
      switch (row.kind as ProposalKind) {
        case 'incident': {
          const p = payload as { toolset: string; severity: 'critical' | 'major' | 'minor'; title: string; signal: string; summary: string; evidenceEventIds: string[]; postmortemDraft: PostmortemDraft | null };
          const incident = await incidents.openWithin(tx, ctx, {
            toolset: p.toolset,
            severity: p.severity,
            title: p.title,
            source: 'triage',
            eventIds: p.evidenceEventIds,
            details: { proposalId: row.id, runId: row.runId, signal: p.signal, summary: p.summary, agentVersion: row.agentVersion },
          });
          result.openedIncidentId = incident.id;
          if (p.postmortemDraft) await postmortems.seedWithin(tx, ctx, incident, p.postmortemDraft, row.runId);
          break;
        }
        case 'investigation': {
          const p = payload as { toolset: string; name: string; rationale: string[]; filters: Record<string, unknown> };
          const view: viewsRepo.SavedViewRow = { id: randomUUID(), name: p.name, toolset: p.toolset, rationale: p.rationale, filters: p.filters, proposalId: row.id, createdBy: ctx.principal.userId, createdAt: clock.now() };
          await viewsRepo.insertSavedView(tx, view);
          result.createdSavedViewId = view.id;
          break;
        }
        case 'alert-rule': {
          if (!input.destinations || input.destinations.length === 0) {
            throw badRequest('destinations-required', 'Accepting a rule proposal needs `destinations`: where the new alert rule sends its firings.', { field: 'body.destinations' });
          }
          const p = payload as { toolset: string; name: string; predicate: EmpirePredicate };
          const created = await alerts.createWithin(tx, ctx, { toolset: p.toolset, name: p.name, predicate: p.predicate, destinations: input.destinations });
          result.createdAlertRuleId = created.id;
          break;
        }
      }
    }
    const patch = {
      status: result.decision,
      decidedAt: clock.now(),
      decidedBy: ctx.principal.userId,
      decisionNotes: input.notes ?? null,
      openedIncidentId: result.openedIncidentId,
      createdSavedViewId: result.createdSavedViewId,
      createdAlertRuleId: result.createdAlertRuleId,
    };
    await repo.recordDecision(tx, row.id, patch);
    await audit.record(tx, {
      verb: 'triage.decide',
      target: `triage-proposal:${row.id}`,
      surface: 'api',
      actor: actorOf(ctx.principal),
      before: { status: row.status, kind: row.kind, agentVersion: row.agentVersion },
      after: { ...patch, decidedAt: patch.decidedAt.toISOString() },
      requestId: ctx.requestId,
    });
    return result;
  }

  function checkDestinations(destinations: Destination[] | undefined) {
    if (destinations === undefined) return;
    const unusable = validateDestinations(destinations, deps.config);
    if (unusable) throw badRequest('invalid-destinations', `A destination cannot be used: ${unusable}.`, { field: 'body.destinations' });
  }

  return {
    /** Pending incident proposals and those older than `overdueBefore` (the compliance predicate triage-incidents-decided). */
    async pendingIncidentAges(overdueBefore: Date) {
      const ages = await repo.pendingIncidentAges(db, overdueBefore);
      return { pending: ages.pending, overdue: ages.overdue, oldestAt: ages.oldest?.toISOString() ?? null };
    },
    async list(principal: Principal | null, input: { kind?: ProposalKind | undefined; status?: ProposalStatus | 'all' | undefined; toolset?: string | undefined; cursor?: string | undefined; limit?: number | undefined }) {
      const limit = input.limit ?? PROPOSALS_LIMIT_DEFAULT;
      if (input.toolset !== undefined) assertToolsetInReach(principal, input.toolset, 'list the proposals of');
      const rows = await repo.listProposals(db, {
        kind: input.kind,
        status: input.status ?? 'pending',
        toolset: input.toolset,
        reach: toolsetReach(principal),
        cursor: decodeTimeCursor(input.cursor),
        limit: limit + 1,
      });
      const { page, nextCursor } = pageOf(rows, limit, (r) => r.createdAt);
      return { proposals: page.map(proposalView), nextCursor };
    },

    async read(principal: Principal | null, id: string) {
      const row = isUuid(id) ? await repo.proposalById(db, id.toLowerCase(), toolsetReach(principal)) : null;
      if (!row) throw notFound(`There is no triage proposal ${id}.`);
      return { proposal: proposalView(row) };
    },

    /** Spec B `POST triage/decide`. */
    async decide(ctx: CallContext, input: { id: string; accept: boolean; destinations?: Destination[] | undefined; notes?: string | undefined }): Promise<DecisionResult> {
      checkDestinations(input.destinations);
      return withTransaction(db, (tx) => decideWithin(tx, ctx, input.id, input));
    },

    /**
     * Spec B `POST triage/rules/bulk-accept`: each id is accepted in its own transaction, so one
     * failing id (not found, not a rule proposal, already decided, an invalid predicate) is
     * reported in `results` and the others go on.
     */
    async bulkAccept(ctx: CallContext, input: { ids: string[]; destinations: Destination[]; notes?: string | undefined }) {
      checkDestinations(input.destinations);
      const results: { id: string; ok: boolean; createdAlertRuleId: string | null; reason: string | null; human: string | null }[] = [];
      for (const id of input.ids) {
        try {
          const result = await withTransaction(db, (tx) =>
            decideWithin(tx, ctx, id, { accept: true, destinations: input.destinations, notes: input.notes, onlyKind: 'alert-rule' }),
          );
          results.push({ id, ok: true, createdAlertRuleId: result.createdAlertRuleId, reason: null, human: null });
        } catch (error) {
          if (!(error instanceof ServiceError)) throw error;
          results.push({ id, ok: false, createdAlertRuleId: null, reason: error.reason, human: error.human });
        }
      }
      return { ok: true as const, acceptedCount: results.filter((r) => r.ok).length, results };
    },
  };
}

export type ProposalService = ReturnType<typeof createProposalService>;
