import type { FastifyBaseLogger } from 'fastify';
import { createRuleEngine, type RuleKind } from '../../../platform/alerting/engine.ts';
import type { EvaluationStats, Period, RuleChange } from '../../../platform/alerting/plan.ts';
import type { AuditLog, CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Config } from '../../../platform/config.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import type { Freshness, Producer } from '../../../platform/freshness.ts';
import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import { type Destination, type RedactedDestination, redactDestination } from '../../../platform/outbound/destinations.ts';
import type { DeliveryQuery, RuleDeliveryView } from '../../../platform/outbound/deliveries.ts';
import type { Outbound } from '../../../platform/outbound/service.ts';
import type { TenantService } from '../tenants/service.ts';
import { DETAIL_LIMIT, describeFiring, matches, type Observation } from './observations.ts';
import { checkPredicate, normalizePredicate, parseStoredPredicate, type Predicate, windowMsOf } from './predicates.ts';
import * as repo from './repository.ts';

/**
 * Honeypot alert rules (spec D6, C Events 7) on the shared alert-rule engine
 * (platform/alerting/engine.ts): what is honeypot's here is the rule's tenant, what a predicate
 * reads from the tenant's events, fingerprints and tarpits, and the rule's public form. The
 * `alert-evaluate` job evaluates them off the ingest path; a firing commits, in one transaction,
 * the rule's `lastFiredAt` and `evaluatedUntil` and one outbound delivery per destination, which
 * the `outbound-dispatch` job sends with retries. See docs/honeypot/alerts.md.
 */

export const OUTBOUND_SOURCE = 'honeypot-rule';
/** The job that evaluates honeypot rules, every minute. */
export const ALERT_PRODUCER: Producer = { job: 'alert-evaluate', schedule: '* * * * *' };

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

/** What a predicate reads over `scope`: the tenant's events, fingerprints or tarpits (repository.ts). */
async function observe(tx: Db, rule: repo.RuleRow, predicate: Predicate, scope: Period): Promise<Observation> {
  const span = { tenantId: rule.tenantId, after: scope.from, upTo: scope.to };
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

type TenantLookups = Pick<TenantService, 'requireBySlug' | 'idOf' | 'slugOf'>;

/** Honeypot rules as the engine runs them. */
export function honeypotRules(tenants: TenantLookups): RuleKind<repo.RuleRow, Predicate, Observation, AlertRuleView> {
  /** A rule names its tenant by id; notifications and views name it by slug (the id if the tenant is gone). */
  const slugOf = async (tx: Db, rule: repo.RuleRow) => (await tenants.slugOf(rule.tenantId, tx)) ?? rule.tenantId;
  return {
    noun: 'alert rule',
    source: OUTBOUND_SOURCE,
    producer: ALERT_PRODUCER,
    audit: { create: 'alert.create', update: 'alert.update', target: 'alert-rule' },
    store: repo.ruleStore,
    predicates: { read: (rule) => parseStoredPredicate(rule.predicate), windowMs: windowMsOf, matches },
    observer: {
      observe,
      describe: async (tx, rule, predicate, observation, scope) => describeFiring(rule, await slugOf(tx, rule), predicate, observation, scope),
    },
    async presenter(tx, rule) {
      const slug = await slugOf(tx, rule);
      return (row) => toRuleView(row, slug);
    },
  };
}

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
  /** The tenant service owns the slug lookups. */
  tenants: TenantLookups;
}

export function createAlertService(deps: AlertServiceDeps) {
  const { db, tenants } = deps;
  const engine = createRuleEngine(honeypotRules(tenants), deps);

  return {
    async list(tenantSlug: string | undefined): Promise<{ tenant: string | null; rules: AlertRuleView[]; freshness: Freshness }> {
      const rows = await repo.listRules(db, await tenants.idOf(tenantSlug));
      return { tenant: tenantSlug ?? null, rules: rows.map((r) => toRuleView(r, r.tenantSlug)), freshness: engine.freshness(rows) };
    },

    /**
     * The deliveries of the rules of one tenant (or of all), newest first (docs/platform/outbound.md,
     * "Delivery listings"); 404 for an unknown tenant. Honeypot rules belong to no toolset, so the
     * read scope alone decides who sees them.
     */
    async deliveries(tenantSlug: string | undefined, query: DeliveryQuery): Promise<{ tenant: string | null; deliveries: RuleDeliveryView[]; nextCursor: string | null }> {
      const rows = await repo.listRules(db, await tenants.idOf(tenantSlug));
      return { tenant: tenantSlug ?? null, ...(await engine.deliveries(rows, query)) };
    },

    /**
     * Creates a rule for a tenant: 400 `invalid-predicate` or `invalid-destinations` for values
     * the predicate or the outbound policy do not allow, 404 for an unknown tenant; audited as
     * `alert.create`.
     */
    async create(ctx: CallContext, input: CreateRuleInput): Promise<{ ok: true; id: string }> {
      engine.refuseUnusable(checkPredicate(input.predicate), input.destinations);
      const tenant = await tenants.requireBySlug(input.tenant);
      const rule = { name: input.name, predicate: normalizePredicate(input.predicate), destinations: input.destinations, enabled: input.enabled };
      const row = await withTransaction(db, (tx) => engine.insert(tx, ctx, { tenantId: tenant.id }, rule, (r) => toRuleView(r, tenant.slug)));
      return { ok: true, id: row.id };
    },

    /** Changes name, enabled and silenceUntil (engine.ts); audited as `alert.update`. */
    update: (ctx: CallContext, id: string, input: UpdateRuleInput): Promise<{ rule: AlertRuleView }> => engine.update(ctx, id, input),

    /** Evaluates every enabled rule at `now` (the job's time), one transaction per rule. */
    async evaluateAll(now: Date): Promise<EvaluationStats> {
      return (await engine.evaluateAll(now)).stats;
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
