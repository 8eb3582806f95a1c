/**
 * The compliance narrator (docs/triage/README.md, "Compliance narrator"): one paragraph, for a person, on
 * the service's compliance posture, from each framework's posture and its controls' latest
 * outcomes.
 *
 * The built-in engine says only what the data shows, in a fixed order: the totals across the
 * frameworks, then each framework's counts and badge (or that it has not been evaluated yet), then
 * the controls that need attention, failing before manual review and most severe first, each with
 * its latest summary, and last that these outcomes come from automated checks, not an audit. It
 * names no framework and no control the input does not hold, so the narrator's scrub never has
 * to remove one of its sentences (unless a summary quotes one: the scrub reads every sentence).
 */
import { withDataRules } from '../../../platform/llm/untrusted.ts';
import { TEXT_MAX } from './output.ts';
import { clip, fmt, plural } from './text.ts';
import { type ComplianceSnapshot, type Narration, type NarratorControl, SEVERITY_RANK } from './types.ts';

export interface ComplianceNarratorParams {
  /**
   * Sentences telling controls with their summary at most (failing ones first; controls sharing an
   * outcome and a summary share a sentence); the others needing attention are listed by id.
   */
  maxDetailed: number;
  /** A summary quoted in the paragraph is cut to this many characters. */
  summaryMax: number;
}

function systemPrompt(p: ComplianceNarratorParams): string {
  return withDataRules(`You are the compliance narrator of Observatory, a honeypot and multi-toolset event monitor.
You write one paragraph, for a person, on the service's compliance posture as its latest control evaluations give it.

Input: the data block holds one JSON object (ComplianceSnapshot): frameworks[] {framework (its key), title, version,
totalControls, passing, failing, manualReview, nA, asOf (the newest evaluation, null before the first), badge, ratePct
(passing over the applicable controls, in percent), controls[] {controlId, title, severity (critical, major, minor),
outcome (pass, fail, manual-review, n/a, or null before the first evaluation), summary, override (an operator set the
outcome)}}.

Output: only one JSON object: {"paragraph":string} (one paragraph of plain text, <= ${TEXT_MAX.paragraph} chars).

Rules:
- Name only the frameworks of the data (by title or key) and only the controlIds of the data, spelled as the data spells
  them. Never name any other framework, standard, regulation or control id: a sentence that does is removed.
- Give each framework's counts as the data has them: applicable controls passing, failing, awaiting manual review, not
  applicable; its badge and asOf. Say so when a framework has not been evaluated yet (asOf null).
- Then the controls needing attention: failing before manual-review, most severe first, each with what its summary says
  (controls with the same summary together); at most ${p.maxDetailed} such sentences, the rest by controlId only.
- Do not invent controls, numbers, dates or causes. Never claim the service is compliant or certified: these are
  automated checks of the live system, not an audit.
- Plain sentences only: no lists, headings, markdown or links.`);
}

export const COMPLIANCE_NARRATOR_PARAMS_1_0_0: ComplianceNarratorParams = { maxDetailed: 6, summaryMax: 300 };

/** Oldest first; the last is the current version. */
export const COMPLIANCE_NARRATOR_VERSIONS: readonly { version: string; systemPrompt: string; params: ComplianceNarratorParams }[] = [
  { version: '1.0.0', systemPrompt: systemPrompt(COMPLIANCE_NARRATOR_PARAMS_1_0_0), params: COMPLIANCE_NARRATOR_PARAMS_1_0_0 },
];

type Framework = ComplianceSnapshot['frameworks'][number];

/** `1 fails`, `2 fail`: a count with its verb agreeing. */
const counted = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** One line of plain text: whitespace runs (newlines included) become one space. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/** A quoted summary: one line, cut to `max`, ending as a sentence. */
function sentenceOf(text: string, max: number): string {
  const line = clip(oneLine(text), max);
  return /[.!?…]$/.test(line) ? line : `${line}.`;
}

function frameworkSentence(f: Framework): string {
  const evaluated = f.controls.filter((c) => c.outcome !== null).length;
  if (f.asOf === null || evaluated === 0) return `${f.title} has not been evaluated yet: none of its ${plural(f.totalControls, 'control')} has an outcome.`;
  const applicable = f.totalControls - f.nA;
  const pending = f.totalControls - evaluated;
  const rest = [
    counted(f.failing, 'fails', 'fail'),
    counted(f.manualReview, 'awaits manual review', 'await manual review'),
    counted(f.nA, 'does not apply', 'do not apply'),
    ...(pending > 0 ? [counted(pending, 'has no outcome yet', 'have no outcome yet')] : []),
  ];
  const list = `${rest.slice(0, -1).join(', ')} and ${rest[rest.length - 1]}`;
  const head =
    applicable === 0
      ? `${f.title} (badge ${f.badge}, as of ${f.asOf}) has no applicable control`
      : `${f.title} (badge ${f.badge}, as of ${f.asOf}): ${f.passing} of ${applicable} applicable controls pass${f.ratePct === null ? '' : ` (${fmt(f.ratePct)}%)`}`;
  return `${head}; ${list}.`;
}

interface Attention {
  control: NarratorControl;
  framework: number;
  order: number;
}

const OUTCOME_RANK = { fail: 0, 'manual-review': 1 } as const;

export function narrateCompliance(snapshot: ComplianceSnapshot, params: ComplianceNarratorParams): Narration {
  const { frameworks } = snapshot;
  if (frameworks.length === 0) return { paragraph: 'No compliance framework is loaded, so there is no posture to report.' };
  const sentences: string[] = [];

  const evaluated = frameworks.filter((f) => f.asOf !== null && f.controls.some((c) => c.outcome !== null));
  if (evaluated.length === 0) {
    sentences.push('No framework has been evaluated yet, so no control has an outcome: the compliance-evaluate job evaluates them every hour.');
  } else {
    const sum = (pick: (f: Framework) => number) => evaluated.reduce((s, f) => s + pick(f), 0);
    const applicable = sum((f) => f.totalControls - f.nA);
    sentences.push(
      `Across ${plural(evaluated.length, 'evaluated framework')}, ${sum((f) => f.passing)} of ${plural(applicable, 'applicable control')} pass, ${counted(sum((f) => f.failing), 'fails', 'fail')} and ${counted(sum((f) => f.manualReview), 'awaits manual review', 'await manual review')}.`,
    );
  }
  for (const f of frameworks) sentences.push(frameworkSentence(f));

  // What needs attention: failing before manual review, most severe first, then in the frameworks' own order.
  const attention: Attention[] = frameworks
    .flatMap((f, framework) => f.controls.map((control, order) => ({ control, framework, order })))
    .filter((a) => a.control.outcome === 'fail' || a.control.outcome === 'manual-review')
    .sort(
      (a, b) =>
        OUTCOME_RANK[a.control.outcome as 'fail' | 'manual-review'] - OUTCOME_RANK[b.control.outcome as 'fail' | 'manual-review'] ||
        SEVERITY_RANK[a.control.severity] - SEVERITY_RANK[b.control.severity] ||
        a.framework - b.framework ||
        a.order - b.order,
    );
  // Controls of one outcome and one summary (frameworks share predicates) are told in one sentence.
  const groups: Attention[][] = [];
  for (const a of attention) {
    const same = groups.find((g) => g[0]!.control.outcome === a.control.outcome && a.control.summary !== null && g[0]!.control.summary === a.control.summary);
    if (same) same.push(a);
    else groups.push([a]);
  }
  for (const group of groups.slice(0, params.maxDetailed)) {
    const first = group[0]!.control;
    const names = group.map(({ control: c }) => `${c.controlId} ${c.title} (${c.severity}${c.override ? ', set by an operator' : ''})`);
    const subject = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
    const one = group.length === 1;
    const verb = first.outcome === 'fail' ? (one ? 'fails' : 'fail') : one ? 'awaits manual review' : 'await manual review';
    sentences.push(first.summary === null || oneLine(first.summary) === '' ? `${subject} ${verb}.` : `${subject} ${verb}: ${sentenceOf(first.summary, params.summaryMax)}`);
  }
  const rest = groups.slice(params.maxDetailed).flat();
  const restFailing = rest.filter((a) => a.control.outcome === 'fail').map((a) => a.control.controlId);
  const restReview = rest.filter((a) => a.control.outcome === 'manual-review').map((a) => a.control.controlId);
  if (restFailing.length > 0) sentences.push(`Also failing: ${restFailing.join(', ')}.`);
  if (restReview.length > 0) sentences.push(`Also awaiting manual review: ${restReview.join(', ')}.`);
  if (evaluated.length > 0 && attention.length === 0) sentences.push('Every control evaluated either passes or does not apply.');
  sentences.push('These outcomes come from automated checks of the live system, not from an audit.');

  return { paragraph: clip(sentences.join(' '), TEXT_MAX.paragraph) };
}
