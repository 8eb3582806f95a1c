import { Value } from '@sinclair/typebox/value';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UNTRUSTED_DATA_RULES } from '../../../platform/llm/untrusted.ts';
import {
  classifyIncidents,
  INCIDENT_CLASSIFIER_PARAMS_1_0_0 as V100,
  INCIDENT_CLASSIFIER_PARAMS_1_1_0 as V110,
  INCIDENT_CLASSIFIER_VERSIONS,
  type IncidentClassifierParams,
  severityCeiling,
} from './incident-classifier.ts';
import { identifierTokens, stripDraft } from '../postmortems/strip.ts';
import { IncidentItem } from './output.ts';
import { type CrossToolsetWindow, type HoneypotWindow, type IncidentProposalDraft, POSTMORTEM_SECTIONS, type ToolsetWindow, type TriageSnapshot } from './types.ts';

const ids = (prefix: string, n = 3) => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);

/** A toolset of the 15-minute window; `baseline` events an hour (expected = baseline / 4), or no forecast. */
function toolset(name: string, events: number, baseline: number | null, tenants = 2): ToolsetWindow {
  return {
    toolset: name,
    events,
    tenants,
    topEventTypes: events > 0 ? [{ eventType: 'page.view', count: events }] : [],
    sampleEventIds: events > 0 ? ids(name) : [],
    forecast: baseline === null ? null : { score: 0.5, level: 'watch', baselineMean: baseline, recentMean: baseline, computedAt: '2024-05-01T11:45:00.000Z' },
  };
}

function honeypot(tenant: string, events: number, liarEvents: number, tarpits = 0): HoneypotWindow {
  return {
    tenant,
    events,
    liarEvents,
    topLiarFingerprints: liarEvents > 0 ? [{ fingerprintId: `fp-${tenant}`, liarEvents }] : [],
    tarpitsTriggered: Array.from({ length: tarpits }, (_, i) => ({ fingerprintId: `fp-${tenant}-${i}`, triggeredAt: `2024-05-01T11:5${i}:00.000Z`, liarEventCount: 30 })),
    sampleLiarEventIds: liarEvents > 0 ? ids(`liar-${tenant}`) : [],
  };
}

const cross = (tenant: string, toolsets: string[], events = 40): CrossToolsetWindow => ({ tenant, toolsets, events, sampleEvents: toolsets.map((t) => ({ eventId: `x-${tenant}-${t}`, toolset: t })) });

function snapshot(over: Partial<TriageSnapshot> = {}): TriageSnapshot {
  return { windowStart: '2024-05-01T11:45:00.000Z', windowEnd: '2024-05-01T12:00:00.000Z', windowMinutes: 15, toolsets: [], honeypot: [], crossToolset: [], openIncidents: [], ...over };
}

/**
 * The fleet of the known-answer test (window 15 min, so expected = baseline / 4):
 * - web-spike: 30 events vs 10 expected = 3×: a minor spike in 1.1.0 (factor 3, min 20); 1.0.0 needs 5× and 50.
 * - web-big: 100 vs 10 = 10×: major in 1.1.0 (major at 10×), minor in 1.0.0 (major at 20×).
 * - web-quiet: 0 vs 10 expected: a minor silence in 1.1.0 (from 10), none in 1.0.0 (from 20).
 * - web-dead: 0 vs 200 expected: a major silence in both.
 * - web-new: 500 events, no forecast: a minor spike in 1.1.0 only.
 * - web-steady: 10 vs 10: nothing. web-dup: 100 vs 10, but a rate-spike incident is open.
 * - web-fc: silent, but the forecaster's "fell silent" incident is open.
 * - hp-a: 50 LIAR of 60 (83%): a major flood in 1.1.0. hp-b: 60 LIAR of 200 and a tarpit: major flood.
 * - hp-c: 10 LIAR, 2 tarpits: a minor tarpit proposal in 1.1.0. hp-d: 49 LIAR of 400: nothing.
 * - acme in 3 toolsets: a minor cross-toolset proposal in 1.1.0 (toolset: the first by name). beta in 2: nothing.
 */
const fleet = snapshot({
  toolsets: [
    toolset('web-spike', 30, 40),
    toolset('web-big', 100, 40),
    toolset('web-quiet', 0, 40),
    toolset('web-dead', 0, 800),
    toolset('web-new', 500, null),
    toolset('web-steady', 10, 40),
    toolset('web-dup', 100, 40),
    toolset('web-fc', 0, 800),
  ],
  honeypot: [honeypot('hp-a', 60, 50), honeypot('hp-b', 200, 60, 1), honeypot('hp-c', 100, 10, 2), honeypot('hp-d', 400, 49)],
  crossToolset: [cross('acme', ['web-x', 'api-y', 'db-z']), cross('beta', ['web-x', 'api-y'])],
  openIncidents: [
    { id: 'i1', toolset: 'web-dup', title: 'Rate spike: web-dup — 90 events in 15 min, 9× expected', source: 'triage' },
    { id: 'i2', toolset: 'web-fc', title: 'Forecast: web-fc event rate fell silent (score 0.96 on 3 runs)', source: 'forecast' },
    // Neither covers web-spike: another marker's subject only starts with the same letters.
    { id: 'i3', toolset: 'web-spike', title: 'Rate spike: web-spike2 — 40 events', source: 'triage' },
    { id: 'i4', toolset: 'web-big', title: 'Silence: web-big — 0 events', source: 'triage' },
  ],
});

const brief = (out: IncidentProposalDraft[]) => out.map((p) => [p.severity, p.toolset, p.signal, p.title.split(' — ')[0]]);

describe('classifyIncidents on a known fleet', () => {
  it('1.1.0 proposes exactly the expected incidents, most severe first, then by toolset and signal', () => {
    expect(brief(classifyIncidents(fleet, V110))).toEqual([
      ['major', 'honeypot', 'liar-flood', 'Liar flood: hp-a'],
      ['major', 'honeypot', 'liar-flood', 'Liar flood: hp-b'],
      ['major', 'web-big', 'rate-spike', 'Rate spike: web-big'],
      ['major', 'web-dead', 'silence', 'Silence: web-dead'],
      ['minor', 'api-y', 'cross-toolset', 'Cross-toolset: acme'],
      ['minor', 'honeypot', 'tarpit', 'Tarpit: hp-c'],
      ['minor', 'web-new', 'rate-spike', 'Rate spike: web-new'],
      ['minor', 'web-quiet', 'silence', 'Silence: web-quiet'],
      ['minor', 'web-spike', 'rate-spike', 'Rate spike: web-spike'],
    ]);
  });

  it('1.0.0 is more conservative on the same fleet', () => {
    expect(brief(classifyIncidents(fleet, V100))).toEqual([
      ['major', 'web-dead', 'silence', 'Silence: web-dead'],
      ['minor', 'web-big', 'rate-spike', 'Rate spike: web-big'],
    ]);
  });

  it('writes the numbers into title and summary, and cites the samples as evidence', () => {
    const out = classifyIncidents(fleet, V110);
    const big = out.find((p) => p.toolset === 'web-big')!;
    expect(big.title).toBe('Rate spike: web-big — 100 events in 15 min, 10× expected');
    expect(big.summary).toBe(
      'web-big received 100 events in 15 minutes against about 10 expected from its forecast baseline of 40 an hour (10×). 2 tenants; top event types: page.view (100).',
    );
    expect(big.evidenceEventIds).toEqual(ids('web-big'));
    const flood = out.find((p) => p.title.startsWith('Liar flood: hp-b'))!;
    expect(flood.summary).toBe('Honeypot tenant hp-b saw 60 LIAR events out of 200 (30%) in 15 minutes; 1 tarpit triggered; top liar fingerprint fp-hp-b (60).');
    expect(flood.evidenceEventIds).toEqual(ids('liar-hp-b'));
    const dead = out.find((p) => p.toolset === 'web-dead')!;
    expect(dead.summary).toBe('web-dead sent no events in 15 minutes, while its forecast baseline of 800 an hour makes about 200 expected.');
    // A silence has no event to cite: its evidence is empty (the one signal allowed none).
    expect(dead.evidenceEventIds).toEqual([]);
    // A cross-toolset proposal is of the first toolset by name (api-y), and cites that toolset's events only.
    expect(out.find((p) => p.signal === 'cross-toolset')!.evidenceEventIds).toEqual(['x-acme-api-y']);
  });

  it('seeds a five-section postmortem per proposal citing only its evidence', () => {
    for (const p of classifyIncidents(fleet, V110)) {
      const draft = p.postmortemDraft!;
      expect(Object.keys(draft.sections)).toEqual([...POSTMORTEM_SECTIONS]);
      for (const section of POSTMORTEM_SECTIONS) {
        expect(draft.sections[section].length).toBeGreaterThan(0);
        for (const claim of draft.sections[section]) for (const id of claim.eventIds) expect(p.evidenceEventIds).toContain(id);
      }
      expect(draft.sections.rootCause[0]!.text).toMatch(/^Not yet known/);
      if (p.signal !== 'silence') expect(draft.sections.summary[0]!.eventIds.length).toBeGreaterThan(0);
    }
  });

  it('proposes nothing for a quiet fleet or an empty snapshot', () => {
    const quiet = snapshot({
      toolsets: [toolset('web-a', 10, 40), toolset('web-b', 0, 4), toolset('web-c', 3, null)],
      honeypot: [honeypot('hp-a', 100, 5)],
      crossToolset: [cross('acme', ['web-a', 'web-b'])],
    });
    expect(classifyIncidents(quiet, V110)).toEqual([]);
    expect(classifyIncidents(quiet, V100)).toEqual([]);
    expect(classifyIncidents(snapshot(), V110)).toEqual([]);
  });

  it('caps the proposals at maxProposals, keeping the most severe', () => {
    expect(brief(classifyIncidents(fleet, { ...V110, maxProposals: 2 })).map((x) => x[3])).toEqual(['Liar flood: hp-a', 'Liar flood: hp-b']);
    expect(classifyIncidents(fleet, { ...V110, maxProposals: 0 })).toEqual([]);
  });

  it('gives the same proposals for the same snapshot, in any order of its lists', () => {
    const reordered: TriageSnapshot = {
      ...fleet,
      toolsets: [...fleet.toolsets].reverse(),
      honeypot: [...fleet.honeypot].reverse(),
      crossToolset: [...fleet.crossToolset].reverse().map((x) => ({ ...x, toolsets: [...x.toolsets].reverse() })),
      openIncidents: [...fleet.openIncidents].reverse(),
    };
    expect(classifyIncidents(reordered, V110)).toEqual(classifyIncidents(fleet, V110));
    expect(classifyIncidents(structuredClone(fleet), V110)).toEqual(classifyIncidents(fleet, V110));
  });
});

describe('classifyIncidents thresholds, both sides (1.1.0 unless named)', () => {
  const one = (s: Partial<TriageSnapshot>, params: IncidentClassifierParams = V110) => classifyIncidents(snapshot(s), params).map((p) => `${p.signal}/${p.severity}`);

  it.each([
    // spikeFactor 3 at 10 expected: 29 no, 30 yes.
    ['spike factor below', toolset('t-a', 29, 40), []],
    ['spike factor at', toolset('t-a', 30, 40), ['rate-spike/minor']],
    // minEvents 20 with nothing expected (baseline 0): 19 no, 20 yes (20× the 1-event floor: major).
    ['minEvents below', toolset('t-a', 19, 0), []],
    ['minEvents at', toolset('t-a', 20, 0), ['rate-spike/major']],
    // majorSpikeFactor 10 at 10 expected: 99 minor, 100 major.
    ['major factor below', toolset('t-a', 99, 40), ['rate-spike/minor']],
    ['major factor at', toolset('t-a', 100, 40), ['rate-spike/major']],
    // majorSpikeEvents 2000 at 400 expected (5×): 1999 minor, 2000 major.
    ['major events below', toolset('t-a', 1999, 1600), ['rate-spike/minor']],
    ['major events at', toolset('t-a', 2000, 1600), ['rate-spike/major']],
    // unforecastMinEvents 500: 499 no, 500 minor, 2000 major.
    ['no forecast below', toolset('t-a', 499, null), []],
    ['no forecast at', toolset('t-a', 500, null), ['rate-spike/minor']],
    ['no forecast major', toolset('t-a', 2000, null), ['rate-spike/major']],
    // silenceMinExpected 10: 9.9 expected no, 10 yes; silenceMajorExpected 100: 99.75 minor, 100 major.
    ['silence below', toolset('t-a', 0, 39.6), []],
    ['silence at', toolset('t-a', 0, 40), ['silence/minor']],
    ['silence major below', toolset('t-a', 0, 399), ['silence/minor']],
    ['silence major at', toolset('t-a', 0, 400), ['silence/major']],
    ['one event is no silence', toolset('t-a', 1, 400), []],
  ] as [string, ToolsetWindow, string[]][])('%s', (_name, t, expected) => {
    expect(one({ toolsets: [t] })).toEqual(expected);
  });

  it.each([
    // liarFloodMin 50: 49 no, 50 yes; liarShareMajor 0.5: 50 of 101 minor, 50 of 100 major; any tarpit: major.
    ['flood below', honeypot('h', 1000, 49), []],
    ['flood at, share below', honeypot('h', 101, 50), ['liar-flood/minor']],
    ['flood at, share at', honeypot('h', 100, 50), ['liar-flood/major']],
    ['flood with a tarpit', honeypot('h', 1000, 50, 1), ['liar-flood/major']],
    // tarpitMin 1: 0 no, 1 yes; a flood folds its tarpits in (one proposal per tenant).
    ['no tarpit', honeypot('h', 1000, 10, 0), []],
    ['one tarpit', honeypot('h', 1000, 10, 1), ['tarpit/minor']],
    ['tarpits without LIAR samples cite nothing, so none', { ...honeypot('h', 0, 0, 2) }, []],
  ] as [string, HoneypotWindow, string[]][])('%s', (_name, h, expected) => {
    expect(one({ honeypot: [h] })).toEqual(expected);
  });

  it('1.0.0 tarpits need 3, floods 100 LIAR events with 80% share for major', () => {
    expect(one({ honeypot: [honeypot('h', 1000, 10, 2)] }, V100)).toEqual([]);
    expect(one({ honeypot: [honeypot('h', 1000, 10, 3)] }, V100)).toEqual(['tarpit/minor']);
    expect(one({ honeypot: [honeypot('h', 1000, 99)] }, V100)).toEqual([]);
    expect(one({ honeypot: [honeypot('h', 126, 100)] }, V100)).toEqual(['liar-flood/minor']);
    expect(one({ honeypot: [honeypot('h', 125, 100)] }, V100)).toEqual(['liar-flood/major']);
  });

  it('cross-toolset from 3 toolsets in 1.1.0 (distinct ones), never in 1.0.0', () => {
    expect(one({ crossToolset: [cross('acme', ['a-1', 'b-1'])] })).toEqual([]);
    expect(one({ crossToolset: [cross('acme', ['a-1', 'b-1', 'b-1'])] })).toEqual([]);
    expect(one({ crossToolset: [cross('acme', ['a-1', 'b-1', 'c-1'])] })).toEqual(['cross-toolset/minor']);
    expect(one({ crossToolset: [cross('acme', ['a-1', 'b-1', 'c-1', 'd-1'])] }, V100)).toEqual([]);
  });

  it('skips what an open incident of the same toolset already covers, and only that', () => {
    const spike = toolset('t-a', 100, 40);
    const open = (toolsetName: string, title: string) => ({ openIncidents: [{ id: 'x', toolset: toolsetName, title, source: 'triage' }] });
    expect(one({ toolsets: [spike], ...open('t-a', 'Rate spike: t-a') })).toEqual([]);
    expect(one({ toolsets: [spike], ...open('t-a', 'Rate spike: t-a — old numbers') })).toEqual([]);
    expect(one({ toolsets: [spike], ...open('t-a', 'Forecast: t-a event rate surged (score 0.80 on 3 runs)') })).toEqual([]);
    expect(one({ toolsets: [spike], ...open('t-a', 'Forecast: t-a event rate fell silent (score 0.80 on 3 runs)') })).toEqual(['rate-spike/major']);
    expect(one({ toolsets: [spike], ...open('t-b', 'Rate spike: t-a') })).toEqual(['rate-spike/major']);
    expect(one({ toolsets: [spike], ...open('t-a', 'Rate spike: t-ab') })).toEqual(['rate-spike/major']);
    const h = honeypot('hp-a', 1000, 10, 1);
    expect(one({ honeypot: [h], ...open('honeypot', 'Liar flood: hp-a — 80 LIAR events') })).toEqual([]);
    expect(one({ honeypot: [h], ...open('honeypot', 'Tarpit: hp-b') })).toEqual(['tarpit/minor']);
  });
});

describe('classifyIncidents properties (fast-check)', () => {
  const names = ['web-a', 'web-b', 'api-c', 'db-d'];
  const idArb = fc.stringMatching(/^[0-9a-f]{8}$/);
  const arbSnapshot = fc
    .record({
      toolsets: fc.uniqueArray(
        fc.record({
          toolset: fc.constantFrom(...names),
          events: fc.oneof(fc.constant(0), fc.nat(3000)),
          tenants: fc.nat(20),
          topEventTypes: fc.array(fc.record({ eventType: fc.constantFrom('a.b', 'c.d'), count: fc.nat(100) }), { maxLength: 3 }),
          sampleEventIds: fc.array(idArb, { maxLength: 20 }),
          forecast: fc.option(
            fc.record({
              score: fc.double({ min: 0, max: 1, noNaN: true }),
              level: fc.constantFrom('none' as const, 'watch' as const, 'alert' as const),
              baselineMean: fc.double({ min: 0, max: 2000, noNaN: true }),
              recentMean: fc.double({ min: 0, max: 2000, noNaN: true }),
              computedAt: fc.constant('2024-05-01T11:45:00.000Z'),
            }),
          ),
        }),
        { selector: (t) => t.toolset, maxLength: 4 },
      ),
      honeypot: fc.uniqueArray(
        fc.record({
          tenant: fc.constantFrom('hp-a', 'hp-b', 'hp-c'),
          events: fc.nat(500),
          liarEvents: fc.nat(300),
          topLiarFingerprints: fc.array(fc.record({ fingerprintId: idArb, liarEvents: fc.nat(100) }), { maxLength: 3 }),
          tarpitsTriggered: fc.array(fc.record({ fingerprintId: idArb, triggeredAt: fc.constant('2024-05-01T11:50:00.000Z'), liarEventCount: fc.nat(50) }), { maxLength: 3 }),
          sampleLiarEventIds: fc.array(idArb, { maxLength: 20 }),
        }),
        { selector: (h) => h.tenant, maxLength: 3 },
      ),
      crossToolset: fc.uniqueArray(
        fc.record({ tenant: fc.constantFrom('t-1', 't-2', 't-3'), toolsets: fc.subarray(names, { minLength: 2 }), events: fc.nat(500), sampleEvents: fc.array(fc.record({ eventId: idArb, toolset: fc.constantFrom(...names) }), { maxLength: 10 }) }),
        { selector: (x) => x.tenant, maxLength: 3 },
      ),
      openIncidents: fc.array(
        fc.record({ id: idArb, toolset: fc.constantFrom(...names, 'honeypot'), title: fc.constantFrom('Rate spike: web-a', 'Silence: web-b', 'Liar flood: hp-a', 'Cross-toolset: t-1'), source: fc.constant('triage') }),
        { maxLength: 3 },
      ),
    })
    .map((parts) => snapshot(parts));

  /** Every id the input shows, with the toolsets it is shown for. */
  const inputIds = (s: TriageSnapshot) => {
    const shown = new Map<string, Set<string>>();
    const add = (id: string, toolset: string) => shown.set(id, (shown.get(id) ?? new Set()).add(toolset));
    s.toolsets.forEach((t) => t.sampleEventIds.forEach((id) => add(id, t.toolset)));
    s.honeypot.forEach((h) => h.sampleLiarEventIds.forEach((id) => add(id, 'honeypot')));
    s.crossToolset.forEach((x) => x.sampleEvents.forEach((e) => add(e.eventId, e.toolset)));
    return shown;
  };
  const rank = { critical: 0, major: 1, minor: 2 };

  it.each([
    ['1.0.0', V100],
    ['1.1.0', V110],
  ] as [string, IncidentClassifierParams][])('%s: schema-valid, cites only input ids of its own toolset, within the severity policy, capped, sorted, order-independent', (_v, params) => {
    fc.assert(
      fc.property(arbSnapshot, (s) => {
        const out = classifyIncidents(s, params);
        const known = inputIds(s);
        expect(out.length).toBeLessThanOrEqual(params.maxProposals);
        for (const p of out) {
          expect(Value.Check(IncidentItem, p)).toBe(true);
          expect(p.severity).not.toBe('critical');
          expect(p.evidenceEventIds.length > 0 || p.signal === 'silence').toBe(true);
          for (const id of p.evidenceEventIds) expect(known.get(id)?.has(p.toolset)).toBe(true);
          // The built-in engine passes the severity policy it shares its rules with.
          expect(rank[p.severity]).toBeGreaterThanOrEqual(rank[severityCeiling(s, params, p).max]);
          for (const section of POSTMORTEM_SECTIONS) for (const c of p.postmortemDraft!.sections[section]) for (const id of c.eventIds) expect(p.evidenceEventIds).toContain(id);
          // The seed passes the postmortem guard untouched, with the proposal's evidence as its lineage.
          const guarded = stripDraft(p.postmortemDraft!, { citable: new Set(p.evidenceEventIds), known: identifierTokens(s), linkOrigin: 'https://observatory.example.com', fallbackTitle: 'x' });
          expect(guarded.draft).toEqual(p.postmortemDraft);
        }
        for (let i = 1; i < out.length; i++) expect(rank[out[i - 1]!.severity] <= rank[out[i]!.severity]).toBe(true);
        const honeypotTenants = out.filter((p) => p.toolset === 'honeypot').map((p) => p.title.split(' — ')[0]!.split(': ')[1]);
        expect(new Set(honeypotTenants).size).toBe(honeypotTenants.length);
        const shuffled = { ...s, toolsets: [...s.toolsets].reverse(), honeypot: [...s.honeypot].reverse(), crossToolset: [...s.crossToolset].reverse(), openIncidents: [...s.openIncidents].reverse() };
        expect(classifyIncidents(shuffled, params)).toEqual(out);
      }),
      { numRuns: 200 },
    );
  });
});

describe('INCIDENT_CLASSIFIER_VERSIONS', () => {
  it('ships 1.0.0 then 1.1.0 with compact prompts naming the output shape and the thresholds', () => {
    expect(INCIDENT_CLASSIFIER_VERSIONS.map((v) => v.version)).toEqual(['1.0.0', '1.1.0']);
    for (const v of INCIDENT_CLASSIFIER_VERSIONS) {
      // The agent's own part stays compact; every prompt ends with the shared untrusted-data rules.
      expect(v.systemPrompt.endsWith(`\n\n${UNTRUSTED_DATA_RULES}`)).toBe(true);
      expect(v.systemPrompt.slice(0, -UNTRUSTED_DATA_RULES.length).split('\n').length).toBeLessThanOrEqual(40);
      expect(v.systemPrompt).toContain('{"proposals": [...]}');
      expect(v.systemPrompt).toContain(`At most ${v.params.maxProposals} proposals`);
      expect(v.systemPrompt).toContain(`liarEvents >= ${v.params.liarFloodMin}`);
    }
    expect(INCIDENT_CLASSIFIER_VERSIONS[0]!.systemPrompt).not.toContain('cross-toolset: a crossToolset tenant');
    expect(INCIDENT_CLASSIFIER_VERSIONS[1]!.systemPrompt).toContain('cross-toolset: a crossToolset tenant in >= 3 toolsets');
  });
});
