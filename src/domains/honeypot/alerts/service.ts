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
import { checkPredicate, normalizePredicate, parseStoredPredicate, type Predicate, windowMsOf } from './predicates.ts';
import * as repo from './repository.ts';
import { findTenantBySlug } from '../repository.ts';

/**
 * Honeypot alert rules (spec D6, C Events 7): creation and changes (audited), and their
 * evaluation by the `alert-evaluate` job, off the ingest path. A firing commits, in one
 * transaction, the rule's `lastFiredAt` and `evaluatedUntil` and one outbound delivery per
 * destination; the `outbound-dispatch` job sends them with retries. See docs/honeypot-alerts.md.
 */

// The settle margin, the plan, silences and run counters are shared with empire rules
// (platform/alerting/plan.ts); a tarpit's `triggered_at` settles like a `received_at`.
export { type EvaluationStats, isSilenced, type Period, type Plan, SETTLE_MS } from '../../../platform/alerting/plan.ts';
/** Fingerprints or tarpits listed in one notification (the count covers all of them). */
export const DETAIL_LIMIT = 20;
export const OUTBOUND_SOURCE = 'honeypot-rule';

export interface AlertRuleView {
  id: string;
  tenant: string;
  name: string;
  enabled: boolean;
  predicate: Predicate;
  destinations: RedactedDestination[];
  createdAt: string;
  lastFiredAt: string | null;
  silenceUntil: string | null;
  evaluatedUntil: string | null;
}

/** The public form of a rule: destinations redacted, never a webhook secret or URL path. */
/** The job that evaluates honeypot rules, every minute. */
export const ALERT_PRODUCER: Producer = { job: 'alert-evaluate', schedule: '* * * * *' };

export function toRuleView(row: repo.RuleRow, tenantSlug: string): AlertRuleView {
  return {
    id: row.id,
    tenant: tenantSlug,
    name: row.name,
    enabled: row.enabled,
    predicate: parseStoredPredicate(row.predicate) ?? (row.predicate as Predicate),
    destinations: (row.destinations as Destination[]).map(redactDestination),
    createdAt: row.createdAt.toISOString(),
    lastFiredAt: row.lastFiredAt?.toISOString() ?? null,
    silenceUntil: row.silenceUntil?.toISOString() ?? null,
    evaluatedUntil: row.evaluatedUntil?.toISOString() ?? null,
  };
}

// Pure evaluation

/** The plan of a honeypot rule: windowed kinds read (to − windowMinutes, to], the others their period. */
export function planEvaluation(
  rule: { predicate: Predicate; createdAt: Date; evaluatedUntil: Date | null; lastFiredAt: Date | null },
  now: Date,
): Plan {
  return planWindowed(rule, windowMsOf(rule.predicate), now);
}

/** What the database said about a rule's scope. */
export type Observation =
  | { kind: 'liar_rate_above'; events: number; liars: number }
  | { kind: 'event_count_above'; events: number }
  | { kind: 'new_fingerprint_cluster'; total: number; fingerprints: repo.NewFingerprint[] }
  | { kind: 'tarpit_triggered'; total: number; tarpits: repo.OpenedTarpit[] };

/** Whether the predicate holds for what was observed. */
export function matches(predicate: Predicate, observation: Observation): boolean {
  switch (predicate.kind) {
    case 'liar_rate_above': {
      if (observation.kind !== predicate.kind) return false;
      const { events, liars } = observation;
      return events > 0 && events >= (predicate.minEvents ?? 0) && (liars * 100) / events > predicate.pct;
    }
    case 'event_count_above':
      return observation.kind === predicate.kind && observation.events > predicate.count;
    case 'new_fingerprint_cluster':
      return observation.kind === predicate.kind && observation.total > 0;
    case 'tarpit_triggered':
      return observation.kind === predicate.kind && observation.total > 0;
  }
}

const pct1 = (part: number, whole: number) => Math.round((part * 1000) / whole) / 10;

/** The notification of a firing: a title and sentence for people, `details` for machines. */
export function describeFiring(
  rule: { id: string; name: string },
  tenant: string,
  predicate: Predicate,
  observation: Observation,
  scope: Period,
): FiringMessage {
  const from = scope.from.toISOString();
  const to = scope.to.toISOString();
  const base = { tenant, rule: { id: rule.id, name: rule.name }, predicate, scope: { from, to } };
  if (observation.kind === 'liar_rate_above' && predicate.kind === 'liar_rate_above') {
    const rate = pct1(observation.liars, observation.events);
    return {
      title: `${rule.name}: liar rate ${rate}% on ${tenant}`,
      text: `${observation.liars} of ${plural(observation.events, 'event')} received on ${tenant} in the ${predicate.windowMinutes} minutes to ${to} claimed a crawler identity they could not prove (LIAR): ${rate}%, above the rule's ${predicate.pct}%.`,
      severity: 'critical',
      details: { ...base, observed: { events: observation.events, liars: observation.liars, liarRatePct: rate } },
    };
  }
  if (observation.kind === 'event_count_above' && predicate.kind === 'event_count_above') {
    const what = predicate.uaClass === undefined ? 'event' : `${predicate.uaClass} event`;
    return {
      title: `${rule.name}: ${plural(observation.events, what)} on ${tenant}`,
      text: `${plural(observation.events, what)} were received on ${tenant} in the ${predicate.windowMinutes} minutes to ${to}, above the rule's ${predicate.count}.`,
      severity: 'warning',
      details: { ...base, observed: { events: observation.events } },
    };
  }
  if (observation.kind === 'new_fingerprint_cluster' && predicate.kind === 'new_fingerprint_cluster') {
    const listed = observation.fingerprints.slice(0, 5).map((f) => `${f.fingerprintId} (${f.uaClass}, JA4 ${f.ja4 ?? 'none'}, AS ${f.asn ?? 'unknown'})`);
    const more = observation.total > listed.length ? ` and ${observation.total - listed.length} more` : '';
    return {
      title: `${rule.name}: ${plural(observation.total, 'new fingerprint')} on ${tenant}`,
      text: `${plural(observation.total, 'fingerprint')} reached ${plural(predicate.minEvents ?? 1, 'event')} on ${tenant} between ${from} and ${to}: ${listed.join(', ')}${more}.`,
      severity: 'info',
      details: {
        ...base,
        observed: {
          total: observation.total,
          fingerprints: observation.fingerprints.slice(0, DETAIL_LIMIT).map((f) => ({ ...f, uaSample: f.uaSample.slice(0, 300) })),
        },
      },
    };
  }
  if (observation.kind === 'tarpit_triggered' && predicate.kind === 'tarpit_triggered') {
    const listed = observation.tarpits.slice(0, 5).map((t) => `${t.fingerprintId} (${t.reason})`);
    const more = observation.total > listed.length ? ` and ${observation.total - listed.length} more` : '';
    return {
      title: `${rule.name}: ${plural(observation.total, 'tarpit')} opened on ${tenant}`,
      text: `${plural(observation.total, 'fingerprint')} of ${tenant} ${observation.total === 1 ? 'was' : 'were'} tarpitted between ${from} and ${to}: ${listed.join(', ')}${more}.`,
      severity: 'warning',
      details: {
        ...base,
        observed: {
          total: observation.total,
          tarpits: observation.tarpits.slice(0, DETAIL_LIMIT).map((t) => ({
            ...t,
            triggeredAt: t.triggeredAt.toISOString(),
            expiresAt: t.expiresAt.toISOString(),
          })),
        },
      },
    };
  }
  throw new Error(`observation ${observation.kind} does not belong to predicate ${predicate.kind}`);
}

// The service

export interface CreateRuleInput {
  tenant: string;
  name: string;
  predicate: Predicate;
  destinations: Destination[];
  enabled?: boolean | undefined;
}

export type UpdateRuleInput = RuleChange;

export interface AlertServiceDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  outbound: Outbound;
  config: Pick<Config, 'outbound' | 'integrations'>;
  log: FastifyBaseLogger;
}

export function createAlertService(deps: AlertServiceDeps) {
  const { db, clock, audit, outbound, config, log } = deps;

  async function observe(tx: Db, tenantId: string, predicate: Predicate, scope: Period): Promise<Observation> {
    const span = { tenantId, after: scope.from, upTo: scope.to };
    switch (predicate.kind) {
      case 'liar_rate_above': {
        const { events, liars } = await repo.countEvents(tx, span);
        return { kind: predicate.kind, events, liars };
      }
      case 'event_count_above': {
        const { events } = await repo.countEvents(tx, { ...span, uaClass: predicate.uaClass });
        return { kind: predicate.kind, events };
      }
      case 'new_fingerprint_cluster': {
        const found = await repo.newFingerprints(tx, { ...span, minEvents: predicate.minEvents ?? 1, limit: DETAIL_LIMIT });
        return { kind: predicate.kind, total: found.total, fingerprints: found.rows };
      }
      case 'tarpit_triggered': {
        const found = await repo.tarpitsOpened(tx, { ...span, limit: DETAIL_LIMIT });
        return { kind: predicate.kind, total: found.total, tarpits: found.rows };
      }
    }
  }

  /**
   * One rule in one transaction, under `FOR UPDATE SKIP LOCKED` on its row: the scheduler runs a
   * fire time once across instances, but a manual run, or a run still going when the next fire
   * time starts elsewhere, may overlap. The lock makes the other run pass the rule by, and a run
   * that takes the lock after a commit re-reads the advanced `evaluatedUntil` (and `lastFiredAt`),
   * so a period is never evaluated, and a firing never enqueued, twice.
   */
  async function evaluateRule(id: string, now: Date): Promise<RuleOutcome> {
    return withTransaction(db, async (tx): Promise<RuleOutcome> => {
      const rule = await repo.lockRuleForEvaluation(tx, id);
      if (!rule) return 'skipped';
      const predicate = parseStoredPredicate(rule.predicate);
      if (!predicate) throw new Error(`alert rule ${id} has a predicate that is not in the union`);
      const plan = planEvaluation({ ...rule, predicate }, now);
      if (plan.action === 'skip') return 'not-due';
      const { outcome } = await carryOut({
        plan,
        silenceUntil: rule.silenceUntil,
        now,
        observe: (scope) => observe(tx, rule.tenantId, predicate, scope),
        matches: (observation) => matches(predicate, observation),
        advance: (patch) => repo.updateRule(tx, id, patch),
        fire: async (observation, scope) => {
          const tenant = (await repo.tenantSlugOf(tx, rule.tenantId)) ?? rule.tenantId;
          const message = describeFiring(rule, tenant, predicate, observation, scope);
          await outbound.enqueue(tx, { source: OUTBOUND_SOURCE, sourceId: id, destinations: rule.destinations as Destination[], message: { ...message, firedAt: now } });
        },
      });
      return outcome;
    });
  }

  /** The id of the tenant a read names (404 for an unknown one); null for every tenant. */
  async function tenantIdOf(tenantSlug: string | undefined): Promise<string | null> {
    if (tenantSlug === undefined) return null;
    const tenant = await findTenantBySlug(db, tenantSlug);
    assertThat(tenant, notFound(`There is no tenant ${tenantSlug}.`));
    return tenant.id;
  }

  return {
    async list(tenantSlug: string | undefined): Promise<{ tenant: string | null; rules: AlertRuleView[]; freshness: Freshness }> {
      const rows = await repo.listRules(db, await tenantIdOf(tenantSlug));
      return { tenant: tenantSlug ?? null, rules: rows.map((r) => toRuleView(r, r.tenantSlug)), freshness: rulesFreshness(ALERT_PRODUCER, rows) };
    },

    /**
     * The deliveries of the rules of one tenant (or of all), newest first (docs/outbound.md,
     * "Delivery listings"); 404 for an unknown tenant. Honeypot rules belong to no toolset, so the
     * read scope alone decides who sees them.
     */
    async deliveries(tenantSlug: string | undefined, query: DeliveryQuery): Promise<{ tenant: string | null; deliveries: RuleDeliveryView[]; nextCursor: string | null }> {
      const rows = await repo.listRules(db, await tenantIdOf(tenantSlug));
      const rules = rows.map((r) => ({ id: r.id, name: r.name, destinations: r.destinations as Destination[] }));
      return { tenant: tenantSlug ?? null, ...(await listRuleDeliveries(outbound, OUTBOUND_SOURCE, rules, query)) };
    },

    async create(ctx: CallContext, input: CreateRuleInput): Promise<{ ok: true; id: string }> {
      const problem = checkPredicate(input.predicate);
      if (problem) throw badRequest('invalid-predicate', problem.human, { field: `body.${problem.field}` });
      const unusable = validateDestinations(input.destinations, config);
      if (unusable) throw badRequest('invalid-destinations', `A destination cannot be used: ${unusable}.`, { field: 'body.destinations' });
      const tenant = await findTenantBySlug(db, input.tenant);
      assertThat(tenant, notFound(`There is no tenant ${input.tenant}.`));
      const row: repo.RuleRow = {
        id: randomUUID(),
        tenantId: tenant.id,
        name: input.name,
        enabled: input.enabled ?? true,
        predicate: normalizePredicate(input.predicate),
        destinations: input.destinations,
        createdAt: clock.now(),
        lastFiredAt: null,
        silenceUntil: null,
        evaluatedUntil: null,
      };
      await withTransaction(db, async (tx) => {
        await repo.insertRule(tx, row);
        await audit.record(tx, {
          verb: 'alert.create',
          target: `alert-rule:${row.id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          after: toRuleView(row, tenant.slug),
          requestId: ctx.requestId,
        });
      });
      return { ok: true, id: row.id };
    },

    /**
     * Changes name, enabled and silenceUntil; a call that changes nothing is not audited. Enabling
     * a disabled rule restarts its evaluation at that moment, so it does not report what happened
     * while it was off.
     */
    async update(ctx: CallContext, id: string, input: UpdateRuleInput): Promise<{ rule: AlertRuleView }> {
      return withTransaction(db, async (tx) => {
        const row = await repo.lockRule(tx, id);
        assertThat(row, notFound(`There is no alert rule ${id}.`));
        const now = clock.now();
        const patch: repo.RulePatch = changedFields(row, input, now);
        const slug = (await repo.tenantSlugOf(tx, row.tenantId)) ?? row.tenantId;
        if (Object.keys(patch).length === 0) return { rule: toRuleView(row, slug) };
        const next = { ...row, ...patch };
        await repo.updateRule(tx, id, patch);
        await audit.record(tx, {
          verb: 'alert.update',
          target: `alert-rule:${id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: toRuleView(row, slug),
          after: toRuleView(next, slug),
          requestId: ctx.requestId,
        });
        return { rule: toRuleView(next, slug) };
      });
    },

    /** Evaluates every enabled rule at `now` (the job's time), one transaction per rule. */
    async evaluateAll(now: Date): Promise<EvaluationStats> {
      return evaluateEach(await repo.listEnabledRuleIds(db), (id) => evaluateRule(id, now), log, 'alert rule');
    },
  };
}

export type AlertService = ReturnType<typeof createAlertService>;

/** Every minute: evaluates the enabled rules and enqueues the notifications of those that fire. */
export function alertJobs(alerts: AlertService): JobDefinition[] {
  return [
    {
      name: ALERT_PRODUCER.job,
      description:
        'Evaluates every enabled honeypot alert rule against the events received since its last evaluation (or in its window); a firing rule records lastFiredAt and enqueues one notification per destination for outbound-dispatch, unless silenced.',
      schedule: ALERT_PRODUCER.schedule,
      run: async ({ now }) => ({ ...(await alerts.evaluateAll(now)) }),
    },
  ];
}
