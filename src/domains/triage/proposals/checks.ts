import { Value } from '@sinclair/typebox/value';
import { canonicalJson } from '../../../platform/crypto.ts';
import { checkPredicate, EmpirePredicate, normalizePredicate } from '../../empire/alerts.predicates.ts';
import { backtestCountRule } from '../agents/backtest.ts';
import type { IncidentItem, InvestigationItem, RuleItem } from '../agents/output.ts';
import type { Backtest, ToolsetHistory } from '../agents/types.ts';

/**
 * The automatic rejections (docs/triage.md, "Automatic rejection"), as pure rules over one valid
 * item and what the run knows. Besides schema failures (output.ts) a proposal is auto-rejected when:
 * - `evidence-outside-window`: it cites an event id that is not an event received inside the run's
 *   window (an unknown id counts as outside); a focal investigation may also cite the focal
 *   event's lineage;
 * - `no-evidence`: an incident cites no event, unless its signal is `silence` (a silent toolset has
 *   none to cite);
 * - `invalid-filters`: an investigation's `from`/`to` are not ISO 8601 times with from < to;
 * - `invalid-predicate`: a rule's predicate is not in the empire union or breaks its bounds;
 * - `duplicates-existing-rule`: an enabled rule of the toolset already has that predicate;
 * - `duplicate-of-pending` (decided in the run's transaction): a pending proposal, or an earlier
 *   one of the same answer, has the same dedupe key.
 */

export type ProposalKind = 'incident' | 'investigation' | 'alert-rule';

export interface Candidate {
  kind: ProposalKind;
  status: 'pending' | 'auto-rejected';
  toolset: string | null;
  title: string;
  payload: Record<string, unknown> | null;
  backtest: Backtest | null;
  dedupeKey: string | null;
  autoRejectReason: string | null;
  evidenceEventIds: string[];
}

export interface EvidenceContext {
  windowStart: Date;
  windowEnd: Date;
  /** Receive time of every cited id that exists. */
  found: ReadonlyMap<string, Date>;
  /** Ids allowed whatever their time (a focal event's lineage). */
  allowed: ReadonlySet<string>;
}

/** A refusal of an item the schema already refused, or of a whole answer. */
export function refusedCandidate(kind: ProposalKind, reason: string, index: number, agent: string): Candidate {
  return {
    kind,
    status: 'auto-rejected',
    toolset: null,
    title: index < 0 ? `Unreadable answer of ${agent}` : `Unreadable proposal #${index + 1} of ${agent}`,
    payload: null,
    backtest: null,
    dedupeKey: null,
    autoRejectReason: reason,
    evidenceEventIds: [],
  };
}

const rejected = (c: Omit<Candidate, 'status' | 'autoRejectReason'>, reason: string): Candidate => ({ ...c, status: 'auto-rejected', autoRejectReason: reason });
const pending = (c: Omit<Candidate, 'status' | 'autoRejectReason'>): Candidate => ({ ...c, status: 'pending', autoRejectReason: null });

const lower = (ids: readonly string[]) => [...new Set(ids.map((id) => id.toLowerCase()))];

/** The cited ids outside the window (or unknown), at most five named. */
export function outsideWindow(ids: readonly string[], ctx: EvidenceContext): string[] {
  return ids.filter((id) => {
    if (ctx.allowed.has(id)) return false;
    const at = ctx.found.get(id);
    return at === undefined || at < ctx.windowStart || at >= ctx.windowEnd;
  });
}

const outsideReason = (ids: string[]) => `evidence-outside-window: ${ids.length} cited event id(s) are not events received in the window (${ids.slice(0, 5).join(', ')})`;

export function checkIncident(item: IncidentItem, ctx: EvidenceContext): Candidate {
  const evidence = lower(item.evidenceEventIds);
  const base = {
    kind: 'incident' as const,
    toolset: item.toolset,
    title: item.title,
    payload: { ...item, evidenceEventIds: evidence, postmortemDraft: item.postmortemDraft ?? null },
    backtest: null,
    // The subject (a title's words before ` — `) tells two floods of one signal apart (two tenants).
    dedupeKey: `incident:${item.toolset}:${item.signal}:${item.title.split(' — ')[0]!.trim().toLowerCase()}`,
    evidenceEventIds: evidence,
  };
  if (evidence.length === 0 && item.signal !== 'silence') return rejected(base, 'no-evidence: an incident must cite at least one event of the window');
  const outside = outsideWindow(evidence, ctx);
  return outside.length > 0 ? rejected(base, outsideReason(outside)) : pending(base);
}

export function checkInvestigation(item: InvestigationItem, ctx: EvidenceContext): Candidate {
  const evidence = lower(item.evidenceEventIds);
  const { from, to, ...scope } = item.filters;
  const base = {
    kind: 'investigation' as const,
    toolset: item.toolset,
    title: item.name,
    payload: { ...item, evidenceEventIds: evidence },
    backtest: null,
    dedupeKey: `investigation:${canonicalJson(scope)}`,
    evidenceEventIds: evidence,
  };
  const start = Date.parse(from);
  const end = Date.parse(to);
  if (!ISO.test(from) || !ISO.test(to) || Number.isNaN(start) || Number.isNaN(end) || start >= end) {
    return rejected(base, 'invalid-filters: filters.from and filters.to must be ISO 8601 times with from before to');
  }
  const outside = outsideWindow(evidence, ctx);
  return outside.length > 0 ? rejected(base, outsideReason(outside)) : pending(base);
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export interface RuleContext {
  history: ReadonlyMap<string, ToolsetHistory>;
  historyFrom: Date;
  lookbackDays: number;
  incidents: Parameters<typeof backtestCountRule>[3];
  /** Canonical predicates of the enabled rules, by toolset. */
  existing: ReadonlyMap<string, ReadonlySet<string>>;
}

export function checkRule(item: RuleItem, ctx: RuleContext): Candidate {
  const base = { kind: 'alert-rule' as const, toolset: item.toolset, title: item.name, backtest: null, evidenceEventIds: [] };
  const raw = item.predicate as unknown;
  if (!Value.Check(EmpirePredicate, raw)) {
    const first = Value.Errors(EmpirePredicate, raw).First();
    return rejected({ ...base, payload: { ...item }, dedupeKey: null }, `invalid-predicate: the predicate is not one of the empire predicates (${first ? `${first.path || '/'} ${first.message}` : 'no variant matches'})`.slice(0, 300));
  }
  const problem = checkPredicate(raw, { toolset: item.toolset });
  if (problem) return rejected({ ...base, payload: { ...item }, dedupeKey: null }, `invalid-predicate: ${problem.human}`.slice(0, 300));
  const predicate = normalizePredicate(raw);
  const canonical = canonicalJson(predicate);
  const payload = { ...item, predicate };
  const history = ctx.history.get(item.toolset) ?? { toolset: item.toolset, hours: new Array<number>(ctx.lookbackDays * 24).fill(0) };
  const backtest = backtestCountRule(predicate, history, ctx.historyFrom, ctx.incidents, ctx.lookbackDays);
  const candidate = { ...base, payload, backtest, dedupeKey: `alert-rule:${item.toolset}:${canonical}` };
  if (ctx.existing.get(item.toolset)?.has(canonical)) return rejected(candidate, 'duplicates-existing-rule: an enabled alert rule of the toolset already has this predicate');
  return pending(candidate);
}

/** The canonical form existing rules are compared in. */
export function canonicalPredicate(predicate: unknown): string | null {
  return Value.Check(EmpirePredicate, predicate) ? canonicalJson(normalizePredicate(predicate)) : null;
}
