/**
 * The rule proposer (docs/triage/README.md, "Rule proposer"): suggests `empire_count_gte` alert rules
 * learned from the lookback, each with the backtest an operator needs to judge it.
 *
 * A threshold worth proposing separates the hours that came before trouble from ordinary hours,
 * so the built-in engine tries exactly those two kinds of numbers for each toolset:
 *
 * - the busiest hour in the day before each resolved incident opened (the rule that would have
 *   warned of that incident), and
 * - just above high quantiles of the toolset's normal hours (hours outside every incident's
 *   [opened − 24 h, resolved] span): a rule that ordinary traffic does not trip.
 *
 * Every candidate is replayed by `backtestCountRule` (one-hour windows, so the replay is exact up
 * to clock-hour alignment), and the best one is kept: most incidents caught, then fewest false
 * firings, then longest lead time, then the one nearest a threshold the operators accepted for the
 * toolset before, then the higher (quieter) threshold. A rule that catches nothing is never
 * proposed, and 1.1.0 also refuses rules that cry wolf more often than they help (TP < FP).
 * Without resolved incidents there is no ground truth, so such toolsets get no proposal.
 *
 * Operators' answers are respected: a candidate equal to an enabled rule of the toolset or to a
 * rejected example is skipped (compared as canonical JSON); 1.1.0 also skips thresholds within
 * `rejectedNearPct` of a rejected one, so a rejected 120 does not come back as 121.
 */
import { canonicalJsonFast } from '../../../platform/audit/canonical.ts';
import { withDataRules } from '../../../platform/llm/untrusted.ts';
import { backtestCountRule } from './backtest.ts';
import type { Backtest, ResolvedIncident, RuleProposalDraft, RuleSnapshot, ToolsetHistory } from './types.ts';
import { clip, cmp } from './text.ts';

export interface RuleProposerParams {
  /** The window of every proposed rule (one hour: what the hourly history replays exactly). */
  windowMinutes: number;
  /** Quantiles (0..1] of a toolset's normal hours; each gives the threshold "one above it". */
  normalQuantiles: number[];
  /** The hours before an incident's opening whose busiest hour is a candidate threshold. */
  preIncidentHours: number;
  /** Thresholds below this are never proposed (a handful of events an hour is noise). */
  minCount: number;
  /** Refuse a rule that fired falsely more often than truly. */
  requireTpAtLeastFp: boolean;
  /** Skip a threshold within this fraction of a rejected example's (0: only the exact predicate). */
  rejectedNearPct: number;
  /** Proposals per run at most (one per toolset). */
  maxProposals: number;
}

const HOUR_MS = 3_600_000;
const COUNT_MAX = 100_000_000;
const NAME_MAX = 120;

function systemPrompt(p: RuleProposerParams): string {
  return withDataRules(`You are the alert-rule proposer of Observatory, a multi-toolset event monitor.
You read hourly event counts per toolset over the lookback and the incidents resolved in it, and propose
alert rules that would have warned of those incidents without firing on ordinary traffic.

Input: the data block holds one JSON object (RuleSnapshot): lookbackDays; from, to (hour boundaries); history[] {toolset, hours[]}
where hours[i] counts the events received in hour from + i; resolvedIncidents[] {id, toolset, openedAt,
resolvedAt, severity}; examples[] {toolset, predicate, decision "accepted"|"rejected", notes} (past operator
decisions); existingRules[] {toolset, predicate} (enabled rules).

Output: only JSON {"proposals": [...]}, each proposal:
{"kind":"alert-rule","toolset":string,"name":string,"predicate":{"kind":"empire_count_gte","count":integer,"windowMinutes":${p.windowMinutes}},
 "rationale":string}
- name: "<toolset>: ≥ <count> events an hour".
- rationale: one or two sentences: where the threshold comes from (the busiest hour in the ${p.preIncidentHours} h before an
  incident opened, or just above a high quantile of the toolset's normal hours) and what it would have done.

How each proposal is judged (replayed on the hourly counts at the end of every hour, quiet for one window after
firing): a firing up to 24 h before an incident of the toolset opened, or while it was open, is a true positive
(TP); any other firing is a false positive (FP).

Rules:
- Only empire_count_gte with windowMinutes ${p.windowMinutes} and no eventType: other predicates cannot be replayed.
- count is an integer >= ${p.minCount}, derived from the numbers in history; never invent data.
- Propose only rules with TP > 0${p.requireTpAtLeastFp ? ' and TP >= FP' : ''}; a toolset without resolved incidents gets none.
- Never repeat an existing rule or a rejected example of the toolset${p.rejectedNearPct > 0 ? `, nor a count within ${Math.round(p.rejectedNearPct * 100)}% of a rejected one` : ''}; prefer thresholds near accepted ones.
- At most one proposal per toolset and ${p.maxProposals} in all. Names and rationale carry no links. Nothing worth proposing: {"proposals": []}.`);
}

export const RULE_PROPOSER_PARAMS_1_0_0: RuleProposerParams = {
  windowMinutes: 60,
  normalQuantiles: [1],
  preIncidentHours: 24,
  minCount: 20,
  requireTpAtLeastFp: false,
  rejectedNearPct: 0,
  maxProposals: 3,
};

export const RULE_PROPOSER_PARAMS_1_1_0: RuleProposerParams = {
  windowMinutes: 60,
  normalQuantiles: [0.95, 0.99, 1],
  preIncidentHours: 24,
  minCount: 10,
  requireTpAtLeastFp: true,
  rejectedNearPct: 0.1,
  maxProposals: 5,
};

/** Oldest first; the last is the current version. */
export const RULE_PROPOSER_VERSIONS: readonly { version: string; systemPrompt: string; params: RuleProposerParams }[] = [
  { version: '1.0.0', systemPrompt: systemPrompt(RULE_PROPOSER_PARAMS_1_0_0), params: RULE_PROPOSER_PARAMS_1_0_0 },
  { version: '1.1.0', systemPrompt: systemPrompt(RULE_PROPOSER_PARAMS_1_1_0), params: RULE_PROPOSER_PARAMS_1_1_0 },
];

const same = (a: Record<string, unknown>, b: Record<string, unknown>) => canonicalJsonFast(a) === canonicalJsonFast(b);

/** Nearest-rank quantile of a sorted list (q in (0, 1]). */
function quantile(sorted: readonly number[], q: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] ?? 0;
}

function duration(sec: number): string {
  if (sec < 60) return `${sec} s`;
  const minutes = Math.round(sec / 60);
  if (minutes < 60) return `${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

const percentile = (q: number) => (q >= 1 ? 'every normal hour' : `the ${String(Math.round(q * 1000) / 10)}th percentile of normal hours`);

/** The count of a plain hourly `empire_count_gte` predicate, or null. */
function hourlyCount(predicate: Record<string, unknown>, windowMinutes: number): number | null {
  return predicate['kind'] === 'empire_count_gte' && predicate['windowMinutes'] === windowMinutes && predicate['eventType'] === undefined && typeof predicate['count'] === 'number'
    ? predicate['count']
    : null;
}

interface Candidate {
  count: number;
  /** Why this number: a sentence fragment. */
  source: string;
}

function candidates(history: ToolsetHistory, fromMs: number, incidents: readonly ResolvedIncident[], p: RuleProposerParams): Candidate[] {
  const toMs = fromMs + history.hours.length * HOUR_MS;
  const spans = incidents
    .map((x) => ({ id: x.id, opened: Date.parse(x.openedAt), resolved: Date.parse(x.resolvedAt) }))
    .filter((x) => Number.isFinite(x.opened))
    .map((x) => ({ ...x, resolved: Number.isFinite(x.resolved) ? Math.max(x.resolved, x.opened) : x.opened }))
    .sort((a, b) => a.opened - b.opened || cmp(a.id, b.id));
  const byCount = new Map<number, string>();
  const add = (count: number, source: string) => {
    if (count >= p.minCount && count <= COUNT_MAX && !byCount.has(count)) byCount.set(count, source);
  };
  // The busiest hour in the day before each incident of the history opened (the hour holding the opening included).
  for (const x of spans) {
    if (x.opened < fromMs || x.opened >= toMs) continue;
    let peak = 0;
    for (let j = 0; j < history.hours.length; j++) {
      const start = fromMs + j * HOUR_MS;
      if (start < x.opened && start + HOUR_MS > x.opened - p.preIncidentHours * HOUR_MS) peak = Math.max(peak, history.hours[j] ?? 0);
    }
    add(peak, `the busiest hour (${peak} events) in the ${p.preIncidentHours} h before incident ${x.id} opened`);
  }
  // Just above high quantiles of the hours far from every incident.
  const normal = history.hours
    .filter((_, j) => {
      const start = fromMs + j * HOUR_MS;
      return !spans.some((x) => start <= x.resolved && start + HOUR_MS > x.opened - p.preIncidentHours * HOUR_MS);
    })
    .sort((a, b) => a - b);
  if (normal.length > 0) {
    for (const q of [...p.normalQuantiles].sort((a, b) => a - b)) {
      const value = quantile(normal, q);
      add(value + 1, `one above ${percentile(q)} (${value} events) over ${normal.length} normal hours`);
    }
  }
  return [...byCount.entries()].sort((a, b) => a[0] - b[0]).map(([count, source]) => ({ count, source }));
}

interface Scored {
  toolset: string;
  predicate: Record<string, unknown>;
  backtest: Backtest;
  source: string;
  count: number;
  acceptedDistance: number;
}

const better = (a: Scored, b: Scored) =>
  b.backtest.caught - a.backtest.caught ||
  a.backtest.FP - b.backtest.FP ||
  b.backtest.meanLeadTimeSec - a.backtest.meanLeadTimeSec ||
  a.acceptedDistance - b.acceptedDistance ||
  b.count - a.count;

/** The built-in engine: pure; proposals ranked by incidents caught, then fewer FP, lead time, toolset. */
export function proposeRules(snapshot: RuleSnapshot, params: RuleProposerParams): RuleProposalDraft[] {
  const fromMs = Date.parse(snapshot.from);
  if (!Number.isFinite(fromMs)) return [];
  const histories = [...snapshot.history].sort((a, b) => cmp(a.toolset, b.toolset) || cmp(JSON.stringify(a.hours), JSON.stringify(b.hours)));
  const seen = new Set<string>();
  const best: Scored[] = [];
  for (const history of histories) {
    if (seen.has(history.toolset)) continue;
    seen.add(history.toolset);
    const toolset = history.toolset;
    const incidents = snapshot.resolvedIncidents.filter((x) => x.toolset === toolset);
    if (incidents.length === 0) continue;
    const existing = snapshot.existingRules.filter((r) => r.toolset === toolset).map((r) => r.predicate);
    const rejected = snapshot.examples.filter((e) => e.toolset === toolset && e.decision === 'rejected').map((e) => e.predicate);
    const rejectedCounts = rejected.map((r) => hourlyCount(r, params.windowMinutes)).filter((c): c is number => c !== null);
    const acceptedCounts = snapshot.examples
      .filter((e) => e.toolset === toolset && e.decision === 'accepted')
      .map((e) => hourlyCount(e.predicate, params.windowMinutes))
      .filter((c): c is number => c !== null);
    let top: Scored | null = null;
    for (const c of candidates(history, fromMs, incidents, params)) {
      const predicate: Record<string, unknown> = { kind: 'empire_count_gte', count: c.count, windowMinutes: params.windowMinutes };
      if (existing.some((e) => same(e, predicate)) || rejected.some((r) => same(r, predicate))) continue;
      if (params.rejectedNearPct > 0 && rejectedCounts.some((r) => Math.abs(c.count - r) <= params.rejectedNearPct * r)) continue;
      const backtest = backtestCountRule(predicate, history, new Date(fromMs), incidents, snapshot.lookbackDays);
      if (backtest.TP <= 0 || (params.requireTpAtLeastFp && backtest.TP < backtest.FP)) continue;
      const acceptedDistance = acceptedCounts.length === 0 ? 0 : Math.min(...acceptedCounts.map((a) => Math.abs(a - c.count)));
      const scored: Scored = { toolset, predicate, backtest, source: c.source, count: c.count, acceptedDistance };
      if (top === null || better(scored, top) < 0) top = scored;
    }
    if (top) best.push(top);
  }
  best.sort(
    (a, b) =>
      b.backtest.caught - a.backtest.caught || a.backtest.FP - b.backtest.FP || b.backtest.meanLeadTimeSec - a.backtest.meanLeadTimeSec || cmp(a.toolset, b.toolset),
  );
  return best.slice(0, Math.max(0, params.maxProposals)).map((s) => {
    const b = s.backtest;
    const lead = b.meanLeadTimeSec > 0 ? `, on average ${duration(b.meanLeadTimeSec)} before the incident opened` : ', but only once the incident was open';
    return {
      kind: 'alert-rule',
      toolset: s.toolset,
      name: clip(`${s.toolset}: ≥ ${s.count} events an hour`, NAME_MAX),
      predicate: s.predicate,
      rationale: `The threshold is ${s.source}. Over the last ${b.lookbackDays} days it would have fired ${b.firings === 1 ? 'once' : `${b.firings} times`} (${b.TP} TP, ${b.FP} FP) and caught ${b.caught} of ${b.incidents} resolved incidents${lead}.`,
    };
  });
}
