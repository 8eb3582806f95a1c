import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import type { Clock } from '../../../platform/clock.ts';
import { canonicalJson, sha256Hex } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/db/client.ts';
import { isUuid } from '../../../platform/db/paging.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { badRequest, notFound, ServiceError } from '../../../platform/errors.ts';
import { type ModelAnswer, type ModelEngine, ModelError } from '../../../platform/llm/engine.ts';
import { dataMessage } from '../../../platform/llm/untrusted.ts';
import type { ForecastView, LineageEvent } from '../../empire/index.ts';
import { IncidentItem, InvestigationItem, parseProposals, proposalsAnswer, RuleItem } from '../agents/output.ts';
import { type AgentName, AGENTS, agentVersionLabel, definitionOf, promptHash } from '../agents/registry.ts';
import { type IncidentClassifierParams, severityCeiling } from '../agents/incident-classifier.ts';
import type { ToolsetHistory } from '../agents/types.ts';
import { identifierTokens } from '../postmortems/strip.ts';
import { type Candidate, canonicalPredicate, checkIncident, checkInvestigation, checkRule, type ProposalKind, refusedCandidate } from '../proposals/checks.ts';
import * as proposalsRepo from '../proposals/repository.ts';
import * as repo from './repository.ts';
import { type HourlyCounts, investigationSnapshot, ruleSnapshot, shownEvents, snapshotToolsets, triageSnapshot } from './snapshots.ts';

/**
 * An agent run, the same for every engine (docs/triage/README.md, "A run"): read the snapshot, send it
 * (system prompt + the snapshot's canonical JSON as a data block) to the engine, read the answer
 * against the agent's schema, check each proposal against the input (proposals/checks.ts), and
 * store the run with its replay envelope and the proposals, pending or auto-rejected, in one
 * transaction. A failed model call is stored too (its tokens count against the budget) and
 * answered 502 `model-unavailable`.
 */

/** The run id of a `stub` pass: the same every time, and nothing is written (spec B). */
export const STUB_RUN_ID = '00000000-0000-4000-8000-000000000000';
export const RUN_SCHEMA_VERSION = 1;
export const WINDOW_MINUTES_DEFAULT = 15;
export const WINDOW_MINUTES_MAX = 1440;
export const LOOKBACK_DAYS_DEFAULT = 30;
export const LOOKBACK_DAYS_MAX = 90;
/**
 * Runs (their envelopes hold whole user messages) are kept this long: a year of monthly budgets
 * and metrics, and then some. Their proposals stay; a pruned run's replay is 404.
 */
export const RUN_RETENTION_DAYS = 400;
/** Proposals one answer may hold; the investigation proposer's three is the spec's. */
export const MAX_PROPOSALS: Record<ProposalKind, number> = { incident: 20, investigation: 3, 'alert-rule': 20 };
const MAX_TOKENS = 4096;

/** The digest of a run's envelope (spec A "Triage run replay"): over the prompt hash, the user message and the model text. */
export const runDigest = (run: { systemPromptHash: string; userMessage: string; modelText: string }) =>
  sha256Hex(canonicalJson({ schemaVersion: RUN_SCHEMA_VERSION, systemPromptHash: run.systemPromptHash, userMessage: run.userMessage, modelText: run.modelText }));

export interface AgentStates {
  active(agent: AgentName): Promise<string>;
}

export interface BudgetGate {
  /** Throws 429 `budget-exhausted` when the agent is deferred for the bucket; the classifier never is. */
  assertRuns(agent: AgentName | 'forecaster', bucket: string, now: Date): Promise<void>;
}

export interface RunServiceDeps {
  db: Db;
  clock: Clock;
  engine: ModelEngine;
  agents: AgentStates;
  budget: BudgetGate;
  forecasts: () => Promise<readonly ForecastView[]>;
  /** Hourly empire event counts per toolset (the rule proposer's history), from the empire forecaster. */
  hourlyCounts: HourlyCounts;
  lineage: (eventId: string, depth: number) => Promise<{ focal: LineageEvent; upstream: LineageEvent[]; downstream: LineageEvent[] } | null>;
  /** The origin of OBSERVATORY_PUBLIC_URL: the only one links in a proposal may point at. */
  linkOrigin: string;
  log: FastifyBaseLogger;
}

export interface ModelCall {
  agent: AgentName;
  version: string;
  bucket: string;
  toolsets: string[];
  window: { start: Date; end: Date } | null;
  params: Record<string, unknown>;
  snapshot: unknown;
  schemaName: string;
  schema: TSchema;
  builtin: () => unknown;
}

export interface ModelOutcome {
  runId: string;
  startedAt: Date;
  answer: ModelAnswer;
  run: repo.RunRow;
}

export function createRunService(deps: RunServiceDeps) {
  const { db, clock, engine, agents, budget, linkOrigin, log } = deps;

  /** Asks the engine; a failed call is stored as an `error` run and answered 502. */
  async function callModel(call: ModelCall): Promise<ModelOutcome> {
    const definition = definitionOf(call.agent, call.version);
    const systemPromptHash = promptHash(definition.systemPrompt);
    // The snapshot goes to the model only as a data block its system prompt declares as data (platform/llm/untrusted.ts).
    const userMessage = dataMessage(call.snapshot);
    const runId = randomUUID();
    const startedAt = clock.now();
    const base = {
      id: runId,
      agent: call.agent,
      agentVersion: agentVersionLabel(call.agent, call.version),
      engine: engine.kind,
      model: engine.model,
      toolset: call.bucket,
      toolsets: [...new Set(call.toolsets)].sort(),
      startedAt,
      windowStart: call.window?.start ?? null,
      windowEnd: call.window?.end ?? null,
      params: call.params,
      systemPromptHash,
      userMessage,
      proposalIds: [] as string[],
      autoRejected: 0,
      schemaVersion: RUN_SCHEMA_VERSION,
    };
    let answer: ModelAnswer;
    try {
      answer = await engine.complete({
        agent: call.agent,
        system: definition.systemPrompt,
        user: userMessage,
        responseSchema: { name: call.schemaName, schema: call.schema as unknown as Record<string, unknown> },
        builtin: () => canonicalJson(call.builtin()),
        maxTokens: MAX_TOKENS,
      });
    } catch (error) {
      if (!(error instanceof ModelError)) throw error;
      const failed: repo.RunRow = {
        ...base,
        outcome: 'error',
        errorText: `${error.failure}: ${error.message}`.slice(0, 1000),
        finishedAt: clock.now(),
        modelText: '',
        promptTokens: error.usage.promptTokens,
        completionTokens: error.usage.completionTokens,
        attempts: error.attempts,
        digest: runDigest({ systemPromptHash, userMessage, modelText: '' }),
      };
      await repo.insertRun(db, failed);
      log.warn({ agent: call.agent, runId, failure: error.failure }, 'triage model call failed');
      throw new ServiceError(502, 'model-unavailable', `The language model did not answer (${error.failure}): ${error.message} The run ${runId} is recorded with outcome error.`, { runId });
    }
    const run: repo.RunRow = {
      ...base,
      engine: answer.engine,
      model: answer.model,
      outcome: 'ok',
      errorText: null,
      finishedAt: clock.now(),
      modelText: answer.text,
      promptTokens: answer.promptTokens,
      completionTokens: answer.completionTokens,
      attempts: answer.attempts,
      digest: runDigest({ systemPromptHash, userMessage, modelText: answer.text }),
    };
    return { runId, startedAt, answer, run };
  }

  /**
   * Stores the run and its proposals in one transaction, under the proposal-writers' lock so two
   * runs never both keep a pending proposal of one key: a candidate whose key a pending proposal
   * (or an earlier candidate) holds is auto-rejected `duplicate-of-pending`.
   */
  async function store(outcome: ModelOutcome, kind: ProposalKind, candidates: Candidate[], extra: { window: { start: Date; end: Date } | null; focalEventId: string | null }) {
    return withTransaction(db, async (tx) => {
      await proposalsRepo.lockProposalWrites(tx);
      const keys = candidates.filter((c) => c.status === 'pending' && c.dedupeKey !== null).map((c) => c.dedupeKey!);
      const held = await proposalsRepo.pendingKeys(tx, keys);
      const seen = new Set<string>();
      const now = clock.now();
      const rows: proposalsRepo.ProposalRow[] = candidates.map((c) => {
        let { status, autoRejectReason } = c;
        if (status === 'pending' && c.dedupeKey !== null) {
          const other = held.get(c.dedupeKey);
          if (other !== undefined || seen.has(c.dedupeKey)) {
            status = 'auto-rejected';
            autoRejectReason = other !== undefined ? `duplicate-of-pending: proposal ${other} is pending for the same ${kind === 'alert-rule' ? 'toolset and predicate' : kind === 'incident' ? 'toolset and signal' : 'filters'}` : 'duplicate-of-pending: the same answer proposed it twice';
          }
          seen.add(c.dedupeKey);
        }
        return {
          id: randomUUID(),
          runId: outcome.runId,
          kind,
          status,
          agent: outcome.run.agent,
          agentVersion: outcome.run.agentVersion,
          toolset: c.toolset,
          title: c.title,
          payload: c.payload,
          backtest: c.backtest as Record<string, unknown> | null,
          dedupeKey: c.dedupeKey,
          autoRejectReason,
          evidenceEventIds: c.evidenceEventIds,
          windowStart: extra.window?.start ?? null,
          windowEnd: extra.window?.end ?? null,
          focalEventId: extra.focalEventId,
          createdAt: now,
          decidedAt: null,
          decidedBy: null,
          decisionNotes: null,
          openedIncidentId: null,
          createdSavedViewId: null,
          createdAlertRuleId: null,
        };
      });
      const autoRejected = rows.filter((r) => r.status === 'auto-rejected').length;
      await repo.insertRun(tx, { ...outcome.run, proposalIds: rows.map((r) => r.id), autoRejected });
      await proposalsRepo.insertProposals(tx, rows);
      return { proposalCount: rows.length - autoRejected, autoRejected, proposalIds: rows.map((r) => r.id) };
    });
  }

  /** Turns the answer into candidates: refusals for what failed the schema, checks for the rest. */
  async function candidatesOf<T>(
    agent: AgentName,
    kind: ProposalKind,
    text: string,
    schema: TSchema,
    check: (items: T[]) => Promise<Candidate[]>,
  ): Promise<Candidate[]> {
    const parsed = parseProposals<T>(text, schema, MAX_PROPOSALS[kind]);
    if (parsed.refused !== null) return [refusedCandidate(kind, parsed.refused, -1, agent)];
    const valid = parsed.items.flatMap((item) => (item.ok ? [item.value] : []));
    const checked = await check(valid);
    let next = 0;
    return parsed.items.map((item, index) => (item.ok ? checked[next++]! : refusedCandidate(kind, item.reason, index, agent)));
  }

  function windowOf(now: Date, minutes: number | undefined) {
    const windowMinutes = minutes ?? WINDOW_MINUTES_DEFAULT;
    if (!Number.isInteger(windowMinutes) || windowMinutes < 1 || windowMinutes > WINDOW_MINUTES_MAX) {
      throw badRequest('invalid-window', `windowMinutes must be a whole number from 1 to ${WINDOW_MINUTES_MAX} (got ${windowMinutes}).`, { field: 'body.windowMinutes' });
    }
    return { windowMinutes, start: new Date(now.getTime() - windowMinutes * 60_000), end: now };
  }

  const forecastList = async () => [...(await deps.forecasts())];

  return {
    /** The incident classifier over the last `windowMinutes` (spec B `POST triage/proposals`). */
    async triage(input: { windowMinutes?: number | undefined; stub?: boolean | undefined; trigger: 'api' | 'job' }) {
      const now = clock.now();
      const { windowMinutes, start, end } = windowOf(now, input.windowMinutes);
      const agent: AgentName = 'incident-classifier';
      const version = await agents.active(agent);
      const summary = { windowStart: start.toISOString(), windowEnd: end.toISOString(), agentVersion: agentVersionLabel(agent, version) };
      if (input.stub) return { ok: true as const, runId: STUB_RUN_ID, proposalCount: 0, autoRejected: 0, ...summary };
      await budget.assertRuns(agent, '*', now);
      const snapshot = await triageSnapshot(db, start, end, await forecastList());
      const definition = definitionOf(agent, version);
      const toolsets = snapshotToolsets(snapshot);
      const outcome = await callModel({
        agent,
        version,
        bucket: '*',
        toolsets,
        window: { start, end },
        params: { windowMinutes, trigger: input.trigger },
        snapshot,
        schemaName: 'incident_proposals',
        schema: proposalsAnswer(IncidentItem, MAX_PROPOSALS.incident),
        builtin: () => ({ proposals: AGENTS[agent].builtin(snapshot, definition.params as never) }),
      });
      const params = definition.params as IncidentClassifierParams;
      const ctx = { shown: shownEvents(snapshot), linkOrigin, toolsets: new Set(toolsets), known: identifierTokens(snapshot), severityCeiling: (p: Parameters<typeof severityCeiling>[2]) => severityCeiling(snapshot, params, p) };
      const candidates = await candidatesOf<IncidentItem>(agent, 'incident', outcome.answer.text, IncidentItem, async (items) => items.map((item) => checkIncident(item, ctx)));
      const stored = await store(outcome, 'incident', candidates, { window: { start, end }, focalEventId: null });
      return { ok: true as const, runId: outcome.runId, proposalCount: stored.proposalCount, autoRejected: stored.autoRejected, ...summary };
    },

    /** The investigation proposer: up to three cluster-level views, or one around `focalEventId`. */
    async investigations(input: { windowMinutes?: number | undefined; focalEventId?: string | undefined; stub?: boolean | undefined; trigger: 'api' | 'job' }) {
      const now = clock.now();
      const { windowMinutes, start, end } = windowOf(now, input.windowMinutes);
      const agent: AgentName = 'investigation-proposer';
      const focalEventId = input.focalEventId?.toLowerCase() ?? null;
      if (input.stub) return { ok: true as const, runId: STUB_RUN_ID, proposalCount: 0, autoRejected: 0, windowStart: start.toISOString(), windowEnd: end.toISOString(), focalEventId };
      const focal = focalEventId === null ? null : await deps.lineage(focalEventId, 100);
      if (focalEventId !== null && focal === null) throw notFound(`There is no empire event ${focalEventId} to investigate.`);
      await budget.assertRuns(agent, '*', now);
      const version = await agents.active(agent);
      const definition = definitionOf(agent, version);
      const snapshot = await investigationSnapshot(db, start, end, await forecastList(), focal);
      const toolsets = snapshotToolsets(snapshot);
      const outcome = await callModel({
        agent,
        version,
        bucket: '*',
        toolsets,
        window: { start, end },
        params: { windowMinutes, focalEventId, trigger: input.trigger },
        snapshot,
        schemaName: 'investigation_proposals',
        schema: proposalsAnswer(InvestigationItem, MAX_PROPOSALS.investigation),
        builtin: () => ({ proposals: AGENTS[agent].builtin(snapshot, definition.params as never) }),
      });
      const ctx = { shown: shownEvents(snapshot), linkOrigin, toolsets: new Set(toolsets) };
      const candidates = await candidatesOf<InvestigationItem>(agent, 'investigation', outcome.answer.text, InvestigationItem, async (items) => items.map((item) => checkInvestigation(item, ctx)));
      const stored = await store(outcome, 'investigation', candidates, { window: { start, end }, focalEventId });
      return { ok: true as const, runId: outcome.runId, proposalCount: stored.proposalCount, autoRejected: stored.autoRejected, windowStart: start.toISOString(), windowEnd: end.toISOString(), focalEventId };
    },

    /** The rule proposer over the last `lookbackDays`, each proposal backtested against resolved incidents. */
    async rules(input: { lookbackDays?: number | undefined; stub?: boolean | undefined; trigger: 'api' | 'job' }) {
      const now = clock.now();
      const lookbackDays = input.lookbackDays ?? LOOKBACK_DAYS_DEFAULT;
      if (!Number.isInteger(lookbackDays) || lookbackDays < 1 || lookbackDays > LOOKBACK_DAYS_MAX) {
        throw badRequest('invalid-lookback', `lookbackDays must be a whole number from 1 to ${LOOKBACK_DAYS_MAX} (got ${lookbackDays}).`, { field: 'body.lookbackDays' });
      }
      const agent: AgentName = 'rule-proposer';
      const version = await agents.active(agent);
      const agentVersion = agentVersionLabel(agent, version);
      if (input.stub) return { ok: true as const, runId: STUB_RUN_ID, proposalCount: 0, autoRejected: 0, lookbackDays, agentVersion };
      await budget.assertRuns(agent, '*', now);
      const definition = definitionOf(agent, version);
      const snapshot = await ruleSnapshot(db, now, lookbackDays, deps.hourlyCounts);
      const toolsets = [...snapshot.history.map((h) => h.toolset), ...snapshot.resolvedIncidents.map((i) => i.toolset), ...snapshot.examples.map((e) => e.toolset), ...snapshot.existingRules.map((r) => r.toolset)];
      const outcome = await callModel({
        agent,
        version,
        bucket: '*',
        toolsets,
        window: { start: new Date(snapshot.from), end: new Date(snapshot.to) },
        params: { lookbackDays, trigger: input.trigger },
        snapshot,
        schemaName: 'rule_proposals',
        schema: proposalsAnswer(RuleItem, MAX_PROPOSALS['alert-rule']),
        builtin: () => ({ proposals: AGENTS[agent].builtin(snapshot, definition.params as never) }),
      });
      const existing = new Map<string, Set<string>>();
      for (const rule of snapshot.existingRules) {
        const canonical = canonicalPredicate(rule.predicate);
        if (canonical !== null) existing.set(rule.toolset, (existing.get(rule.toolset) ?? new Set()).add(canonical));
      }
      const history = new Map<string, ToolsetHistory>(snapshot.history.map((h) => [h.toolset, h]));
      const candidates = await candidatesOf<RuleItem>(agent, 'alert-rule', outcome.answer.text, RuleItem, async (items) =>
        items.map((item) => checkRule(item, { history, historyFrom: new Date(snapshot.from), lookbackDays, incidents: snapshot.resolvedIncidents, existing, linkOrigin, toolsets: new Set(toolsets) })),
      );
      const stored = await store(outcome, 'alert-rule', candidates, { window: { start: new Date(snapshot.from), end: new Date(snapshot.to) }, focalEventId: null });
      return { ok: true as const, runId: outcome.runId, proposalCount: stored.proposalCount, autoRejected: stored.autoRejected, lookbackDays, agentVersion };
    },

    callModel,

    /** Deletes runs older than RUN_RETENTION_DAYS, in batches. */
    prune: (now: Date): Promise<number> => repo.deleteRunsBefore(db, new Date(now.getTime() - RUN_RETENTION_DAYS * 86_400_000)),
    /** Stores a run that proposes nothing (a postmortem draft), in the caller's transaction. */
    saveRun: (tx: Db, run: repo.RunRow) => repo.insertRun(tx, run),
    /** The user message a run sent (what its output may name), or null once the run is pruned. */
    async userMessageOf(tx: Db, runId: string): Promise<string | null> {
      return isUuid(runId) ? ((await repo.runById(tx, runId.toLowerCase()))?.userMessage ?? null) : null;
    },

    /** A run's replay envelope (spec B `GET triage/replay/{runId}`); the digest is recomputed from the stored parts. */
    async replay(runId: string, reach: ReadonlySet<string> | null) {
      const run = isUuid(runId) ? await repo.runById(db, runId.toLowerCase()) : null;
      // A credential bound to toolsets reads only the envelopes of runs that read nothing else.
      if (!run || (reach !== null && run.toolsets.some((t) => !reach.has(t)))) throw notFound(`There is no triage run ${runId}.`);
      const recomputed = runDigest(run);
      return {
        runId: run.id,
        digest: run.digest,
        recomputedDigest: recomputed,
        matches: recomputed === run.digest,
        schemaVersion: run.schemaVersion,
        agent: run.agent,
        agentVersion: run.agentVersion,
        engine: run.engine as 'builtin' | 'live',
        model: run.model,
        outcome: run.outcome as 'ok' | 'error',
        errorText: run.errorText,
        systemPromptHash: run.systemPromptHash,
        userMessageBytes: Buffer.byteLength(run.userMessage, 'utf8'),
        llmResponseBytes: Buffer.byteLength(run.modelText, 'utf8'),
        userMessage: run.userMessage,
        llmResponse: run.modelText,
        promptTokens: run.promptTokens,
        completionTokens: run.completionTokens,
        proposalIds: run.proposalIds,
        startedAt: run.startedAt.toISOString(),
        finishedAt: run.finishedAt.toISOString(),
      };
    },
  };
}


export type RunService = ReturnType<typeof createRunService>;
