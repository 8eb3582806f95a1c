import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { ServiceError } from '../../../platform/errors.ts';
import type { IncidentService } from '../../empire/index.ts';
import { parseDraft, PostmortemDraftSchema } from '../agents/output.ts';
import { AGENTS, definitionOf } from '../agents/registry.ts';
import { POSTMORTEM_SECTIONS, type PostmortemDraft } from '../agents/types.ts';
import type { AgentStates, BudgetGate, RunService, RunServiceDeps } from '../runs/service.ts';
import { STUB_RUN_ID } from '../runs/service.ts';
import { postmortemSnapshot } from '../runs/snapshots.ts';
import * as repo from './repository.ts';
import { identifierTokens, stripDraft } from './strip.ts';
import { readDataMessage } from '../../../platform/llm/untrusted.ts';

/**
 * Incident postmortems (spec B `incidents/{id}/auto-draft`, A "Incident postmortem draft"): the
 * postmortem writer drafts five sections from the incident and its lineage; every claim citing an
 * event outside that lineage, or naming an identifier its input does not hold, is stripped
 * (strip.ts); `persist` stores the draft as the incident's postmortem. Accepting an incident
 * proposal seeds the postmortem the same way (`seedWithin`), against the input of the run that
 * wrote the seed.
 */

/** The identifiers a stored user message holds (a data block, or the plain JSON older runs sent). */
function inputTokens(userMessage: string): Set<string> {
  for (const read of [readDataMessage, JSON.parse]) {
    try {
      return identifierTokens(read(userMessage));
    } catch {
      // not this form
    }
  }
  return identifierTokens(userMessage);
}

const emptyDraft = (title: string): PostmortemDraft => ({ title, sections: Object.fromEntries(POSTMORTEM_SECTIONS.map((s) => [s, []])) as unknown as PostmortemDraft['sections'] });

export function createPostmortemService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  runs: RunService;
  agents: AgentStates;
  budget: BudgetGate;
  incidents: IncidentService;
  lineage: RunServiceDeps['lineage'];
  /** The origin of OBSERVATORY_PUBLIC_URL: the only one links in a draft may point at. */
  linkOrigin: string;
}) {
  const { db, clock, audit, runs, agents, budget, incidents, linkOrigin } = deps;

  async function store(tx: Db, ctx: CallContext, incidentId: string, input: { draft: PostmortemDraft; runId: string | null; source: 'proposal' | 'auto-draft'; strippedEventIds: string[] }) {
    const now = clock.now();
    // `createdAt` is kept from the first write: the upsert never replaces it.
    const row: repo.PostmortemRow = {
      incidentId,
      createdAt: now,
      draft: input.draft as unknown as Record<string, unknown>,
      runId: input.runId,
      source: input.source,
      strippedEventIds: input.strippedEventIds,
      updatedAt: now,
      updatedBy: ctx.principal.userId,
    };
    const before = await repo.upsertPostmortem(tx, row);
    await audit.record(tx, {
      verb: 'empire-incident.postmortem',
      target: `empire-incident:${incidentId}`,
      surface: 'api',
      actor: actorOf(ctx.principal),
      before: before ? { source: before.source, runId: before.runId, updatedAt: before.updatedAt.toISOString() } : null,
      after: { source: row.source, runId: row.runId, strippedEventIds: row.strippedEventIds },
      requestId: ctx.requestId,
    });
  }

  return {
    /**
     * Seeds a new incident's postmortem with a proposal's draft, stripped to the incident's own
     * events and to the identifiers of the input the draft was written from (the run's user
     * message; once the run is pruned, the incident's own record).
     */
    async seedWithin(tx: Db, ctx: CallContext, incident: { id: string; toolset: string; title: string; eventIds: string[] }, draft: PostmortemDraft, runId: string) {
      const input = await runs.userMessageOf(tx, runId);
      const known = input === null ? identifierTokens(incident) : inputTokens(input);
      const stripped = stripDraft(draft, { citable: new Set(incident.eventIds.map((id) => id.toLowerCase())), named: new Set([incident.id]), known, linkOrigin, fallbackTitle: `Postmortem: ${incident.title}` });
      await store(tx, ctx, incident.id, { draft: stripped.draft, runId, source: 'proposal', strippedEventIds: stripped.strippedEventIds });
    },

    async read(ctx: CallContext, incidentId: string) {
      // Another toolset's incident reads as unknown (404) to a bound token, like any of its records.
      const { incident } = await incidents.read(incidentId, ctx.principal);
      const row = await repo.postmortemOf(db, incident.id);
      return {
        incidentId: incident.id,
        postmortem: row
          ? { draft: row.draft as unknown as PostmortemDraft, source: row.source as 'proposal' | 'auto-draft', runId: row.runId, strippedEventIds: row.strippedEventIds, updatedAt: row.updatedAt.toISOString(), updatedBy: row.updatedBy }
          : null,
      };
    },

    /**
     * When each of these incidents first had a postmortem stored (the first write; a replacement
     * never moves it), by incident id; incidents without one are absent. One query. Ids must be
     * UUIDs (the empire's incident ids).
     */
    async firstWrittenAt(incidentIds: readonly string[]): Promise<Map<string, Date>> {
      const rows = await repo.firstWrittenOf(db, incidentIds);
      return new Map(rows.map((r) => [r.incidentId, r.createdAt]));
    },

    /** Spec B `POST incidents/{id}/auto-draft`. */
    async autoDraft(ctx: CallContext, incidentId: string, input: { operatorNotes?: string | undefined; persist?: boolean | undefined; stub?: boolean | undefined }) {
      // Read with the caller's reach: another toolset's incident is unknown (404), and a bound
      // caller's draft starts only from the incident's events it reaches (their lineage stays in
      // their toolset: causedBy never crosses one), so it cannot read another toolset's events.
      const { incident } = await incidents.read(incidentId, ctx.principal);
      if (input.stub) {
        return { ok: true as const, id: incident.id, runId: STUB_RUN_ID, draft: emptyDraft(`Postmortem: ${incident.title}`), rawDraft: '', citedEventIds: [], strippedEventIds: [], persisted: false };
      }
      const agent = 'postmortem-writer' as const;
      await budget.assertRuns(agent, incident.toolset, clock.now());
      const version = await agents.active(agent);
      const definition = definitionOf(agent, version);
      const { snapshot, lineageIds } = await postmortemSnapshot(db, incident, input.operatorNotes ?? null, deps.lineage);
      const outcome = await runs.callModel({
        agent,
        version,
        bucket: incident.toolset,
        toolsets: [incident.toolset, ...snapshot.lineage.map((e) => e.toolset)],
        window: null,
        params: { incidentId: incident.id, persist: input.persist ?? false, operatorNotes: input.operatorNotes ?? null },
        snapshot,
        schemaName: 'postmortem_draft',
        schema: PostmortemDraftSchema,
        builtin: () => AGENTS[agent].builtin(snapshot, definition.params as never),
      });
      const parsed = parseDraft(outcome.answer.text);
      if (!parsed.ok) {
        await runs.saveRun(db, { ...outcome.run, autoRejected: 1 });
        throw new ServiceError(502, 'model-output-invalid', `The postmortem writer's answer was refused (${parsed.reason}); nothing was stored but run ${outcome.runId}, whose replay holds the text.`, { runId: outcome.runId });
      }
      const stripped = stripDraft(parsed.value, { citable: lineageIds, named: new Set([incident.id]), known: identifierTokens(snapshot), linkOrigin, fallbackTitle: `Postmortem: ${incident.title}` });
      const persisted = input.persist ?? false;
      await withTransaction(db, async (tx) => {
        await runs.saveRun(tx, outcome.run);
        if (persisted) await store(tx, ctx, incident.id, { draft: stripped.draft, runId: outcome.runId, source: 'auto-draft', strippedEventIds: stripped.strippedEventIds });
      });
      return {
        ok: true as const,
        id: incident.id,
        runId: outcome.runId,
        draft: stripped.draft,
        rawDraft: outcome.answer.text,
        citedEventIds: stripped.citedEventIds,
        strippedEventIds: stripped.strippedEventIds,
        persisted,
      };
    },
  };
}

export type PostmortemService = ReturnType<typeof createPostmortemService>;
