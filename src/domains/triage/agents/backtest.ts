/**
 * The rule backtest (docs/triage/README.md, "Backtest"): what a proposed `empire_count_gte` rule would
 * have done over the lookback, told in the numbers an operator decides on (TP, FP, lead time).
 *
 * Only hourly totals per toolset are kept for the lookback, so the replay is an approximation of
 * the live evaluator, stated here so nobody reads more into it:
 *
 * - The rule is evaluated at the end of each clock hour i over the k = ceil(windowMinutes / 60)
 *   hours ending there (hours[i−k+1..i]), not over a sliding (to − windowMinutes, to]. A window
 *   shorter than an hour therefore counts a whole hour (it fires at least as often as live would);
 *   a window of k hours counts exactly k clock hours. Hours before the history are unknown and
 *   count as 0, so the first k−1 hours can miss a firing but never invent one.
 * - After a firing the rule stays quiet for k hours: the live evaluator's cooldown of one window.
 * - A predicate with `eventType` cannot be replayed from toolset totals, nor can any other kind:
 *   those are `unsupported`, every count 0, rather than a guess.
 *
 * Ground truth is the toolset's resolved incidents opened inside the history. A firing is a true
 * positive when it falls between (opened − EARLY_WARNING_HORIZON_MS) and resolved: a firing up to a
 * day before an incident opened is the early warning a rule is for; anything else is a false
 * positive. The lead time of a caught incident is how long before its opening the earliest
 * matching firing came (0 when it only fired once the incident was open).
 */
import type { Backtest, ResolvedIncident, ToolsetHistory } from './types.ts';

/** How early a firing may come before an incident opened and still count as catching it. */
export const EARLY_WARNING_HORIZON_MS = 24 * 3_600_000;

const HOUR_MS = 3_600_000;
const WINDOW_MINUTES_MIN = 5;
const WINDOW_MINUTES_MAX = 1440;

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** The replayable form of a predicate, or null. */
function countRule(predicate: Record<string, unknown>): { count: number; windowMinutes: number } | null {
  if (predicate['kind'] !== 'empire_count_gte') return null;
  if (predicate['eventType'] !== undefined) return null;
  const { count, windowMinutes } = predicate;
  if (!isInt(count) || count < 1) return null;
  if (!isInt(windowMinutes) || windowMinutes < WINDOW_MINUTES_MIN || windowMinutes > WINDOW_MINUTES_MAX) return null;
  return { count, windowMinutes };
}

/** End times (ms) of the hours in which the rule would have fired, cooldown applied. */
export function replayFirings(hours: readonly number[], historyFromMs: number, count: number, windowMinutes: number): number[] {
  const k = Math.ceil(windowMinutes / 60);
  const firings: number[] = [];
  let sum = 0;
  let quietUntil = -1; // index of the first hour that may fire again
  for (let i = 0; i < hours.length; i++) {
    sum += hours[i] ?? 0;
    if (i - k >= 0) sum -= hours[i - k] ?? 0;
    if (i >= quietUntil && sum >= count) {
      firings.push(historyFromMs + (i + 1) * HOUR_MS);
      quietUntil = i + k;
    }
  }
  return firings;
}

export function backtestCountRule(
  predicate: Record<string, unknown>,
  history: ToolsetHistory,
  historyFrom: Date,
  incidents: ResolvedIncident[],
  lookbackDays: number,
): Backtest {
  const rule = countRule(predicate);
  const fromMs = historyFrom.getTime();
  if (rule === null || !Number.isFinite(fromMs)) {
    return { method: 'unsupported', lookbackDays, TP: 0, FP: 0, meanLeadTimeSec: 0, incidents: 0, caught: 0, firings: 0 };
  }
  const toMs = fromMs + history.hours.length * HOUR_MS;
  const considered = incidents
    .map((incident) => ({ id: incident.id, toolset: incident.toolset, opened: Date.parse(incident.openedAt), resolved: Date.parse(incident.resolvedAt) }))
    .filter((x) => x.toolset === history.toolset && Number.isFinite(x.opened) && x.opened >= fromMs && x.opened < toMs)
    // A resolution stamped before the opening (or unreadable) closes the incident at its opening.
    .map((x) => ({ ...x, resolved: Number.isFinite(x.resolved) ? Math.max(x.resolved, x.opened) : x.opened }))
    .sort((a, b) => a.opened - b.opened || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    // Two rows with one id are one incident: the earlier opening counts.
    .filter((x, i, all) => all.findIndex((y) => y.id === x.id) === i);

  const firings = replayFirings(history.hours, fromMs, rule.count, rule.windowMinutes);
  const earliest = new Map<string, number>();
  let TP = 0;
  for (const at of firings) {
    let matched = false;
    for (const incident of considered) {
      if (incident.opened - EARLY_WARNING_HORIZON_MS <= at && at <= incident.resolved) {
        matched = true;
        const before = earliest.get(incident.id);
        if (before === undefined || at < before) earliest.set(incident.id, at);
      }
    }
    if (matched) TP += 1;
  }
  let leadSum = 0;
  for (const incident of considered) {
    const at = earliest.get(incident.id);
    if (at !== undefined) leadSum += Math.max(0, incident.opened - at) / 1000;
  }
  const caught = earliest.size;
  return {
    method: 'hourly-count',
    lookbackDays,
    TP,
    FP: firings.length - TP,
    meanLeadTimeSec: caught === 0 ? 0 : Math.round(leadSum / caught),
    incidents: considered.length,
    caught,
    firings: firings.length,
  };
}
