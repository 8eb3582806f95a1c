import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, primaryKey, smallint, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One agent run (spec A "Triage run replay"; docs/triage/README.md): what the agent was asked and what it
 * answered, kept whole so the run can be replayed and its digest checked, and the token counts the
 * budget is recomputed from. `toolset` is the budget bucket the run is charged to (`*` for
 * fleet-wide passes); `toolsets` lists every toolset whose data the user message holds (who may
 * read the envelope).
 */
export const triageRuns = pgTable(
  'triage_runs',
  {
    id: uuid('id').primaryKey(),
    agent: text('agent').notNull(),
    agentVersion: text('agent_version').notNull(),
    engine: text('engine').notNull(),
    model: text('model').notNull(),
    toolset: text('toolset').notNull(),
    toolsets: jsonb('toolsets').$type<string[]>().notNull(),
    outcome: text('outcome').notNull(),
    errorText: text('error_text'),
    startedAt: ts('started_at').notNull(),
    finishedAt: ts('finished_at').notNull(),
    windowStart: ts('window_start'),
    windowEnd: ts('window_end'),
    /** The run's inputs (windowMinutes, focalEventId, lookbackDays, incidentId, trigger). */
    params: jsonb('params').$type<Record<string, unknown>>().notNull(),
    systemPromptHash: text('system_prompt_hash').notNull(),
    userMessage: text('user_message').notNull(),
    modelText: text('model_text').notNull(),
    promptTokens: integer('prompt_tokens').notNull(),
    completionTokens: integer('completion_tokens').notNull(),
    attempts: smallint('attempts').notNull(),
    digest: text('digest').notNull(),
    proposalIds: jsonb('proposal_ids').$type<string[]>().notNull(),
    autoRejected: integer('auto_rejected').notNull(),
    schemaVersion: smallint('schema_version').notNull(),
  },
  (t) => [index('triage_runs_started_idx').on(t.startedAt), index('triage_runs_agent_idx').on(t.agent, t.startedAt)],
);

/**
 * A proposal of an agent (spec A "Triage proposal"): `payload` is the validated draft (null when
 * the agent's output failed the schema: nothing half-parsed is kept; the run holds the text).
 * `dedupe_key` names what the proposal is about; at most one pending proposal per key.
 */
export const triageProposals = pgTable(
  'triage_proposals',
  {
    id: uuid('id').primaryKey(),
    runId: uuid('run_id').notNull(),
    kind: text('kind').notNull(),
    status: text('status').notNull(),
    agent: text('agent').notNull(),
    agentVersion: text('agent_version').notNull(),
    toolset: text('toolset'),
    title: text('title').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>(),
    backtest: jsonb('backtest').$type<Record<string, unknown>>(),
    dedupeKey: text('dedupe_key'),
    autoRejectReason: text('auto_reject_reason'),
    evidenceEventIds: jsonb('evidence_event_ids').$type<string[]>().notNull(),
    windowStart: ts('window_start'),
    windowEnd: ts('window_end'),
    focalEventId: text('focal_event_id'),
    createdAt: ts('created_at').notNull(),
    decidedAt: ts('decided_at'),
    decidedBy: text('decided_by'),
    decisionNotes: text('decision_notes'),
    openedIncidentId: uuid('opened_incident_id'),
    createdSavedViewId: uuid('created_saved_view_id'),
    createdAlertRuleId: uuid('created_alert_rule_id'),
  },
  (t) => [
    index('triage_proposals_list_idx').on(t.kind, t.status, t.createdAt, t.id),
    index('triage_proposals_created_idx').on(t.createdAt, t.id),
    index('triage_proposals_agent_idx').on(t.agent, t.agentVersion, t.decidedAt),
    uniqueIndex('triage_proposals_pending_key_idx').on(t.dedupeKey).where(sql`${t.status} = 'pending'`),
    // The analytics rollup reads operator decisions by decision time (docs/analytics/README.md).
    index('triage_proposals_decided_idx').on(t.decidedAt).where(sql`${t.status} IN ('accepted', 'rejected')`),
  ],
);

/** Which version of each agent is active, and the one before it (the rollback target). */
export const triageAgents = pgTable('triage_agents', {
  agent: text('agent').primaryKey(),
  activeVersion: text('active_version').notNull(),
  previousVersion: text('previous_version'),
  /** The newest version this deployment has shipped; a newer one in the code is a deploy that activates it. */
  latestKnownVersion: text('latest_known_version').notNull(),
  changedAt: ts('changed_at').notNull(),
  /** `deploy` or `rollback`. */
  changeReason: text('change_reason').notNull(),
  rolledBackFrom: text('rolled_back_from'),
});

/** A monthly model budget of one bucket (spec A "Triage budget row"); spend is never stored. */
export const triageBudgets = pgTable(
  'triage_budgets',
  {
    month: text('month').notNull(),
    toolset: text('toolset').notNull(),
    budgetUsdCents: bigint('budget_usd_cents', { mode: 'number' }).notNull(),
    degradedUntil: ts('degraded_until'),
    updatedAt: ts('updated_at').notNull(),
    updatedBy: text('updated_by').notNull(),
  },
  (t) => [primaryKey({ columns: [t.month, t.toolset] })],
);

/** A saved investigation view, created by accepting an investigation proposal. */
export const triageSavedViews = pgTable(
  'triage_saved_views',
  {
    id: uuid('id').primaryKey(),
    name: text('name').notNull(),
    toolset: text('toolset'),
    rationale: jsonb('rationale').$type<string[]>().notNull(),
    filters: jsonb('filters').$type<Record<string, unknown>>().notNull(),
    proposalId: uuid('proposal_id').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('triage_saved_views_created_idx').on(t.createdAt, t.id)],
);

/** The stored postmortem of an empire incident: seeded on accept, replaced by a persisted auto-draft. */
export const triagePostmortems = pgTable('triage_postmortems', {
  incidentId: uuid('incident_id').primaryKey(),
  draft: jsonb('draft').$type<Record<string, unknown>>().notNull(),
  runId: uuid('run_id'),
  source: text('source').notNull(),
  strippedEventIds: jsonb('stripped_event_ids').$type<string[]>().notNull(),
  /** When the incident first had a postmortem (never moved by a replacement): the follow event of cohort incident-postmortem-7d. */
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
  updatedBy: text('updated_by').notNull(),
});
