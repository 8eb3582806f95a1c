import { Value } from '@sinclair/typebox/value';
import { canonicalJson } from '../../../platform/crypto.ts';
import { checkPredicate, EmpirePredicate, normalizePredicate } from '../../empire/index.ts';
import { backtestCountRule } from '../agents/backtest.ts';
import { type IncidentItem, type InvestigationItem, type RuleItem, TEXT_MAX } from '../agents/output.ts';
import { type Backtest, HONEYPOT_TOOLSET, type PostmortemDraft, SEVERITY_RANK, type ToolsetHistory } from '../agents/types.ts';
import { clip } from '../agents/text.ts';

import { stripDraft } from '../postmortems/strip.ts';
import { dropForeignLinks } from '../../../platform/llm/links.ts';

/**
 * The automatic rejections (docs/triage/README.md, "Automatic rejection"), as pure rules over one valid
 * item and what the run knows. Besides schema failures (output.ts) a proposal is auto-rejected when:
 * - `invalid-filters`: an investigation's `from`/`to` are not ISO 8601 times with from < to, or its
 *   `filters.toolset` is another toolset than its own;
 * - `no-evidence`: an incident cites no event, unless its signal is `silence` (a silent toolset has
 *   none to cite);
 * - `evidence-not-in-input`: it cites an event id the run's input did not show (an unknown id, one
 *   outside the window, or one a hostile text made the model write);
 * - `evidence-other-toolset`: it cites an event of another toolset than its own: a proposal
 *   concerns one toolset, and whoever decides it sees only that toolset (docs/operations.md,
 *   "Toolset binding");
 * - `severity-policy`: an incident is more severe than the classifier's own rules make it on the
 *   run's input (`critical` never; agents/incident-classifier.ts `severityCeiling`);
 * - `invalid-predicate`: a rule's predicate is not in the empire union or breaks its bounds;
 * - `duplicates-existing-rule`: an enabled rule of the toolset already has that predicate;
 * - `duplicate-of-pending` (decided in the run's transaction): a pending proposal, or an earlier
 *   one of the same answer, has the same dedupe key.
 * Links in the text an agent wrote (titles, summaries, names, rationale, postmortem seeds) are
 * dropped unless they point at this service, before anything else is read; a postmortem seed goes
 * through the postmortem guard (postmortems/strip.ts) with the proposal's evidence as its lineage.
 * A proposal speaks of its own toolset only: in the same texts the name of any other toolset the
 * run's input holds is replaced by OTHER_TOOLSET, since whoever decides the proposal may reach its
 * toolset and no other (docs/operations.md, "Toolset binding").
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
  /**
   * Every event id the run's input showed, with the toolset it belongs to (`honeypot` for honeypot
   * events): the only ids a proposal may cite (runs/snapshots.ts `shownEvents`).
   */
  shown: ReadonlyMap<string, string>;
  /** The origin links may point at (OBSERVATORY_PUBLIC_URL's); every other link is dropped. */
  linkOrigin: string;
  /** Every toolset the run's input holds: the names a proposal's text may not speak of but its own. */
  toolsets: ReadonlySet<string>;
}

export interface IncidentContext extends EvidenceContext {
  /** The severity policy on this run's input: the most severe level a proposal may carry, and what the input shows. */
  severityCeiling: (proposal: { toolset: string; signal: IncidentItem['signal']; evidenceEventIds: readonly string[] }) => { max: 'major' | 'minor'; why: string };
  /** The identifiers of the run's input (postmortems/strip.ts `identifierTokens`): a postmortem seed may name no other. */
  known: ReadonlySet<string>;
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

/** What another toolset's name in a proposal's text becomes. */
export const OTHER_TOOLSET = '[another toolset]';

/**
 * `text` with every other toolset of `toolsets` than `own` replaced by OTHER_TOOLSET, written in any
 * case, wherever it stands as a whole name (not inside a longer name). The honeypot pseudo-toolset
 * is no one's secret and stays.
 */
export function withoutOtherToolsets(text: string, own: string | null, toolsets: ReadonlySet<string>): string {
  const names = namePatternOf(toolsets);
  if (names === null) return text;
  const ownName = own?.toLowerCase();
  return text.replace(names, (name) => (name.toLowerCase() === ownName ? name : OTHER_TOOLSET));
}

/** One pattern of every toolset name of a run's input (but the honeypot's), built once per set: a run checks every text of every proposal against it. */
const namePatterns = new WeakMap<ReadonlySet<string>, RegExp | null>();
function namePatternOf(toolsets: ReadonlySet<string>): RegExp | null {
  let pattern = namePatterns.get(toolsets);
  if (pattern === undefined) {
    // Longest first, so of two names one of which starts the other the whole one is taken.
    const names = [...toolsets].filter((t) => t !== HONEYPOT_TOOLSET).sort((a, b) => b.length - a.length);
    const escaped = names.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
    pattern = names.length === 0 ? null : new RegExp(`(?<![\\p{L}\\p{N}_-])(?:${escaped})(?![\\p{L}\\p{N}_-])`, 'giu');
    namePatterns.set(toolsets, pattern);
  }
  return pattern;
}

/** What a proposal of `toolset` may show of a text an agent wrote: no link leaving this service, no other toolset's name, at most `max` characters. */
const ownText = (text: string, max: number, toolset: string | null, ctx: { linkOrigin: string; toolsets: ReadonlySet<string> }) =>
  clip(withoutOtherToolsets(dropForeignLinks(text, ctx.linkOrigin).text, toolset, ctx.toolsets), max);

/**
 * Why the cited ids may not be cited by a proposal of `toolset`, or null: every id must be one the
 * input showed (at most five named), and an event of the proposal's own toolset (none named: they
 * are another toolset's).
 */
export function evidenceProblem(ids: readonly string[], toolset: string, ctx: EvidenceContext): string | null {
  const notShown = ids.filter((id) => !ctx.shown.has(id));
  if (notShown.length > 0) return `evidence-not-in-input: ${notShown.length} cited event id(s) are not among the event ids the run's input showed (${notShown.slice(0, 5).join(', ')})`;
  const other = ids.filter((id) => ctx.shown.get(id) !== toolset);
  if (other.length > 0) return `evidence-other-toolset: ${other.length} cited event id(s) are events of another toolset than ${toolset}; a proposal cites only its own toolset's events`;
  return null;
}

/** A postmortem seed without other toolsets' names, before the guard (which clips each text to its bound). */
function withoutOtherToolsetsIn(draft: PostmortemDraft, toolset: string, toolsets: ReadonlySet<string>): PostmortemDraft {
  const sections = Object.fromEntries(Object.entries(draft.sections).map(([name, claims]) => [name, claims.map((c) => ({ ...c, text: withoutOtherToolsets(c.text, toolset, toolsets) }))]));
  return { title: withoutOtherToolsets(draft.title, toolset, toolsets), sections: sections as PostmortemDraft['sections'] };
}

export function checkIncident(raw: IncidentItem, ctx: IncidentContext): Candidate {
  const evidence = lower(raw.evidenceEventIds);
  const title = ownText(raw.title, TEXT_MAX.title, raw.toolset, ctx);
  const seed = raw.postmortemDraft
    ? stripDraft(withoutOtherToolsetsIn(raw.postmortemDraft, raw.toolset, ctx.toolsets), { citable: new Set(evidence), known: ctx.known, linkOrigin: ctx.linkOrigin, fallbackTitle: `Postmortem: ${title}` }).draft
    : null;
  const item = { ...raw, title, summary: ownText(raw.summary, TEXT_MAX.summary, raw.toolset, ctx), evidenceEventIds: evidence, postmortemDraft: seed };
  const base = {
    kind: 'incident' as const,
    toolset: item.toolset,
    title,
    payload: item,
    backtest: null,
    // The subject (a title's words before ` — `) tells two floods of one signal apart (two tenants).
    dedupeKey: `incident:${item.toolset}:${item.signal}:${title.split(' — ')[0]!.trim().toLowerCase()}`,
    evidenceEventIds: evidence,
  };
  if (evidence.length === 0 && item.signal !== 'silence') return rejected(base, 'no-evidence: an incident must cite at least one event of the window');
  const problem = evidenceProblem(evidence, item.toolset, ctx);
  if (problem !== null) return rejected(base, problem);
  const ceiling = ctx.severityCeiling(item);
  if (SEVERITY_RANK[item.severity] < SEVERITY_RANK[ceiling.max]) {
    return rejected(base, `severity-policy: a ${item.signal} proposal of ${item.toolset} may be at most ${ceiling.max} on this input (${ceiling.why}); the answer said ${item.severity}`.slice(0, 300));
  }
  return pending(base);
}

export function checkInvestigation(raw: InvestigationItem, ctx: EvidenceContext): Candidate {
  const evidence = lower(raw.evidenceEventIds);
  const item = {
    ...raw,
    name: ownText(raw.name, TEXT_MAX.name, raw.toolset, ctx),
    rationale: raw.rationale.map((bullet) => ownText(bullet, TEXT_MAX.bullet, raw.toolset, ctx)),
    evidenceEventIds: evidence,
  };
  const { from, to, ...scope } = item.filters;
  const base = {
    kind: 'investigation' as const,
    toolset: item.toolset,
    title: item.name,
    payload: item,
    backtest: null,
    dedupeKey: `investigation:${canonicalJson(scope)}`,
    evidenceEventIds: evidence,
  };
  const start = Date.parse(from);
  const end = Date.parse(to);
  if (!ISO.test(from) || !ISO.test(to) || Number.isNaN(start) || Number.isNaN(end) || start >= end) {
    return rejected(base, 'invalid-filters: filters.from and filters.to must be ISO 8601 times with from before to');
  }
  if (scope.toolset !== null && scope.toolset !== item.toolset) return rejected(base, `invalid-filters: filters.toolset must be the proposal's toolset (${item.toolset}) or null`);
  // The focal event is cited too: a view follows its lineage.
  const cited = scope.focalEventId === null ? evidence : lower([...evidence, scope.focalEventId]);
  const problem = evidenceProblem(cited, item.toolset, ctx);
  return problem !== null ? rejected(base, problem) : pending(base);
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export interface RuleContext {
  history: ReadonlyMap<string, ToolsetHistory>;
  historyFrom: Date;
  lookbackDays: number;
  incidents: Parameters<typeof backtestCountRule>[3];
  /** Canonical predicates of the enabled rules, by toolset. */
  existing: ReadonlyMap<string, ReadonlySet<string>>;
  /** The origin links may point at; every other link is dropped. */
  linkOrigin: string;
  /** Every toolset the run's input holds (EvidenceContext.toolsets). */
  toolsets: ReadonlySet<string>;
}

export function checkRule(raw: RuleItem, ctx: RuleContext): Candidate {
  const item = { ...raw, name: ownText(raw.name, TEXT_MAX.name, raw.toolset, ctx), rationale: ownText(raw.rationale, TEXT_MAX.rationale, raw.toolset, ctx) };
  const base = { kind: 'alert-rule' as const, toolset: item.toolset, title: item.name, backtest: null, evidenceEventIds: [] };
  const predicateRaw = item.predicate as unknown;
  if (!Value.Check(EmpirePredicate, predicateRaw)) {
    const first = Value.Errors(EmpirePredicate, predicateRaw).First();
    return rejected({ ...base, payload: { ...item }, dedupeKey: null }, `invalid-predicate: the predicate is not one of the empire predicates (${first ? `${first.path || '/'} ${first.message}` : 'no variant matches'})`.slice(0, 300));
  }
  const problem = checkPredicate(predicateRaw, { toolset: item.toolset });
  if (problem) return rejected({ ...base, payload: { ...item }, dedupeKey: null }, `invalid-predicate: ${problem.human}`.slice(0, 300));
  const predicate = normalizePredicate(predicateRaw);
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
