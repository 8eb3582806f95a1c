import { POSTMORTEM_SECTIONS, type PostmortemDraft } from '../agents/types.ts';

/**
 * The guard on a postmortem (spec B `incidents/{id}/auto-draft`): a claim that cites an event
 * outside the incident's lineage is removed whole, since a sentence resting on a foreign event
 * cannot be trusted in part. A claim cites the ids in its `eventIds` and any event id (uuid)
 * written in its text; a foreign id in the title replaces the title. Pure.
 */

const UUID_IN_TEXT = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

export const idsInText = (text: string) => (text.match(UUID_IN_TEXT) ?? []).map((id) => id.toLowerCase());

export interface StrippedDraft {
  draft: PostmortemDraft;
  /** Ids cited by the claims kept, sorted. */
  citedEventIds: string[];
  /** Foreign ids, sorted: every claim citing one was removed. */
  strippedEventIds: string[];
  strippedClaims: number;
}

export function stripDraft(raw: PostmortemDraft, lineage: ReadonlySet<string>, fallbackTitle: string): StrippedDraft {
  const cited = new Set<string>();
  const stripped = new Set<string>();
  let strippedClaims = 0;
  const sections = {} as PostmortemDraft['sections'];
  for (const section of POSTMORTEM_SECTIONS) {
    sections[section] = [];
    for (const claim of raw.sections[section]) {
      const ids = [...new Set([...claim.eventIds.map((id) => id.toLowerCase()), ...idsInText(claim.text)])];
      const foreign = ids.filter((id) => !lineage.has(id));
      if (foreign.length > 0) {
        foreign.forEach((id) => stripped.add(id));
        strippedClaims++;
        continue;
      }
      ids.forEach((id) => cited.add(id));
      sections[section].push({ text: claim.text, eventIds: claim.eventIds.map((id) => id.toLowerCase()) });
    }
  }
  const titleForeign = idsInText(raw.title).filter((id) => !lineage.has(id));
  titleForeign.forEach((id) => stripped.add(id));
  return {
    draft: { title: titleForeign.length > 0 ? fallbackTitle : raw.title, sections },
    citedEventIds: [...cited].sort(),
    strippedEventIds: [...stripped].sort(),
    strippedClaims,
  };
}
