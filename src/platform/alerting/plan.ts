/**
 * The pure, domain-free part of alert-rule evaluation that honeypot and empire rules share: which
 * span of received events a run covers, when a rule is cooling after a firing, when it is
 * silenced, and the counters a run reports. Each domain supplies what its predicates read and how
 * a firing is worded (docs/honeypot/alerts.md, docs/empire/alerts.md).
 */

/**
 * An evaluation at `now` covers events received up to `now − SETTLE_MS`. Ingest stamps
 * `received_at` when it starts and commits a moment later; reading only rows older than this
 * margin means a row that commits late is still in a period that has not been evaluated yet
 * instead of one that has.
 */
export const SETTLE_MS = 60_000;

export interface Period {
  /** Exclusive. */
  from: Date;
  /** Inclusive. */
  to: Date;
}

/**
 * What a run at `now` does with a rule:
 * - `skip`: nothing new is old enough to evaluate (`to` is not after `evaluatedUntil`), e.g. a rule
 *   created a moment ago, or one another run has just evaluated; nothing changes;
 * - `cooldown`: a windowed rule fired less than one window ago; `evaluatedUntil` advances without
 *   a look, so a condition that persists fires again at most once per window, each time on a
 *   window of events that the previous firing did not see;
 * - `evaluate`: `period` is what the evaluation consumes (`evaluatedUntil`, or the rule's creation,
 *   up to `to`); `scope` is what the predicate reads: the sliding window (to − window, to] for
 *   windowed rules, the period itself for the others.
 */
export type Plan =
  | { action: 'skip' }
  | { action: 'cooldown'; period: Period }
  | { action: 'evaluate'; period: Period; scope: Period };

/** The timestamps of a rule that planning needs. */
export interface PlannedRule {
  createdAt: Date;
  evaluatedUntil: Date | null;
  lastFiredAt: Date | null;
}

/**
 * Plans a run at `now` for a rule whose predicate reads a sliding window of `windowMs`
 * milliseconds (and then cools down for one window after a firing), or, with `windowMs` null, an
 * incremental rule that reads exactly the period since its last evaluation and never cools down.
 */
export function planEvaluation(rule: PlannedRule, windowMs: number | null, now: Date): Plan {
  const to = new Date(now.getTime() - SETTLE_MS);
  const from = rule.evaluatedUntil ?? rule.createdAt;
  if (to.getTime() <= from.getTime()) return { action: 'skip' };
  const period = { from, to };
  if (windowMs === null) return { action: 'evaluate', period, scope: period };
  if (rule.lastFiredAt !== null && now.getTime() < rule.lastFiredAt.getTime() + windowMs) return { action: 'cooldown', period };
  return { action: 'evaluate', period, scope: { from: new Date(to.getTime() - windowMs), to } };
}

/** The silence holds while `now` is before `silenceUntil`; from that instant on the rule fires again. */
export function isSilenced(silenceUntil: Date | null, now: Date): boolean {
  return silenceUntil !== null && now.getTime() < silenceUntil.getTime();
}

/** What one evaluation of one rule came to. */
export type RuleOutcome = 'not-due' | 'cooling' | 'quiet' | 'silenced' | 'fired' | 'skipped';

export interface EvaluationStats {
  /** Enabled rules this run looked at (cooling ones included; `skip` plans are not counted). */
  evaluated: number;
  fired: number;
  /** Rules whose predicate held while silenced: not sent, and the period is consumed. */
  silenced: number;
  /** Windowed rules within one window of their last firing. */
  cooling: number;
  /** Rules another run held (or disabled meanwhile); that run evaluates them. */
  skipped: number;
  /** Rules whose evaluation failed (logged); they are tried again next run. */
  failed: number;
}

export const emptyStats = (): EvaluationStats => ({ evaluated: 0, fired: 0, silenced: 0, cooling: 0, skipped: 0, failed: 0 });

/** Adds one rule's outcome to a run's counters. */
export function countOutcome(stats: EvaluationStats, outcome: RuleOutcome): void {
  if (outcome === 'skipped') stats.skipped++;
  if (outcome === 'not-due' || outcome === 'skipped') return;
  stats.evaluated++;
  if (outcome === 'fired') stats.fired++;
  if (outcome === 'silenced') stats.silenced++;
  if (outcome === 'cooling') stats.cooling++;
}

/** `1 event`, `3 events`. */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The notification of a firing: a title and sentence for people, `details` for machines. */
export interface FiringMessage {
  title: string;
  text: string;
  severity: 'info' | 'warning' | 'critical';
  details: Record<string, unknown>;
}

/**
 * Evaluates each rule in turn (one transaction each, in `evaluate`) and counts what came of it. A
 * rule whose evaluation throws is logged and counted as failed; it is tried again next run.
 */
export async function evaluateEach(
  ids: readonly string[],
  evaluate: (id: string) => Promise<RuleOutcome>,
  log: { error(details: object, message: string): void },
  what: string,
): Promise<EvaluationStats> {
  const stats = emptyStats();
  for (const id of ids) {
    try {
      countOutcome(stats, await evaluate(id));
    } catch (error) {
      log.error({ err: error, ruleId: id }, `${what} evaluation failed`);
      stats.failed++;
    }
  }
  return stats;
}

/** The rule columns a run changes: the watermark always, `lastFiredAt` on a firing. */
export interface RunPatch {
  evaluatedUntil: Date;
  lastFiredAt?: Date;
}

/**
 * Carries out a plan other than `skip` for a rule locked in the caller's transaction: a cooling
 * rule only advances its watermark; otherwise the predicate is observed over `plan.scope`, and a
 * match fires (`fire`, e.g. an outbound enqueue in the same transaction) unless silenced. Every
 * path consumes `plan.period`, so the same events are never evaluated twice. `quiet` is what a
 * non-match reports (a domain may tell an unknown reading apart).
 */
export async function carryOut<O>(args: {
  plan: Exclude<Plan, { action: 'skip' }>;
  silenceUntil: Date | null;
  now: Date;
  observe: (scope: Period) => Promise<O>;
  matches: (observation: O) => boolean;
  advance: (patch: RunPatch) => Promise<void>;
  fire: (observation: O, scope: Period) => Promise<void>;
}): Promise<{ outcome: 'cooling' | 'quiet' | 'silenced' | 'fired'; observation: O | null }> {
  const { plan, now } = args;
  const evaluatedUntil = plan.period.to;
  if (plan.action === 'cooldown') {
    await args.advance({ evaluatedUntil });
    return { outcome: 'cooling', observation: null };
  }
  const observation = await args.observe(plan.scope);
  if (!args.matches(observation)) {
    await args.advance({ evaluatedUntil });
    return { outcome: 'quiet', observation };
  }
  if (isSilenced(args.silenceUntil, now)) {
    await args.advance({ evaluatedUntil });
    return { outcome: 'silenced', observation };
  }
  await args.advance({ evaluatedUntil, lastFiredAt: now });
  await args.fire(observation, plan.scope);
  return { outcome: 'fired', observation };
}

/** The changeable fields of a rule (its change endpoint). */
export interface RuleChange {
  name?: string | undefined;
  enabled?: boolean | undefined;
  /** ISO 8601, or null to lift the silence. */
  silenceUntil?: string | null | undefined;
}

/**
 * What a change request actually changes (empty when nothing): enabling a disabled rule restarts
 * its evaluation at `now`, so it does not report what happened while it was off.
 */
export function changedFields(
  row: { name: string; enabled: boolean; silenceUntil: Date | null },
  input: RuleChange,
  now: Date,
): { name?: string; enabled?: boolean; evaluatedUntil?: Date; silenceUntil?: Date | null } {
  const patch: { name?: string; enabled?: boolean; evaluatedUntil?: Date; silenceUntil?: Date | null } = {};
  if (input.name !== undefined && input.name !== row.name) patch.name = input.name;
  if (input.enabled !== undefined && input.enabled !== row.enabled) {
    patch.enabled = input.enabled;
    if (input.enabled) patch.evaluatedUntil = now;
  }
  if (input.silenceUntil !== undefined) {
    const next = input.silenceUntil === null ? null : new Date(input.silenceUntil);
    if ((next?.getTime() ?? null) !== (row.silenceUntil?.getTime() ?? null)) patch.silenceUntil = next;
  }
  return patch;
}
