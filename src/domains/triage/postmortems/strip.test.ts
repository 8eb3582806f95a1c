import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Claim, POSTMORTEM_SECTIONS, type PostmortemDraft } from '../agents/types.ts';
import { idsInText, stripDraft } from './strip.ts';

// The guard on postmortem drafts (spec B `incidents/{id}/auto-draft`): a claim that cites an event
// outside the incident's lineage is removed whole and the foreign ids are listed.

const L1 = 'aaaaaaaa-0000-4000-8000-000000000001';
const L2 = 'aaaaaaaa-0000-4000-8000-000000000002';
const L3 = 'aaaaaaaa-0000-4000-8000-000000000003';
const F1 = 'ffffffff-0000-4000-8000-000000000001';
const F2 = 'ffffffff-0000-4000-8000-000000000002';
const F3 = 'ffffffff-0000-4000-8000-000000000003';
const LINEAGE = new Set([L1, L2, L3]);
const FALLBACK = 'Postmortem: the incident';

const claim = (text: string, eventIds: string[] = []): Claim => ({ text, eventIds });

function draft(sections: Partial<PostmortemDraft['sections']>, title = 'Postmortem: web-a surged'): PostmortemDraft {
  return { title, sections: { summary: [], timeline: [], impact: [], rootCause: [], actionItems: [], ...sections } };
}

describe('idsInText', () => {
  it('finds every uuid in any case, lowercased, in order', () => {
    expect(idsInText(`see ${F1.toUpperCase()} and (${L1}), then ${F1}`)).toEqual([F1, L1, F1]);
    expect(idsInText('no ids here, nor a short one: aaaaaaaa-0000-4000-8000')).toEqual([]);
  });
});

describe('stripDraft', () => {
  it('keeps a draft that cites only its lineage as it is, ids lowercased', () => {
    const out = stripDraft(draft({ summary: [claim('web-a surged.', [L2.toUpperCase(), L1])], timeline: [claim(`At 10:00 ${L3} arrived.`)] }), LINEAGE, FALLBACK);
    expect(out).toEqual({
      draft: draft({ summary: [claim('web-a surged.', [L2, L1])], timeline: [claim(`At 10:00 ${L3} arrived.`)] }),
      citedEventIds: [L1, L2, L3],
      strippedEventIds: [],
      strippedClaims: 0,
    });
  });

  it('removes a claim whole when one of its eventIds is foreign, whatever the case', () => {
    const out = stripDraft(draft({ impact: [claim('Kept.', [L1]), claim('Mixed.', [L2, F1.toUpperCase()]), claim('Also kept.', [L3])] }), LINEAGE, FALLBACK);
    expect(out.draft.sections.impact).toEqual([claim('Kept.', [L1]), claim('Also kept.', [L3])]);
    expect(out.strippedEventIds).toEqual([F1]);
    expect(out.strippedClaims).toBe(1);
    // The lineage id of the removed claim is not cited by what is kept.
    expect(out.citedEventIds).toEqual([L1, L3]);
  });

  it('removes a claim whose text names a foreign uuid, in any case, even when its eventIds are clean', () => {
    const out = stripDraft(
      draft({
        rootCause: [claim(`Caused by ${F2.toUpperCase()}.`, [L1]), claim(`Caused by ${F3}.`)],
        actionItems: [claim('Add a rule.')],
      }),
      LINEAGE,
      FALLBACK,
    );
    expect(out.draft.sections.rootCause).toEqual([]);
    expect(out.draft.sections.actionItems).toEqual([claim('Add a rule.')]);
    expect(out.strippedEventIds).toEqual([F2, F3]);
    expect(out.strippedClaims).toBe(2);
    expect(out.citedEventIds).toEqual([]);
  });

  it('keeps a claim that cites nothing', () => {
    const out = stripDraft(draft({ rootCause: [claim('The cause is not yet known.')] }), LINEAGE, FALLBACK);
    expect(out.draft.sections.rootCause).toEqual([claim('The cause is not yet known.')]);
    expect(out).toMatchObject({ citedEventIds: [], strippedEventIds: [], strippedClaims: 0 });
  });

  it('lists cited and stripped ids sorted and once, across sections and claims', () => {
    const out = stripDraft(
      draft({
        summary: [claim(`${L3} then ${L1}`, [L3, L3]), claim('x', [F2, F1])],
        timeline: [claim(`${L1.toUpperCase()}`, [L2]), claim(`${F1}`, [F2.toUpperCase()])],
      }),
      LINEAGE,
      FALLBACK,
    );
    expect(out.citedEventIds).toEqual([L1, L2, L3]);
    expect(out.strippedEventIds).toEqual([F1, F2]);
    expect(out.strippedClaims).toBe(2);
  });

  it('keeps a kept claim\'s eventIds as given apart from the case (repeats too) and its text untouched', () => {
    const text = `Rows ${L1.toUpperCase()} failed.`;
    const out = stripDraft(draft({ timeline: [claim(text, [L2.toUpperCase(), L2])] }), LINEAGE, FALLBACK);
    expect(out.draft.sections.timeline).toEqual([claim(text, [L2, L2])]);
    expect(out.citedEventIds).toEqual([L1, L2]);
  });

  it('replaces a title naming a foreign uuid with the fallback and lists the id', () => {
    const out = stripDraft(draft({ summary: [claim('ok', [L1])] }, `Postmortem: ${F3.toUpperCase()} flooded`), LINEAGE, FALLBACK);
    expect(out.draft.title).toBe(FALLBACK);
    expect(out.strippedEventIds).toEqual([F3]);
    // A title is not a claim.
    expect(out.strippedClaims).toBe(0);
    expect(out.draft.sections.summary).toEqual([claim('ok', [L1])]);
  });

  it('keeps a title naming only lineage uuids', () => {
    expect(stripDraft(draft({}, `Postmortem: ${L1} and ${L2.toUpperCase()}`), LINEAGE, FALLBACK).draft.title).toBe(`Postmortem: ${L1} and ${L2.toUpperCase()}`);
  });

  it('treats a non-uuid event id like any other: foreign unless the lineage holds it', () => {
    const out = stripDraft(draft({ summary: [claim('a', ['E1']), claim('b', ['e2'])] }), new Set(['e1']), FALLBACK);
    expect(out.draft.sections.summary).toEqual([claim('a', ['e1'])]);
    expect(out.strippedEventIds).toEqual(['e2']);
  });

  it('does not change the draft it was given', () => {
    const raw = draft({ summary: [claim('x', [F1]), claim('y', [L1.toUpperCase()])] }, `T ${F2}`);
    const copy = structuredClone(raw);
    stripDraft(raw, LINEAGE, FALLBACK);
    expect(raw).toEqual(copy);
  });
});

describe('stripDraft, property', () => {
  const lineageIds = [L1, L2, L3];
  const foreignIds = [F1, F2, F3, 'ffffffff-1111-4111-8111-111111111111'];
  const anyId = fc.constantFrom(...lineageIds, ...foreignIds).chain((id) => fc.boolean().map((upper) => (upper ? id.toUpperCase() : id)));
  const arbClaim = fc.record({
    text: fc.tuple(fc.constantFrom('', 'Rows ', 'See '), fc.array(anyId, { maxLength: 2 })).map(([prefix, ids]) => `${prefix}${ids.join(' and ')}.`),
    eventIds: fc.array(anyId, { maxLength: 4 }),
  });
  const arbDraft = fc.record({
    title: fc.array(anyId, { maxLength: 2 }).map((ids) => `Postmortem ${ids.join(' ')}`),
    sections: fc.record(Object.fromEntries(POSTMORTEM_SECTIONS.map((s) => [s, fc.array(arbClaim, { maxLength: 4 })])) as Record<(typeof POSTMORTEM_SECTIONS)[number], fc.Arbitrary<Claim[]>>),
  });

  const citesOf = (c: Claim) => [...c.eventIds.map((id) => id.toLowerCase()), ...idsInText(c.text)];

  it('no kept claim cites a foreign id, every foreign id cited anywhere is listed, and nothing else is', () => {
    fc.assert(
      fc.property(arbDraft, (raw) => {
        const out = stripDraft(raw, LINEAGE, FALLBACK);
        const kept = POSTMORTEM_SECTIONS.flatMap((s) => out.draft.sections[s]);
        for (const c of kept) expect(citesOf(c).every((id) => LINEAGE.has(id))).toBe(true);
        expect(idsInText(out.draft.title).every((id) => LINEAGE.has(id))).toBe(true);

        const all = POSTMORTEM_SECTIONS.flatMap((s) => raw.sections[s]);
        const foreignCited = new Set([...all.flatMap(citesOf), ...idsInText(raw.title)].filter((id) => !LINEAGE.has(id)));
        expect(out.strippedEventIds).toEqual([...foreignCited].sort());
        expect(out.citedEventIds).toEqual([...new Set(kept.flatMap(citesOf))].sort());

        // A claim is removed iff it cites a foreign id; the others keep their order.
        const clean = (c: Claim) => citesOf(c).every((id) => LINEAGE.has(id));
        for (const s of POSTMORTEM_SECTIONS) {
          expect(out.draft.sections[s].map((c) => c.text)).toEqual(raw.sections[s].filter(clean).map((c) => c.text));
        }
        expect(out.strippedClaims).toBe(all.filter((c) => !clean(c)).length);
      }),
    );
  });
});
