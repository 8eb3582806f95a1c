import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Claim, POSTMORTEM_SECTIONS, type PostmortemDraft } from '../agents/types.ts';
import { LINK_REMOVED } from '../../../platform/llm/links.ts';
import { type DraftGuard, identifiersIn, identifierTokens, idsInText, stripDraft } from './strip.ts';

// The guard on postmortem drafts (spec B `incidents/{id}/auto-draft`): a claim that cites an event
// outside the incident's lineage, or names an identifier the input does not hold, in any spelling,
// is removed whole and the foreign identifiers are listed; links leaving the service are dropped.

const L1 = 'aaaaaaaa-0000-4000-8000-000000000001';
const L2 = 'aaaaaaaa-0000-4000-8000-000000000002';
const L3 = 'aaaaaaaa-0000-4000-8000-000000000003';
const F1 = 'ffffffff-0000-4000-8000-000000000001';
const F2 = 'ffffffff-0000-4000-8000-000000000002';
const F3 = 'ffffffff-0000-4000-8000-000000000003';
const LINEAGE = new Set([L1, L2, L3]);
const FALLBACK = 'Postmortem: the incident';
const ORIGIN = 'https://observatory.example.com';
const guard = (citable: ReadonlySet<string> = LINEAGE, known: ReadonlySet<string> = new Set()): DraftGuard => ({ citable, known, linkOrigin: ORIGIN, fallbackTitle: FALLBACK });

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
    const out = stripDraft(draft({ summary: [claim('web-a surged.', [L2.toUpperCase(), L1])], timeline: [claim(`At 10:00 ${L3} arrived.`)] }), guard());
    expect(out).toEqual({
      draft: draft({ summary: [claim('web-a surged.', [L2, L1])], timeline: [claim(`At 10:00 ${L3} arrived.`)] }),
      citedEventIds: [L1, L2, L3],
      strippedEventIds: [],
      strippedClaims: 0,
    });
  });

  it('removes a claim whole when one of its eventIds is foreign, whatever the case', () => {
    const out = stripDraft(draft({ impact: [claim('Kept.', [L1]), claim('Mixed.', [L2, F1.toUpperCase()]), claim('Also kept.', [L3])] }), guard());
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
      guard(),
    );
    expect(out.draft.sections.rootCause).toEqual([]);
    expect(out.draft.sections.actionItems).toEqual([claim('Add a rule.')]);
    expect(out.strippedEventIds).toEqual([F2, F3]);
    expect(out.strippedClaims).toBe(2);
    expect(out.citedEventIds).toEqual([]);
  });

  it('keeps a claim that cites nothing', () => {
    const out = stripDraft(draft({ rootCause: [claim('The cause is not yet known.')] }), guard());
    expect(out.draft.sections.rootCause).toEqual([claim('The cause is not yet known.')]);
    expect(out).toMatchObject({ citedEventIds: [], strippedEventIds: [], strippedClaims: 0 });
  });

  it('lists cited and stripped ids sorted and once, across sections and claims', () => {
    const out = stripDraft(
      draft({
        summary: [claim(`${L3} then ${L1}`, [L3, L3]), claim('x', [F2, F1])],
        timeline: [claim(`${L1.toUpperCase()}`, [L2]), claim(`${F1}`, [F2.toUpperCase()])],
      }),
      guard(),
    );
    expect(out.citedEventIds).toEqual([L1, L2, L3]);
    expect(out.strippedEventIds).toEqual([F1, F2]);
    expect(out.strippedClaims).toBe(2);
  });

  it('keeps a kept claim\'s eventIds as given apart from the case (repeats too) and its text untouched', () => {
    const text = `Rows ${L1.toUpperCase()} failed.`;
    const out = stripDraft(draft({ timeline: [claim(text, [L2.toUpperCase(), L2])] }), guard());
    expect(out.draft.sections.timeline).toEqual([claim(text, [L2, L2])]);
    expect(out.citedEventIds).toEqual([L1, L2]);
  });

  it('replaces a title naming a foreign uuid with the fallback and lists the id', () => {
    const out = stripDraft(draft({ summary: [claim('ok', [L1])] }, `Postmortem: ${F3.toUpperCase()} flooded`), guard());
    expect(out.draft.title).toBe(FALLBACK);
    expect(out.strippedEventIds).toEqual([F3]);
    // A title is not a claim.
    expect(out.strippedClaims).toBe(0);
    expect(out.draft.sections.summary).toEqual([claim('ok', [L1])]);
  });

  it('keeps a title naming only lineage uuids', () => {
    expect(stripDraft(draft({}, `Postmortem: ${L1} and ${L2.toUpperCase()}`), guard()).draft.title).toBe(`Postmortem: ${L1} and ${L2.toUpperCase()}`);
  });

  it('treats a non-uuid event id like any other: foreign unless the lineage holds it', () => {
    const out = stripDraft(draft({ summary: [claim('a', ['E1']), claim('b', ['e2'])] }), guard(new Set(['e1'])));
    expect(out.draft.sections.summary).toEqual([claim('a', ['e1'])]);
    expect(out.strippedEventIds).toEqual(['e2']);
  });

  it('does not change the draft it was given', () => {
    const raw = draft({ summary: [claim('x', [F1]), claim('y', [L1.toUpperCase()])] }, `T ${F2}`);
    const copy = structuredClone(raw);
    stripDraft(raw, guard());
    expect(raw).toEqual(copy);
  });
});

describe('identifiers in any form (issue 26: `evt-0001` survived)', () => {
  const forms = ['evt-0001', 'EVT-0001', 'evt_0001', 'Evt0001', 'evt:0001', 'evt#0001', 'evt.0001', 'ｅｖｔ－０００１', 'evt\u200b-0001', 'e\u00advt-0001', 'EVT\u2060_0001'];

  it('removes a claim naming an identifier the input does not hold, however it is written', () => {
    for (const form of forms) {
      const out = stripDraft(draft({ timeline: [claim(`Then ${form} arrived.`), claim('Kept.')] }), guard());
      expect(out.draft.sections.timeline, form).toEqual([claim('Kept.')]);
      expect(out.strippedClaims, form).toBe(1);
      expect(out.strippedEventIds, form).toHaveLength(1);
    }
  });

  it('keeps it, in every one of those forms, when the input holds it in any of them', () => {
    const known = identifierTokens({ lineage: [{ eventType: 'replay of evt-0001' }] });
    for (const form of forms) {
      expect(stripDraft(draft({ timeline: [claim(`Then ${form} arrived.`)] }), guard(LINEAGE, known)).strippedClaims, form).toBe(0);
    }
  });

  it('reads a uuid in any spelling: capitals, no hyphens, braces, urn:uuid:, glued to text', () => {
    const bare = F1.replaceAll('-', '');
    for (const text of [`id ${F1.toUpperCase()}`, `id ${bare}`, `id {${F1}}`, `urn:uuid:${F1}`, `event=${bare.toUpperCase()}x`, `evt${F1}`]) {
      const out = stripDraft(draft({ summary: [claim(text)] }), guard());
      expect(out.draft.sections.summary, text).toEqual([]);
      expect(out.strippedEventIds, text).toEqual([F1]);
    }
    // A lineage uuid written without hyphens is the lineage id: kept, and cited in its canonical form.
    const kept = stripDraft(draft({ summary: [claim(`Row ${L2.replaceAll('-', '').toUpperCase()} failed.`, [`{${L1.toUpperCase()}}`, `urn:uuid:${L3}`])] }), guard());
    expect(kept.strippedClaims).toBe(0);
    expect(kept.draft.sections.summary[0]!.eventIds).toEqual([L1, L3]);
    expect(kept.citedEventIds).toEqual([L1, L2, L3]);
  });

  it('does not take times, counts, units, versions or terms of the trade for identifiers', () => {
    const text =
      'At 2026-11-26T10:30:00.000Z (10:30, 2026-11-26) 1,234 events came in 15min, 24h after the 2nd deploy: 3x the rate, 5xx answers, p95 of 2.5s, ' +
      'one ja4 and SHA-256 HTTP/2 on IPv4 203.0.113.50, see /v1/empire/triage and v1.2.0; 85.7% LIAR.';
    expect(identifiersIn(text).tokens).toEqual([]);
    expect(stripDraft(draft({ impact: [claim(text)] }), guard()).strippedClaims).toBe(0);
  });

  it('takes long numbers and letter-digit mixes for identifiers', () => {
    expect(identifiersIn('snowflake 1700000000123, hash a3f9c2d1e5b7, sender c-1, ULID 01HF3K8Z').tokens.map((t) => t.written)).toEqual(['1700000000123', 'a3f9c2d1e5b7', 'c-1', '01hf3k8z']);
  });

  it('lets the text name the incident\'s own id (`named`) without citing it; it is never a citation', () => {
    const incident = 'cccccccc-0000-4000-8000-00000000000c';
    const withNamed = { ...guard(), named: new Set([incident]) };
    const out = stripDraft(draft({ actionItems: [claim(`Open ${ORIGIN}/v1/empire/incidents/${incident}.`, [L1])] }), withNamed);
    expect(out).toMatchObject({ strippedClaims: 0, citedEventIds: [L1] });
    expect(stripDraft(draft({ actionItems: [claim('x', [incident])] }), withNamed).strippedEventIds).toEqual([incident]);
    expect(stripDraft(draft({ actionItems: [claim(`See ${incident}.`)] }), guard()).strippedEventIds).toEqual([incident]);
  });

  it('replaces a title naming a foreign identifier', () => {
    const out = stripDraft(draft({}, 'Postmortem: the EVT_0042 flood'), guard());
    expect(out.draft.title).toBe(FALLBACK);
    expect(out.strippedEventIds).toEqual(['evt_0042']);
  });
});

describe('links', () => {
  it('drops links that leave the service from kept claims and the title, and keeps the service\'s own', () => {
    const out = stripDraft(
      draft({ actionItems: [claim('Rotate the key at https://evil.example/reset now.'), claim(`Open ${ORIGIN}/v1/empire/incidents and http://localhost:3000/x.`)] }, 'Postmortem: see www.evil.example'),
      guard(),
    );
    expect(out.draft.title).toBe(`Postmortem: see ${LINK_REMOVED}`);
    expect(out.draft.sections.actionItems).toEqual([claim(`Rotate the key at ${LINK_REMOVED} now.`), claim(`Open ${ORIGIN}/v1/empire/incidents and ${LINK_REMOVED}.`)]);
    expect(out.strippedClaims).toBe(0);
  });

  it('still reads the path of a link to the service: a foreign id in it removes the claim', () => {
    const out = stripDraft(draft({ summary: [claim(`See ${ORIGIN}/v1/empire/events/${F2}.`)] }), guard());
    expect(out.draft.sections.summary).toEqual([]);
    expect(out.strippedEventIds).toEqual([F2]);
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
        const out = stripDraft(raw, guard());
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
