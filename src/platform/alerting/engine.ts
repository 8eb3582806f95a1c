import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../audit/service.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import { withTransaction } from '../db/transaction.ts';
import { assertThat, badRequest, notFound } from '../errors.ts';
import type { Freshness, Producer } from '../freshness.ts';
import { type Destination, validateDestinations } from '../outbound/destinations.ts';
import { type DeliveryQuery, listRuleDeliveries, type RuleDeliveryView } from '../outbound/deliveries.ts';
import type { Outbound } from '../outbound/service.ts';
import type { PredicateProblem } from './checks.ts';
import { rulesFreshness } from './freshness.ts';
import {
  carryOut,
  changedFields,
  evaluateEach,
  type EvaluationStats,
  type FiringMessage,
  type Period,
  planEvaluation,
  type RuleChange,
  type RuleOutcome,
} from './plan.ts';
import type { RuleStore, StoredRule } from './store.ts';

/**
 * The alert-rule engine every kind of rule runs on (honeypot and empire rules): creating a rule
 * and changing it (audited in the same transaction), the evaluation run (one transaction per rule,
 * under `FOR UPDATE SKIP LOCKED`; plan, observe, match, silence, fire: plan.ts), the firing's
 * outbound deliveries, and what listings add (freshness, deliveries). A kind supplies its
 * predicates, its observer (what a rule looks at each evaluation, how a firing is worded) and its
 * store (its rules table). See docs/architecture.md ("Alert rules"), docs/honeypot/alerts.md and
 * docs/empire/alerts.md.
 */

/** How a kind's stored predicates read back and decide. */
export interface RulePredicates<Row, P, O> {
  /** The rule's stored predicate, normalised; null when it no longer fits the union (the evaluation then fails, logged). */
  read(rule: Row): P | null;
  /** The sliding window (and cooldown after a firing) in milliseconds; null for an incremental predicate (plan.ts). */
  windowMs(predicate: P): number | null;
  matches(predicate: P, observation: O): boolean;
}

/** What a kind's rule looks at when it is evaluated, in the evaluation's transaction. */
export interface RuleObserver<Row, P, O> {
  observe(tx: Db, rule: Row, predicate: P, scope: Period): Promise<O>;
  /** The notification of a firing (`now` is the run's time). */
  describe(tx: Db, rule: Row, predicate: P, observation: O, scope: Period, now: Date): Promise<FiringMessage>;
  /** A reading that could not be taken (it does not match); the run counts it as `unknown`. */
  unknown?(observation: O): boolean;
}

export interface RuleKind<Row extends StoredRule, P, O, View> {
  /** `alert rule`: in 404 sentences and log lines. */
  noun: string;
  /** The outbound producer its firings are enqueued under (`honeypot-rule`). */
  source: string;
  /** The job that evaluates these rules. */
  producer: Producer;
  /** Audit verbs, and the target prefix (`alert-rule` → `alert-rule:<id>`). */
  audit: { create: string; update: string; target: string };
  store: RuleStore<Row>;
  predicates: RulePredicates<Row, P, O>;
  observer: RuleObserver<Row, P, O>;
  /** How rules of `rule`'s owner are shown (destinations redacted); called once per change, in its transaction. */
  presenter(tx: Db, rule: Row): Promise<(rule: Row) => View>;
  /** Throws when the caller may not change `rule` (e.g. a token bound to other toolsets). */
  mayChange?(ctx: CallContext, rule: Row): void;
}

/** A new rule's own fields; the engine adds the id, the creation time and the empty run columns. */
export interface NewRule<P> {
  name: string;
  /** Normalised (defaults filled in): stored as it is. */
  predicate: P;
  destinations: Destination[];
  enabled?: boolean | undefined;
}

export interface RuleEngineDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  outbound: Outbound;
  config: Pick<Config, 'outbound' | 'integrations'>;
  log: { error(details: object, message: string): void };
}

/** A run's counters, and how many rules could not take their reading (`RuleObserver.unknown`). */
export interface EngineRun {
  stats: EvaluationStats;
  unknown: number;
}

export function createRuleEngine<Row extends StoredRule, P, O, View>(kind: RuleKind<Row, P, O, View>, deps: RuleEngineDeps) {
  const { db, clock, audit, outbound, config, log } = deps;
  const { store, predicates, observer } = kind;

  /**
   * One rule in one transaction, under `FOR UPDATE SKIP LOCKED` on its row: the scheduler runs a
   * fire time once across instances, but a manual run, or a run still going when the next fire
   * time starts elsewhere, may overlap. The lock makes the other run pass the rule by, and a run
   * that takes the lock after a commit re-reads the advanced `evaluatedUntil` (and `lastFiredAt`),
   * so a period is never evaluated, and a firing never enqueued, twice.
   */
  async function evaluateRule(id: string, now: Date): Promise<RuleOutcome | 'unknown'> {
    return withTransaction(db, async (tx): Promise<RuleOutcome | 'unknown'> => {
      const rule = await store.lockForEvaluation(tx, id);
      if (!rule) return 'skipped';
      const predicate = predicates.read(rule);
      if (predicate === null) throw new Error(`${kind.noun} ${id} has a predicate that is not in the union`);
      const plan = planEvaluation(rule, predicates.windowMs(predicate), now);
      if (plan.action === 'skip') return 'not-due';
      const { outcome, observation } = await carryOut({
        plan,
        silenceUntil: rule.silenceUntil,
        now,
        observe: (scope) => observer.observe(tx, rule, predicate, scope),
        matches: (o) => predicates.matches(predicate, o),
        advance: (patch) => store.update(tx, id, patch),
        fire: async (o, scope) => {
          const message = await observer.describe(tx, rule, predicate, o, scope, now);
          await outbound.enqueue(tx, { source: kind.source, sourceId: id, destinations: rule.destinations as Destination[], message: { ...message, firedAt: now } });
        },
      });
      return outcome === 'quiet' && observation !== null && observer.unknown?.(observation) === true ? 'unknown' : outcome;
    });
  }

  return {
    /**
     * Refuses a rule whose predicate has a value it does not allow (400 `invalid-predicate`, the
     * problem a kind's check found) or a destination the outbound policy refuses (400
     * `invalid-destinations`).
     */
    refuseUnusable(problem: PredicateProblem | null, destinations: readonly Destination[]): void {
      if (problem) throw badRequest('invalid-predicate', problem.human, { field: `body.${problem.field}` });
      const unusable = validateDestinations(destinations, config);
      if (unusable) throw badRequest('invalid-destinations', `A destination cannot be used: ${unusable}.`, { field: 'body.destinations' });
    },

    /** Stores a new rule of `owner` and audits its creation (`after`: `show(row)`), in `tx`. */
    async insert(tx: Db, ctx: CallContext, owner: Omit<Row, keyof StoredRule>, input: NewRule<P>, show: (rule: Row) => View): Promise<Row> {
      const row = {
        ...owner,
        id: randomUUID(),
        name: input.name,
        enabled: input.enabled ?? true,
        predicate: input.predicate,
        destinations: input.destinations,
        createdAt: clock.now(),
        lastFiredAt: null,
        silenceUntil: null,
        evaluatedUntil: null,
      } as Row;
      await store.insert(tx, row);
      await audit.record(tx, {
        verb: kind.audit.create,
        target: `${kind.audit.target}:${row.id}`,
        surface: 'api',
        actor: actorOf(ctx.principal),
        after: show(row),
        requestId: ctx.requestId,
      });
      return row;
    },

    /**
     * Changes name, enabled and silenceUntil; a call that changes nothing is not audited. Enabling
     * a disabled rule restarts its evaluation at that moment, so it does not report what happened
     * while it was off (a windowed rule still reads its full window then). 404 for an unknown id.
     */
    async update(ctx: CallContext, id: string, input: RuleChange): Promise<{ rule: View }> {
      return withTransaction(db, async (tx) => {
        const row = await store.lock(tx, id);
        assertThat(row, notFound(`There is no ${kind.noun} ${id}.`));
        kind.mayChange?.(ctx, row);
        const patch = changedFields(row, input, clock.now());
        const show = await kind.presenter(tx, row);
        if (Object.keys(patch).length === 0) return { rule: show(row) };
        const next = { ...row, ...patch };
        await store.update(tx, id, patch);
        await audit.record(tx, {
          verb: kind.audit.update,
          target: `${kind.audit.target}:${id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: show(row),
          after: show(next),
          requestId: ctx.requestId,
        });
        return { rule: show(next) };
      });
    },

    /** Evaluates every enabled rule at `now` (the job's time), one transaction per rule. */
    async evaluateAll(now: Date): Promise<EngineRun> {
      let unknown = 0;
      const stats = await evaluateEach(
        await store.enabledIds(db),
        async (id) => {
          const outcome = await evaluateRule(id, now);
          if (outcome !== 'unknown') return outcome;
          unknown++;
          return 'quiet';
        },
        log,
        kind.noun,
      );
      return { stats, unknown };
    },

    /** How fresh a listing of these rules is (platform/alerting/freshness.ts). */
    freshness(rules: readonly StoredRule[]): Freshness {
      return rulesFreshness(kind.producer, rules);
    },

    /** The deliveries of the listed rules' firings (docs/platform/outbound.md, "Delivery listings"). */
    deliveries(rules: readonly StoredRule[], query: DeliveryQuery): Promise<{ deliveries: RuleDeliveryView[]; nextCursor: string | null }> {
      return listRuleDeliveries(outbound, kind.source, rules.map((r) => ({ id: r.id, name: r.name, destinations: r.destinations as Destination[] })), query);
    },
  };
}

export type RuleEngine<Row extends StoredRule, P, O, View> = ReturnType<typeof createRuleEngine<Row, P, O, View>>;
