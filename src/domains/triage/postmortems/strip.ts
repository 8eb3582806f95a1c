import { TEXT_MAX } from '../agents/output.ts';
import { clip } from '../agents/text.ts';
import { POSTMORTEM_SECTIONS, type PostmortemDraft } from '../agents/types.ts';
import { dropForeignLinks } from '../../../platform/llm/links.ts';

/**
 * The guard on a postmortem draft (spec B `incidents/{id}/auto-draft`; docs/triage/README.md,
 * "Postmortems"): a draft may name no identifier its input does not contain. A claim that does is
 * removed whole, since a sentence resting on a foreign event cannot be trusted in part; a title
 * that does is replaced. Links that do not point at this service are dropped from what is kept.
 * Pure.
 *
 * What is an identifier, in any form a model might write it. Text is first read as NFKC (full-width
 * `ｅｖｔ－０００１` is `evt-0001`) with invisible format characters removed (zero-width spaces and
 * joiners, bidi marks, soft hyphens), then:
 * 1. A UUID: 32 hex digits in the 8-4-4-4-12 groups, with or without the hyphens, in any case,
 *    wherever it stands (in braces, after `urn:uuid:`, glued to other text). It may be named only
 *    when it is `citable` (the lineage's event ids) or `named` (the incident's own id, which a
 *    draft may mention or link to): another id of the input (a `causedBy` outside the lineage) is
 *    not a citation.
 * 2. Any other token shaped like an id: a word (letters and digits, joined by `-`, `_`, `.`, `:` or
 *    `#`) that mixes letters and digits (`evt-0001`, `EVT_0001`, `evt0001`,
 *    `c-1`, `a3f9c2d1e5b7`), or holds 10 digits or more (`1700000000123`). Not ids: ISO 8601 dates
 *    and times, numbers with a unit or ordinal (`15min`, `24h`, `3x`, `5xx`, `2nd`), versions (`v1`,
 *    `v1.2.0`: the API's paths), numbers in exponent notation (`5e-324`), and a few
 *    technical terms (TECHNICAL_TERMS: `ja4`, `ipv4`, `sha256`, `p95` …). Such a token may be named
 *    only when the input holds it (`known`), compared with case, separators and the rest of the
 *    spelling folded away: `EVT_0001` is known when the input says `evt-0001`.
 * A claim's `eventIds` entries must be citable, whatever their shape.
 */

/** Invisible format characters (Unicode category Cf). */
const FORMAT = /\p{Cf}/gu;
const UUID = /([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})/gi;
const WORD = /[\p{L}\p{N}]+(?:[-_.:#][\p{L}\p{N}]+)*/gu;
const ISO_TIME = /^(?:\d{4}-\d{2}-\d{2}(?:[Tt]\d{2}(?::\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?|\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?[Zz]?)$/;
const WITH_UNIT = /^(?:\d+(?:st|nd|rd|th|ms|s|sec|secs|min|mins|m|h|hr|hrs|d|w|x|k|kb|mb|gb|tb|xx))+$/;
const VERSION = /^[vV]\d{1,3}(?:\.\d{1,3}){0,2}$/;
const EXPONENT = /^\d+(?:\.\d+)?[eE]-?\d+$/;
/** Terms of the trade that mix letters and digits and are no identifier. */
export const TECHNICAL_TERMS: ReadonlySet<string> = new Set(['ja3', 'ja3s', 'ja4', 'ja4h', 'ipv4', 'ipv6', 'sha1', 'sha256', 'sha512', 'md5', 'http2', 'http3', 'h2', 'h3', 'tls12', 'tls13', 'utf8', 'utf16', 'x509', 'base64', 'p50', 'p90', 'p95', 'p99', 'p999']);

const readable = (text: string) => text.normalize('NFKC').replace(FORMAT, '');
/** A word with case and every separator folded away: the form identifiers are compared in. */
const folded = (word: string) => word.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

function isIdShaped(word: string): boolean {
  const f = folded(word);
  const letters = /\p{L}/u.test(f);
  const digits = (f.match(/\p{N}/gu) ?? []).length;
  if (letters && digits > 0) return !ISO_TIME.test(word) && !WITH_UNIT.test(f) && !VERSION.test(word) && !EXPONENT.test(word) && !TECHNICAL_TERMS.has(f);
  return !letters && digits >= 10 && !ISO_TIME.test(word);
}

/** The uuids written in `text`, lowercased with hyphens, in order. */
export const idsInText = (text: string) => [...readable(text).matchAll(UUID)].map((m) => `${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}`.toLowerCase());

/**
 * Every identifier `text` names: its uuids (canonical form) and the other id-shaped tokens (as
 * written, lowercased, and folded for comparison).
 */
export function identifiersIn(text: string): { uuids: string[]; tokens: { written: string; folded: string }[] } {
  const plain = readable(text);
  const uuids = idsInText(plain);
  const rest = plain.replace(UUID, ' ');
  const tokens = [...rest.matchAll(WORD)].map((m) => m[0]).filter(isIdShaped).map((w) => ({ written: w.toLowerCase(), folded: folded(w) }));
  return { uuids, tokens };
}

/**
 * The identifiers an input holds, for `known`: every string and number in `value` (objects and
 * arrays walked, keys left out) read as above; uuids are listed in their canonical form and words folded.
 */
export function identifierTokens(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (typeof value === 'number') into.add(folded(String(value)));
  else if (typeof value === 'string') {
    const plain = readable(value);
    for (const id of idsInText(plain)) into.add(id);
    for (const m of plain.replace(UUID, ' ').matchAll(WORD)) into.add(folded(m[0]));
  } else if (typeof value === 'object' && value !== null) {
    // An array's values are its items, in order.
    for (const item of Object.values(value)) identifierTokens(item, into);
  }
  return into;
}

/** A claim's `eventIds` entry: a uuid in any spelling becomes its canonical form; anything else lowercased. */
const canonicalId = (id: string) => {
  const plain = readable(id).trim();
  const m = /^(?:urn:uuid:)?\{?([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})\}?$/i.exec(plain);
  return m ? `${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}`.toLowerCase() : plain.toLowerCase();
};

export interface DraftGuard {
  /** Event ids a draft may cite (the incident's lineage, or the proposal's evidence). */
  citable: ReadonlySet<string>;
  /** Other uuids its text may name without citing them (the incident's own id). */
  named?: ReadonlySet<string>;
  /** Identifiers of the input (`identifierTokens`). */
  known: ReadonlySet<string>;
  /** The origin links may point at; every other link is dropped. */
  linkOrigin: string;
  /** The title used when the draft's title names a foreign identifier. */
  fallbackTitle: string;
}

export interface StrippedDraft {
  draft: PostmortemDraft;
  /** Ids cited by the claims kept, sorted. */
  citedEventIds: string[];
  /** Foreign identifiers, sorted: every claim naming one was removed. */
  strippedEventIds: string[];
  strippedClaims: number;
}


export function stripDraft(raw: PostmortemDraft, guard: DraftGuard): StrippedDraft {
  const { citable, known, linkOrigin } = guard;
  const named = guard.named ?? new Set<string>();
  const cited = new Set<string>();
  const stripped = new Set<string>();
  /** The text with links dropped, and the foreign identifiers it names (links to this service are read past their origin). */
  const read = (text: string) => {
    const unlinked = dropForeignLinks(text, linkOrigin).text;
    const found = identifiersIn(unlinked.split(linkOrigin).join(' '));
    const foreign = [...found.uuids.filter((id) => !citable.has(id) && !named.has(id)), ...found.tokens.filter((t) => !known.has(t.folded)).map((t) => t.written)];
    return { unlinked, uuids: found.uuids.filter((id) => citable.has(id)), foreign };
  };
  let strippedClaims = 0;
  const sections = {} as PostmortemDraft['sections'];
  for (const section of POSTMORTEM_SECTIONS) {
    sections[section] = [];
    for (const claim of raw.sections[section]) {
      const eventIds = claim.eventIds.map(canonicalId);
      const text = read(claim.text);
      const foreign = [...eventIds.filter((id) => !citable.has(id)), ...text.foreign];
      if (foreign.length > 0) {
        foreign.forEach((id) => stripped.add(id));
        strippedClaims++;
        continue;
      }
      [...eventIds, ...text.uuids].forEach((id) => cited.add(id));
      sections[section].push({ text: clip(text.unlinked, TEXT_MAX.claim), eventIds });
    }
  }
  const title = read(raw.title);
  title.foreign.forEach((id) => stripped.add(id));
  return {
    draft: { title: clip(title.foreign.length > 0 ? dropForeignLinks(guard.fallbackTitle, linkOrigin).text : title.unlinked, TEXT_MAX.title), sections },
    citedEventIds: [...cited].sort(),
    strippedEventIds: [...stripped].sort(),
    strippedClaims,
  };
}
