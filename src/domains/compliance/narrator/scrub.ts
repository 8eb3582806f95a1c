import { mentionReader, type NarrationInput, readable } from './mentions.ts';

/**
 * The narrator's guard (docs/compliance/README.md, "Narrator"): a paragraph may name no framework and no
 * control its input does not hold. A sentence that names one is removed whole, since a sentence
 * about a framework the service is not evaluated against (or a control it has no outcome for)
 * cannot be trusted in part, and it is reported: `scrubbedText` holds the removed sentences, and
 * the names are listed. Pure.
 *
 * Sentences: the text (read as NFKC, without invisible format characters) is cut at line breaks
 * and after `.`, `!`, `?` or `…` (closing quotes or brackets may follow) where whitespace and then
 * a capital letter, a digit, `§` or an opening quote or bracket come next; never after `e.g.`,
 * `i.e.`, `vs.`, `cf.` or `approx.`. A control id (`CC6.1`, `A.8.13`) or a number (`81.8%`) has no
 * space after its dots, so it is never cut.
 */

export interface ScrubbedNarration {
  /** The sentences kept, joined by single spaces. */
  text: string;
  /** The sentences removed, joined by single spaces; "" when none was. */
  scrubbedText: string;
  /** The input's frameworks (keys) and control ids the kept sentences name, sorted. */
  citedFrameworks: string[];
  citedControlIds: string[];
  /** The frameworks (canonical keys) and control ids named but not in the input, sorted: every sentence naming one was removed. */
  strippedFrameworks: string[];
  strippedControlIds: string[];
}

const BOUNDARY = /(?<=[.!?…]["'”’)\]]*)\s+(?=["'“‘(\[]?[\p{Lu}\p{N}§])/u;
const ABBREVIATION = /(?:^|[\s(])(?:e\.g|i\.e|vs|cf|approx)\.$/i;

/** The sentences of `text`, trimmed, none empty. */
export function sentencesOf(text: string): string[] {
  const sentences: string[] = [];
  for (const line of readable(text).split(/[\r\n\u2028\u2029]+/)) {
    let pending = '';
    for (const piece of line.split(BOUNDARY)) {
      pending = pending === '' ? piece : `${pending} ${piece}`;
      if (!ABBREVIATION.test(pending)) {
        if (pending.trim() !== '') sentences.push(pending.replace(/\s+/g, ' ').trim());
        pending = '';
      }
    }
    if (pending.trim() !== '') sentences.push(pending.replace(/\s+/g, ' ').trim());
  }
  return sentences;
}

export function scrubNarration(paragraph: string, input: NarrationInput): ScrubbedNarration {
  const read = mentionReader(input);
  const kept: string[] = [];
  const removed: string[] = [];
  const cited = { frameworks: new Set<string>(), controls: new Set<string>() };
  const stripped = { frameworks: new Set<string>(), controls: new Set<string>() };
  for (const sentence of sentencesOf(paragraph)) {
    const frameworks = read.frameworks(sentence);
    const controls = read.controls(sentence);
    if (frameworks.absent.length > 0 || controls.absent.length > 0) {
      removed.push(sentence);
      frameworks.absent.forEach((k) => stripped.frameworks.add(k));
      controls.absent.forEach((id) => stripped.controls.add(id));
      continue;
    }
    kept.push(sentence);
    frameworks.present.forEach((k) => cited.frameworks.add(k));
    controls.present.forEach((id) => cited.controls.add(id));
  }
  const sorted = (set: Set<string>) => [...set].sort();
  return {
    text: kept.join(' '),
    scrubbedText: removed.join(' '),
    citedFrameworks: sorted(cited.frameworks),
    citedControlIds: sorted(cited.controls),
    strippedFrameworks: sorted(stripped.frameworks),
    strippedControlIds: sorted(stripped.controls),
  };
}
