import { type Freshness, freshnessOf, type Producer } from '../freshness.ts';
import { SETTLE_MS } from './plan.ts';

/** The rule fields the freshness of a rule listing needs. */
export interface EvaluatedRule {
  name: string;
  enabled: boolean;
  evaluatedUntil: Date | null;
}

/**
 * How fresh a listing of alert rules is (docs/operations.md, "How fresh is an answer"): `asOf` is
 * the earliest `evaluatedUntil` of its enabled rules, the instant up to which every one of them has
 * looked at the events received (a run at `t` covers events received up to `t − 60 s`). null, with
 * the reason, when there is no enabled rule or one has not been evaluated yet. Disabled rules are
 * not evaluated and do not count.
 */
export function rulesFreshness(producer: Producer, rules: readonly EvaluatedRule[]): Freshness {
  const enabled = rules.filter((r) => r.enabled);
  if (enabled.length === 0) return freshnessOf(producer, null, 'No enabled rule in the list: nothing is evaluated.');
  const waiting = enabled.filter((r) => r.evaluatedUntil === null);
  if (waiting.length > 0) {
    const names = waiting.slice(0, 3).map((r) => `"${r.name}"`).join(', ') + (waiting.length > 3 ? ` and ${waiting.length - 3} more` : '');
    return freshnessOf(
      producer,
      null,
      `Not evaluated yet: ${names}. ${producer.job} evaluates enabled rules every minute, over the events received up to ${SETTLE_MS / 1000} s before it runs.`,
    );
  }
  const oldest = enabled.reduce((min, r) => (r.evaluatedUntil!.getTime() < min.getTime() ? r.evaluatedUntil! : min), enabled[0]!.evaluatedUntil!);
  return freshnessOf(producer, oldest);
}
