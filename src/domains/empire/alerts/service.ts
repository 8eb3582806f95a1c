import type { FastifyBaseLogger } from 'fastify';
import { createRuleEngine, type RuleKind } from '../../../platform/alerting/engine.ts';
import type { EvaluationStats, Period, RuleChange } from '../../../platform/alerting/plan.ts';
import type { AuditLog, CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Config } from '../../../platform/config.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { badRequest } from '../../../platform/errors.ts';
import type { Freshness, Producer } from '../../../platform/freshness.ts';
import { assertToolsetInReach, type ToolsetCaller } from '../../../platform/http/auth.ts';
import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import { type Destination, type RedactedDestination, redactDestination } from '../../../platform/outbound/destinations.ts';
import type { DeliveryQuery, RuleDeliveryView } from '../../../platform/outbound/deliveries.ts';
import type { Outbound } from '../../../platform/outbound/service.ts';
import { isToolsetName } from '../../../platform/toolset-name.ts';
import { DETAIL_LIMIT, describeFiring, matches, type Observation } from './observations.ts';
import { checkPredicate, type EmpirePredicate, normalizePredicate, parseStoredPredicate, windowMsOf } from './predicates.ts';
import * as repo from './repository.ts';

/**
 * Empire alert rules (spec A "Empire alert rule", B group 2, C Events 7) on the shared alert-rule
 * engine (platform/alerting/engine.ts): what is the empire's here is the rule's toolset and
 * tenant, what a predicate reads (the toolsets' events, the knowledge graph's lag), and the rule's
 * public form. The `empire-alert-evaluate` job evaluates them off the ingest path; a firing
 * commits, in one transaction, the rule's `lastFiredAt` and `evaluatedUntil` and one outbound
 * delivery per destination, which the `outbound-dispatch` job sends. See docs/empire/alerts.md.
 */

export const OUTBOUND_SOURCE = 'empire-rule';
export const JOB_NAME = 'empire-alert-evaluate';
/** The job that evaluates empire rules, every minute. */
export const EMPIRE_ALERT_PRODUCER: Producer = { job: JOB_NAME, schedule: '* * * * *' };

/**
 * The knowledge-graph materialiser's lag in seconds (of one node kind when given), or null when it
 * is not known (never materialised). `db` is the evaluation's transaction, which the provider reads
 * through (PGlite has a single connection). The wiring passes the graph materialiser's `lagSec`;
 * `unknownGraphLag` serves tests and deployments built without it.
 */
export type GraphLagProvider = (nodeKind: string | undefined, db: Db) => Promise<number | null>;
export const unknownGraphLag: GraphLagProvider = async () => null;

export interface EmpireAlertRuleView {
  id: string;
  name: string;
  toolset: string | null;
  tenant: string | null;
  enabled: boolean;
  predicate: EmpirePredicate;
  destinations: RedactedDestination[];
  createdAt: string;
  lastFiredAt: string | null;
  silenceUntil: string | null;
  evaluatedUntil: string | null;
}

/** The public form of a rule: destinations redacted, never a webhook secret or URL path. */
export function toRuleView(row: repo.RuleRow): EmpireAlertRuleView {
  return {
    id: row.id,
    name: row.name,
    toolset: row.toolset,
    tenant: row.tenant,
    enabled: row.enabled,
    predicate: parseStoredPredicate(row.predicate, row) ?? (row.predicate as EmpirePredicate),
    destinations: (row.destinations as Destination[]).map(redactDestination),
    createdAt: row.createdAt.toISOString(),
    lastFiredAt: row.lastFiredAt?.toISOString() ?? null,
    silenceUntil: row.silenceUntil?.toISOString() ?? null,
    evaluatedUntil: row.evaluatedUntil?.toISOString() ?? null,
  };
}

/**
 * Empire rules as the engine runs them. Every kind is windowed (predicates.ts `windowMsOf`): the
 * event kinds read (to − windowMinutes, to] and cool down for one window after a firing;
 * `graph_lag_gte` reads the lag at the run and re-notifies at most once per
 * GRAPH_LAG_RENOTIFY_MINUTES. A lag that cannot be read is counted as `unknown`.
 */
export function empireRules(graphLag: GraphLagProvider): RuleKind<repo.RuleRow, EmpirePredicate, Observation, EmpireAlertRuleView> {
  async function observe(tx: Db, rule: repo.RuleRow, predicate: EmpirePredicate, scope: Period): Promise<Observation> {
    if (predicate.kind === 'graph_lag_gte') return { kind: predicate.kind, lagSec: await graphLag(predicate.nodeKind, tx) };
    if (rule.toolset === null) throw new Error(`empire alert rule ${rule.id} has no toolset to count events of`);
    const tenant = rule.tenant ?? undefined;
    switch (predicate.kind) {
      case 'empire_count_gte': {
        const events = await repo.countEvents(tx, { toolset: rule.toolset, after: scope.from, upTo: scope.to, eventType: predicate.eventType, tenant });
        return { kind: predicate.kind, events };
      }
      case 'cross_toolset_join': {
        const found = await repo.joinedTenants(tx, {
          toolset: rule.toolset,
          otherToolset: predicate.otherToolset,
          after: scope.from,
          upTo: scope.to,
          eventType: predicate.eventType,
          otherEventType: predicate.otherEventType,
          tenant,
          limit: DETAIL_LIMIT,
        });
        return { kind: predicate.kind, total: found.total, tenants: found.rows };
      }
    }
  }

  return {
    noun: 'empire alert rule',
    source: OUTBOUND_SOURCE,
    producer: EMPIRE_ALERT_PRODUCER,
    audit: { create: 'empire-alert.create', update: 'empire-alert.update', target: 'empire-alert-rule' },
    store: repo.ruleStore,
    predicates: { read: (rule) => parseStoredPredicate(rule.predicate, rule), windowMs: windowMsOf, matches },
    observer: {
      observe,
      describe: async (_tx, rule, predicate, observation, scope, now) => describeFiring(rule, predicate, observation, scope, now),
      unknown: (observation) => observation.kind === 'graph_lag_gte' && observation.lagSec === null,
    },
    presenter: async () => toRuleView,
    mayChange(ctx, rule) {
      if (rule.toolset !== null) assertToolsetInReach(ctx.principal, rule.toolset, 'change alert rules of');
    },
  };
}

export interface CreateEmpireRuleInput {
  toolset: string;
  tenant?: string | undefined;
  name: string;
  predicate: EmpirePredicate;
  destinations: Destination[];
  enabled?: boolean | undefined;
}

export type UpdateEmpireRuleInput = RuleChange;

export interface EmpireEvaluationStats extends EvaluationStats {
  /** `graph_lag_gte` rules whose lag could not be read (no materialiser yet); included in `evaluated`. */
  unknown: number;
}

export interface EmpireAlertServiceDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  outbound: Outbound;
  config: Pick<Config, 'outbound' | 'integrations'>;
  log: FastifyBaseLogger;
  /** The knowledge-graph lag; `unknownGraphLag` until the graph domain exists. */
  graphLag: GraphLagProvider;
}

export function createEmpireAlertService(deps: EmpireAlertServiceDeps) {
  const { db } = deps;
  const engine = createRuleEngine(empireRules(deps.graphLag), deps);

  /**
   * Creates a rule (the endpoint; triage, from an accepted proposal). The predicate is checked
   * against the union's allowed values (400 `invalid-predicate`) and the destinations against the
   * outbound policy (400 `invalid-destinations`); audited as `empire-alert.create` in `tx`.
   */
  async function createWithin(tx: Db, ctx: CallContext, input: CreateEmpireRuleInput): Promise<{ ok: true; id: string; toolset: string }> {
    if (!isToolsetName(input.toolset)) {
      throw badRequest('invalid-toolset', `The toolset must be 3 to 128 characters: a letter, then letters, digits or - (got ${JSON.stringify(input.toolset.slice(0, 140))}).`, {
        field: 'path.toolset',
      });
    }
    assertToolsetInReach(ctx.principal, input.toolset, 'create alert rules for');
    engine.refuseUnusable(checkPredicate(input.predicate, { toolset: input.toolset }), input.destinations);
    const rule = { name: input.name, predicate: normalizePredicate(input.predicate), destinations: input.destinations, enabled: input.enabled };
    const row = await engine.insert(tx, ctx, { toolset: input.toolset, tenant: input.tenant ?? null }, rule, toRuleView);
    return { ok: true, id: row.id, toolset: input.toolset };
  }

  return {
    /** Every rule of a toolset, enabled and disabled; with `tenant`, only the rules made for it. An unknown toolset has none. */
    async list(toolset: string, tenant: string | undefined, caller: ToolsetCaller): Promise<{ tenant: string | null; toolset: string; rules: EmpireAlertRuleView[]; freshness: Freshness }> {
      assertToolsetInReach(caller, toolset, 'read the alert rules of');
      const rows = await repo.listRules(db, toolset, tenant ?? null);
      return { tenant: tenant ?? null, toolset, rules: rows.map(toRuleView), freshness: engine.freshness(rows) };
    },

    /**
     * The deliveries of a toolset's rules (with `tenant`, of the rules made for it), newest first
     * (docs/platform/outbound.md, "Delivery listings"). A token bound to other toolsets is refused (403).
     */
    async deliveries(
      toolset: string,
      tenant: string | undefined,
      query: DeliveryQuery,
      caller: ToolsetCaller,
    ): Promise<{ tenant: string | null; toolset: string; deliveries: RuleDeliveryView[]; nextCursor: string | null }> {
      assertToolsetInReach(caller, toolset, 'read the alert deliveries of');
      const rows = await repo.listRules(db, toolset, tenant ?? null);
      return { tenant: tenant ?? null, toolset, ...(await engine.deliveries(rows, query)) };
    },

    /** `createWithin` in a transaction of its own (the endpoint). */
    async create(ctx: CallContext, input: CreateEmpireRuleInput): Promise<{ ok: true; id: string; toolset: string }> {
      return withTransaction(db, (tx) => createWithin(tx, ctx, input));
    },

    /** `create` inside the caller's transaction (triage accepts a rule proposal and records the decision in one). */
    createWithin,

    /**
     * Changes name, enabled and silenceUntil (engine.ts); a token bound to other toolsets is
     * refused (403); audited as `empire-alert.update`.
     */
    update: (ctx: CallContext, id: string, input: UpdateEmpireRuleInput): Promise<{ rule: EmpireAlertRuleView }> => engine.update(ctx, id, input),

    /** Evaluates every enabled rule at `now` (the job's time), one transaction per rule. */
    async evaluateAll(now: Date): Promise<EmpireEvaluationStats> {
      const { stats, unknown } = await engine.evaluateAll(now);
      return { ...stats, unknown };
    },
  };
}

export type EmpireAlertService = ReturnType<typeof createEmpireAlertService>;

/** Every minute: evaluates the enabled empire rules and enqueues the notifications of those that fire. */
export function empireAlertJobs(alerts: EmpireAlertService): JobDefinition[] {
  return [
    {
      name: JOB_NAME,
      description:
        'Evaluates every enabled empire alert rule (empire_count_gte, cross_toolset_join, graph_lag_gte) against the toolset events received in its window; a firing rule records lastFiredAt and enqueues one notification per destination for outbound-dispatch, unless silenced.',
      schedule: EMPIRE_ALERT_PRODUCER.schedule,
      run: async ({ now }) => ({ ...(await alerts.evaluateAll(now)) }),
    },
  ];
}
