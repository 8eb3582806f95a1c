import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import {
  carryOut,
  changedFields,
  evaluateEach,
  type EvaluationStats,
  type FiringMessage,
  type Period,
  type Plan,
  planEvaluation as planWindowed,
  plural,
  type RuleChange,
  type RuleOutcome,
} from '../../../platform/alerting/plan.ts';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import { rulesFreshness } from '../../../platform/alerting/freshness.ts';
import type { Freshness, Producer } from '../../../platform/freshness.ts';
import type { Config } from '../../../platform/config.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { assertThat, badRequest, notFound } from '../../../platform/errors.ts';
import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import { type Destination, type RedactedDestination, redactDestination, validateDestinations } from '../../../platform/outbound/destinations.ts';
import { type DeliveryQuery, listRuleDeliveries, type RuleDeliveryView } from '../../../platform/outbound/deliveries.ts';
import type { Outbound } from '../../../platform/outbound/service.ts';
import { isToolsetName } from '../../provenance/service.ts';
import { checkPredicate, DEFAULT_MIN_TENANTS, type EmpirePredicate, normalizePredicate, parseStoredPredicate, windowMsOf } from './predicates.ts';
import * as repo from './repository.ts';
import { assertToolsetInReach, type ToolsetCaller } from '../../../platform/http/auth.ts';

/**
 * Empire alert rules (spec A "Empire alert rule", B group 2, C Events 7): creation and changes
 * (audited), and their evaluation by the `empire-alert-evaluate` job, off the ingest path. The
 * evaluation follows the honeypot rules' (platform/alerting/plan.ts: settle margin, watermark,
 * cooldown, silence); a firing commits, in one transaction, the rule's `lastFiredAt` and
 * `evaluatedUntil` and one outbound delivery per destination, which the `outbound-dispatch` job
 * sends. See docs/empire-alerts.md.
 */

/** Tenants listed in one cross-toolset notification (the count covers all of them). */
export const DETAIL_LIMIT = 20;
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

// Pure evaluation

/**
 * The plan of an empire rule (platform/alerting/plan.ts). Every kind is windowed: the event kinds
 * read (to − windowMinutes, to] and cool down for one window after a firing; `graph_lag_gte` reads
 * the lag at the run and re-notifies at most once per GRAPH_LAG_RENOTIFY_MINUTES.
 */
export function planEvaluation(
  rule: { predicate: EmpirePredicate; createdAt: Date; evaluatedUntil: Date | null; lastFiredAt: Date | null },
  now: Date,
): Plan {
  return planWindowed(rule, windowMsOf(rule.predicate), now);
}

/** What was observed for a rule's scope. */
export type Observation =
  | { kind: 'empire_count_gte'; events: number }
  | { kind: 'cross_toolset_join'; total: number; tenants: repo.JoinedTenant[] }
  /** `lagSec` null: the lag is not known (no materialiser). */
  | { kind: 'graph_lag_gte'; lagSec: number | null };

/** Whether the predicate holds for what was observed (an unknown lag never holds). */
export function matches(predicate: EmpirePredicate, observation: Observation): boolean {
  switch (predicate.kind) {
    case 'empire_count_gte':
      return observation.kind === predicate.kind && observation.events >= predicate.count;
    case 'cross_toolset_join':
      return observation.kind === predicate.kind && observation.total > 0 && observation.total >= (predicate.minTenants ?? DEFAULT_MIN_TENANTS);
    case 'graph_lag_gte':
      return observation.kind === predicate.kind && observation.lagSec !== null && observation.lagSec >= predicate.lagSec;
  }
}

/** The notification of a firing: a title and sentence for people, `details` for machines. */
export function describeFiring(
  rule: { id: string; name: string; toolset: string | null; tenant: string | null },
  predicate: EmpirePredicate,
  observation: Observation,
  scope: Period,
  now: Date,
): FiringMessage {
  const from = scope.from.toISOString();
  const to = scope.to.toISOString();
  const toolset = rule.toolset ?? 'every toolset';
  const forTenant = rule.tenant === null ? '' : ` for tenant ${rule.tenant}`;
  const base = { toolset: rule.toolset, tenant: rule.tenant, rule: { id: rule.id, name: rule.name }, predicate };
  if (observation.kind === 'empire_count_gte' && predicate.kind === 'empire_count_gte') {
    const what = predicate.eventType === undefined ? 'event' : `${predicate.eventType} event`;
    return {
      title: `${rule.name}: ${plural(observation.events, what)} on ${toolset}${forTenant}`,
      text: `${plural(observation.events, what)} of ${toolset}${forTenant} ${observation.events === 1 ? 'was' : 'were'} received in the ${predicate.windowMinutes} minutes to ${to}, at least the rule's ${predicate.count}.`,
      severity: 'warning',
      details: { ...base, scope: { from, to }, observed: { events: observation.events } },
    };
  }
  if (observation.kind === 'cross_toolset_join' && predicate.kind === 'cross_toolset_join') {
    const mine = predicate.eventType === undefined ? toolset : `${toolset} (${predicate.eventType})`;
    const other = predicate.otherEventType === undefined ? predicate.otherToolset : `${predicate.otherToolset} (${predicate.otherEventType})`;
    const listed = observation.tenants.slice(0, 5).map((t) => `${t.tenant} (${t.events} + ${t.otherEvents})`);
    const more = observation.total > listed.length ? ` and ${observation.total - listed.length} more` : '';
    return {
      title: `${rule.name}: ${plural(observation.total, 'tenant')} in both ${toolset} and ${predicate.otherToolset}`,
      text: `${plural(observation.total, 'tenant')} sent events to both ${mine} and ${other} in the ${predicate.windowMinutes} minutes to ${to} (the rule needs ${predicate.minTenants ?? DEFAULT_MIN_TENANTS}): ${listed.join(', ')}${more}.`,
      severity: 'warning',
      details: { ...base, scope: { from, to }, observed: { total: observation.total, tenants: observation.tenants.slice(0, DETAIL_LIMIT) } },
    };
  }
  if (observation.kind === 'graph_lag_gte' && predicate.kind === 'graph_lag_gte' && observation.lagSec !== null) {
    const of = predicate.nodeKind === undefined ? '' : ` for ${predicate.nodeKind} nodes`;
    return {
      title: `${rule.name}: knowledge graph ${observation.lagSec} s behind${of}`,
      text: `The knowledge-graph materialiser was ${plural(observation.lagSec, 'second')} behind${of} at ${now.toISOString()}, at least the rule's ${predicate.lagSec}.`,
      severity: 'warning',
      details: { ...base, observed: { lagSec: observation.lagSec, at: now.toISOString() } },
    };
  }
  throw new Error(`observation ${observation.kind} does not belong to predicate ${predicate.kind}`);
}

// The service

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

type EmpireRuleOutcome = RuleOutcome | 'unknown';

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
  const { db, clock, audit, outbound, config, log, graphLag } = deps;

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

  /**
   * One rule in one transaction, under `FOR UPDATE SKIP LOCKED` on its row, as for honeypot rules
   * (docs/honeypot-alerts.md, Concurrency): an overlapping run passes the rule by, and a run that
   * locks it after a commit re-reads the advanced `evaluatedUntil` and `lastFiredAt`, so a window
   * is never evaluated, nor a firing enqueued, twice.
   */
  async function evaluateRule(id: string, now: Date): Promise<EmpireRuleOutcome> {
    return withTransaction(db, async (tx): Promise<EmpireRuleOutcome> => {
      const rule = await repo.lockRuleForEvaluation(tx, id);
      if (!rule) return 'skipped';
      const predicate = parseStoredPredicate(rule.predicate, rule);
      if (!predicate) throw new Error(`empire alert rule ${id} has a predicate that is not in the union`);
      const plan = planEvaluation({ ...rule, predicate }, now);
      if (plan.action === 'skip') return 'not-due';
      const { outcome, observation } = await carryOut({
        plan,
        silenceUntil: rule.silenceUntil,
        now,
        observe: (scope) => observe(tx, rule, predicate, scope),
        matches: (o) => matches(predicate, o),
        advance: (patch) => repo.updateRule(tx, id, patch),
        fire: async (o, scope) => {
          const message = describeFiring(rule, predicate, o, scope, now);
          await outbound.enqueue(tx, { source: OUTBOUND_SOURCE, sourceId: id, destinations: rule.destinations as Destination[], message: { ...message, firedAt: now } });
        },
      });
      return outcome === 'quiet' && observation?.kind === 'graph_lag_gte' && observation.lagSec === null ? 'unknown' : outcome;
    });
  }

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
    const problem = checkPredicate(input.predicate, { toolset: input.toolset });
    if (problem) throw badRequest('invalid-predicate', problem.human, { field: `body.${problem.field}` });
    const unusable = validateDestinations(input.destinations, config);
    if (unusable) throw badRequest('invalid-destinations', `A destination cannot be used: ${unusable}.`, { field: 'body.destinations' });
    const row: repo.RuleRow = {
      id: randomUUID(),
      toolset: input.toolset,
      tenant: input.tenant ?? null,
      name: input.name,
      enabled: input.enabled ?? true,
      predicate: normalizePredicate(input.predicate),
      destinations: input.destinations,
      createdAt: clock.now(),
      lastFiredAt: null,
      silenceUntil: null,
      evaluatedUntil: null,
    };
    await repo.insertRule(tx, row);
    await audit.record(tx, {
      verb: 'empire-alert.create',
      target: `empire-alert-rule:${row.id}`,
      surface: 'api',
      actor: actorOf(ctx.principal),
      after: toRuleView(row),
      requestId: ctx.requestId,
    });
    return { ok: true, id: row.id, toolset: input.toolset };
  }

  return {
    /** Every rule of a toolset, enabled and disabled; with `tenant`, only the rules made for it. An unknown toolset has none. */
    async list(toolset: string, tenant: string | undefined, caller: ToolsetCaller): Promise<{ tenant: string | null; toolset: string; rules: EmpireAlertRuleView[]; freshness: Freshness }> {
      assertToolsetInReach(caller, toolset, 'read the alert rules of');
      const rows = await repo.listRules(db, toolset, tenant ?? null);
      return { tenant: tenant ?? null, toolset, rules: rows.map(toRuleView), freshness: rulesFreshness(EMPIRE_ALERT_PRODUCER, rows) };
    },

    /**
     * The deliveries of a toolset's rules (with `tenant`, of the rules made for it), newest first
     * (docs/outbound.md, "Delivery listings"). A token bound to other toolsets is refused (403).
     */
    async deliveries(
      toolset: string,
      tenant: string | undefined,
      query: DeliveryQuery,
      caller: ToolsetCaller,
    ): Promise<{ tenant: string | null; toolset: string; deliveries: RuleDeliveryView[]; nextCursor: string | null }> {
      assertToolsetInReach(caller, toolset, 'read the alert deliveries of');
      const rows = await repo.listRules(db, toolset, tenant ?? null);
      const rules = rows.map((r) => ({ id: r.id, name: r.name, destinations: r.destinations as Destination[] }));
      return { tenant: tenant ?? null, toolset, ...(await listRuleDeliveries(outbound, OUTBOUND_SOURCE, rules, query)) };
    },

    /**
     * Creates a rule (the endpoint; later, triage from an accepted proposal). The predicate is
     * checked against the union's allowed values (400 `invalid-predicate`) and the destinations
     * against the outbound policy (400 `invalid-destinations`); audited as `empire-alert.create`.
     */
    async create(ctx: CallContext, input: CreateEmpireRuleInput): Promise<{ ok: true; id: string; toolset: string }> {
      return withTransaction(db, (tx) => createWithin(tx, ctx, input));
    },

    /** `create` inside the caller's transaction (triage accepts a rule proposal and records the decision in one). */
    createWithin,

    /**
     * Changes name, enabled and silenceUntil; a call that changes nothing is not audited. Enabling
     * a disabled rule restarts its evaluation at that moment (a windowed rule still reads its full
     * window then).
     */
    async update(ctx: CallContext, id: string, input: UpdateEmpireRuleInput): Promise<{ rule: EmpireAlertRuleView }> {
      return withTransaction(db, async (tx) => {
        const row = await repo.lockRule(tx, id);
        assertThat(row, notFound(`There is no empire alert rule ${id}.`));
        if (row.toolset !== null) assertToolsetInReach(ctx.principal, row.toolset, 'change alert rules of');
        const now = clock.now();
        const patch: repo.RulePatch = changedFields(row, input, now);
        if (Object.keys(patch).length === 0) return { rule: toRuleView(row) };
        const next = { ...row, ...patch };
        await repo.updateRule(tx, id, patch);
        await audit.record(tx, {
          verb: 'empire-alert.update',
          target: `empire-alert-rule:${id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: toRuleView(row),
          after: toRuleView(next),
          requestId: ctx.requestId,
        });
        return { rule: toRuleView(next) };
      });
    },

    /** Evaluates every enabled rule at `now` (the job's time), one transaction per rule. */
    async evaluateAll(now: Date): Promise<EmpireEvaluationStats> {
      let unknown = 0;
      const stats = await evaluateEach(
        await repo.listEnabledRuleIds(db),
        async (id) => {
          const outcome = await evaluateRule(id, now);
          if (outcome !== 'unknown') return outcome;
          unknown++;
          return 'quiet';
        },
        log,
        'empire alert rule',
      );
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
