import { Value } from '@sinclair/typebox/value';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UNTRUSTED_DATA_RULES } from '../../../platform/llm/untrusted.ts';
import {
  INVESTIGATION_PROPOSER_PARAMS_1_0_0 as V100,
  INVESTIGATION_PROPOSER_PARAMS_1_1_0 as V110,
  INVESTIGATION_PROPOSER_VERSIONS,
  type InvestigationProposerParams,
  MAX_INVESTIGATIONS,
  proposeInvestigations,
} from './investigation-proposer.ts';
import { InvestigationItem } from './output.ts';
import type { InvestigationSnapshot, ToolsetWindow } from './types.ts';

const WINDOW = { windowStart: '2024-05-01T11:45:00.000Z', windowEnd: '2024-05-01T12:00:00.000Z', windowMinutes: 15 };
const ids = (prefix: string, n = 3) => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);

function toolset(name: string, events: number, baseline: number | null, types: [string, number][] = [['page.view', events]]): ToolsetWindow {
  return {
    toolset: name,
    events,
    tenants: 3,
    topEventTypes: types.map(([eventType, count]) => ({ eventType, count })),
    sampleEventIds: ids(name),
    forecast: baseline === null ? null : { score: 0.75, level: 'alert', baselineMean: baseline, recentMean: 90, computedAt: '2024-05-01T11:45:00.000Z' },
  };
}

function snapshot(over: Partial<InvestigationSnapshot> = {}): InvestigationSnapshot {
  return { ...WINDOW, toolsets: [], honeypot: [], crossToolset: [], openIncidents: [], focal: null, clusters: [], ...over };
}

/**
 * Window 15 min (expected = baseline / 4):
 * - web-big: 100 events vs 10 expected (10×), mostly login.fail; web-med: 60 vs 10 (6×); web-calm: 10 vs 10.
 * - hp-a: two LIAR clusters, 30 + 15 = 45 events, 6 fingerprints; hp-b: one LIAR cluster of 25; a
 *   KNOWN_LLM_AGENT cluster of 500 (not a LIAR: never a view here).
 * - acme reaches 3 toolsets with 40 events; beta 2.
 * 1.1.0 takes the strongest of each angle: web-big (100), hp-a (45), acme (40). web-med (60) has
 * more events than hp-a but would be a second view of the same angle. 1.0.0: two views, LIAR
 * clusters from 50 events, rates from 5× and 50 events, no cross-toolset: web-big, web-med.
 */
const fleet = snapshot({
  toolsets: [
    toolset('web-big', 100, 40, [
      ['login.fail', 70],
      ['page.view', 30],
    ]),
    toolset('web-med', 60, 40),
    toolset('web-calm', 10, 40),
    toolset('api-y', 5, null),
  ],
  honeypot: [{ tenant: 'hp-a', events: 80, liarEvents: 45, topLiarFingerprints: [], tarpitsTriggered: [{ fingerprintId: 'fp-1', triggeredAt: '2024-05-01T11:50:00.000Z', liarEventCount: 30 }], sampleLiarEventIds: [] }],
  clusters: [
    { ja4: 'j-known', uaClass: 'KNOWN_LLM_AGENT', asn: 15169, tenant: 'hp-a', events: 500, fingerprints: 9, sampleEventIds: ['k-1'] },
    { ja4: 'j1', uaClass: 'LIAR', asn: 64500, tenant: 'hp-a', events: 30, fingerprints: 4, sampleEventIds: ['c-a1-1', 'c-a1-2'] },
    { ja4: 'j3', uaClass: 'LIAR', asn: null, tenant: 'hp-b', events: 25, fingerprints: 1, sampleEventIds: ['c-b-1'] },
    { ja4: 'j2', uaClass: 'LIAR', asn: 64501, tenant: 'hp-a', events: 15, fingerprints: 2, sampleEventIds: ['c-a2-1'] },
  ],
  crossToolset: [
    { tenant: 'acme', toolsets: ['web-big', 'db-z', 'api-y'], events: 40, sampleEvents: [{ eventId: 'x-1', toolset: 'api-y' }, { eventId: 'x-2', toolset: 'db-z' }] },
    { tenant: 'beta', toolsets: ['web-big', 'db-z'], events: 90, sampleEvents: [{ eventId: 'x-3', toolset: 'web-big' }] },
  ],
});

const windowFilters = { tenant: null, eventType: null, uaClass: null, fingerprintId: null, focalEventId: null, from: WINDOW.windowStart, to: WINDOW.windowEnd };

describe('proposeInvestigations without a focal event', () => {
  it('1.1.0 proposes the strongest view of each angle, exactly', () => {
    expect(proposeInvestigations(fleet, V110)).toEqual([
      {
        kind: 'investigation',
        toolset: 'web-big',
        name: 'web-big: login.fail surge (10× expected)',
        rationale: [
          'web-big received 100 events in 15 minutes against about 10 expected from its baseline of 40 an hour (10×).',
          'Top event type login.fail: 70 of 100 events, from 3 tenants.',
          'Forecast level alert, score 0.75, recent mean 90 an hour (computed 2024-05-01T11:45:00.000Z).',
        ],
        filters: { ...windowFilters, toolset: 'web-big', eventType: 'login.fail' },
        evidenceEventIds: ids('web-big'),
      },
      {
        kind: 'investigation',
        toolset: 'honeypot',
        name: 'LIAR clients at hp-a: 45 events',
        rationale: [
          '45 LIAR events from 6 fingerprints in 2 clusters at honeypot tenant hp-a in 15 minutes.',
          'Largest cluster: ja4 j1, ASN 64500: 30 events from 4 fingerprints.',
          '45 of 80 events at hp-a were LIAR (56.3%); 1 tarpit triggered in the window.',
        ],
        filters: { ...windowFilters, toolset: 'honeypot', tenant: 'hp-a', uaClass: 'LIAR' },
        evidenceEventIds: ['c-a1-1', 'c-a1-2', 'c-a2-1'],
      },
      {
        kind: 'investigation',
        toolset: 'api-y',
        name: 'Tenant acme across 3 toolsets',
        rationale: [
          'Tenant acme sent 40 events to 3 toolsets in 15 minutes: api-y, db-z, web-big.',
          'Those toolsets received 105 events in the window; acme sent 38.1% of them.',
          'The view starts from api-y (1 of 3); switch its toolset to follow acme into the others.',
        ],
        filters: { ...windowFilters, toolset: 'api-y', tenant: 'acme' },
        // Only the events of api-y, the proposal's own toolset: x-2 is db-z's.
        evidenceEventIds: ['x-1'],
      },
    ]);
  });

  it('1.0.0 is stricter and proposes two at most', () => {
    expect(proposeInvestigations(fleet, V100).map((p) => p.name)).toEqual(['web-big: login.fail surge (10× expected)', 'web-med: page.view surge (6× expected)']);
  });

  it('fills the remaining places by events once each angle has its view', () => {
    const noCross = { ...fleet, crossToolset: [] };
    expect(proposeInvestigations(noCross, V110).map((p) => p.name)).toEqual(['web-big: login.fail surge (10× expected)', 'LIAR clients at hp-a: 45 events', 'web-med: page.view surge (6× expected)']);
  });

  it('puts the thresholds where the params say, both sides', () => {
    const rate = (events: number, baseline: number) => proposeInvestigations(snapshot({ toolsets: [toolset('t-a', events, baseline)] }), V110).length;
    expect([rate(29, 40), rate(30, 40), rate(19, 0), rate(20, 0)]).toEqual([0, 1, 0, 1]);
    const liar = (events: number) => proposeInvestigations(snapshot({ clusters: [{ ja4: null, uaClass: 'LIAR', asn: null, tenant: 'h', events, fingerprints: 1, sampleEventIds: ['l-1'] }] }), V110);
    expect([liar(19).length, liar(20).length]).toEqual([0, 1]);
    expect(liar(20)[0]!.rationale[1]).toBe('Largest cluster: ja4 unknown, ASN unknown: 20 events from 1 fingerprint.');
    const crossView = (toolsets: string[]) => proposeInvestigations(snapshot({ crossToolset: [{ tenant: 'acme', toolsets, events: 5, sampleEvents: [{ eventId: 'x-1', toolset: [...toolsets].sort()[0]! }] }] }), V110).length;
    expect([crossView(['a-1', 'b-1']), crossView(['a-1', 'b-1', 'c-1'])]).toEqual([0, 1]);
  });

  it('proposes nothing when nothing stands out', () => {
    const quiet = snapshot({ toolsets: [toolset('web-calm', 10, 40), toolset('web-new', 900, null)], clusters: [{ ja4: 'j', uaClass: 'UNKNOWN', asn: 1, tenant: 'h', events: 900, fingerprints: 3, sampleEventIds: ['u-1'] }] });
    expect(proposeInvestigations(quiet, V110)).toEqual([]);
    expect(proposeInvestigations(snapshot(), V100)).toEqual([]);
  });

  it('gives the same views for the same snapshot in any order of its lists', () => {
    const reordered = {
      ...fleet,
      toolsets: [...fleet.toolsets].reverse(),
      clusters: [...fleet.clusters].reverse(),
      crossToolset: [...fleet.crossToolset].reverse().map((x) => ({ ...x, toolsets: [...x.toolsets].reverse() })),
      honeypot: [...fleet.honeypot].reverse(),
    };
    expect(proposeInvestigations(reordered, V110)).toEqual(proposeInvestigations(fleet, V110));
    expect(proposeInvestigations(structuredClone(fleet), V110)).toEqual(proposeInvestigations(fleet, V110));
  });
});

describe('proposeInvestigations with a focal event', () => {
  const focal: NonNullable<InvestigationSnapshot['focal']> = {
    eventId: 'f-1',
    toolset: 'crm',
    eventType: 'import.row',
    tenant: 'acme',
    ts: '2024-05-01T11:50:00.000Z',
    upstream: [
      { eventId: 'u-2', toolset: 'crm', eventType: 'import.batch', ts: '2024-05-01T10:00:00.000Z' },
      { eventId: 'u-1', toolset: 'crm', eventType: 'import.started', ts: '2024-05-01T09:00:00.000Z' },
    ],
    downstream: [
      { eventId: 'd-2', toolset: 'billing', eventType: 'invoice.retry', ts: '2024-05-01T12:30:00.000Z' },
      { eventId: 'd-1', toolset: 'billing', eventType: 'invoice.failed', ts: '2024-05-01T11:55:00.000Z' },
    ],
  };

  it('proposes exactly one view narrowed to the event, spanning window and lineage', () => {
    const withFocal = { ...fleet, focal, toolsets: [...fleet.toolsets, toolset('crm', 12, 40)] };
    for (const params of [V100, V110]) {
      expect(proposeInvestigations(withFocal, params)).toEqual([
        {
          kind: 'investigation',
          toolset: 'crm',
          name: 'Lineage of import.row f-1 in crm',
          rationale: [
            'Focal event f-1: import.row in crm at 2024-05-01T11:50:00.000Z, tenant acme.',
            'Lineage: 2 upstream and 2 downstream events across 2 toolsets (billing, crm), from 2024-05-01T09:00:00.000Z to 2024-05-01T12:30:00.000Z.',
            'Earliest upstream event: import.started in crm at 2024-05-01T09:00:00.000Z (u-1), the probable start of the chain. In the window crm received 12 events from 3 tenants.',
          ],
          filters: { toolset: 'crm', tenant: 'acme', eventType: 'import.row', uaClass: null, fingerprintId: null, focalEventId: 'f-1', from: '2024-05-01T09:00:00.000Z', to: '2024-05-01T12:30:00.000Z' },
          // The lineage events of crm only: d-1 and d-2 are billing's.
          evidenceEventIds: ['u-1', 'u-2', 'f-1'],
        },
      ]);
    }
  });

  it('uses the window when the lineage lies inside it, and says when the event starts its chain', () => {
    const alone = { ...focal, tenant: null, upstream: [], downstream: [{ eventId: 'd-1', toolset: 'crm', eventType: 'import.done', ts: '2024-05-01T11:55:00.000Z' }] };
    const [view] = proposeInvestigations(snapshot({ focal: alone }), V110);
    expect(view!.filters).toMatchObject({ tenant: null, from: WINDOW.windowStart, to: WINDOW.windowEnd, focalEventId: 'f-1' });
    expect(view!.rationale[0]).toBe('Focal event f-1: import.row in crm at 2024-05-01T11:50:00.000Z, no source tenant.');
    expect(view!.rationale[2]).toBe('No upstream event: the focal event starts its chain, and 1 event follows from it.');
  });
});

describe('proposeInvestigations properties (fast-check)', () => {
  const idArb = fc.stringMatching(/^[0-9a-f]{6}$/);
  const tsArb = fc.integer({ min: 0, max: 6 * 3600 }).map((s) => new Date(Date.parse('2024-05-01T09:00:00.000Z') + s * 1000).toISOString());
  const lineageArb = fc.array(fc.record({ eventId: idArb, toolset: fc.constantFrom('crm', 'billing'), eventType: fc.constantFrom('a.b', 'c.d'), ts: tsArb }), { maxLength: 30 });
  const arbSnapshot = fc
    .record({
      toolsets: fc.uniqueArray(
        fc.record({
          toolset: fc.constantFrom('web-a', 'web-b', 'api-c', 'db-d'),
          events: fc.nat(500),
          tenants: fc.nat(10),
          topEventTypes: fc.array(fc.record({ eventType: fc.constantFrom('a.b', 'c.d', 'e.f'), count: fc.nat(500) }), { maxLength: 3 }),
          sampleEventIds: fc.array(idArb, { maxLength: 20 }),
          forecast: fc.option(fc.record({ score: fc.constant(0.5), level: fc.constant('watch' as const), baselineMean: fc.double({ min: 0, max: 500, noNaN: true }), recentMean: fc.constant(1), computedAt: fc.constant('2024-05-01T11:45:00.000Z') })),
        }),
        { selector: (t) => t.toolset, maxLength: 4 },
      ),
      clusters: fc.array(
        fc.record({ ja4: fc.option(fc.constantFrom('j1', 'j2', 'j3')), uaClass: fc.constantFrom('LIAR', 'UNKNOWN', 'KNOWN_LLM_AGENT'), asn: fc.option(fc.nat(70000)), tenant: fc.constantFrom('hp-a', 'hp-b', 'hp-c', 'hp-d'), events: fc.nat(200), fingerprints: fc.nat(10), sampleEventIds: fc.array(idArb, { maxLength: 10 }) }),
        { maxLength: 10 },
      ),
      crossToolset: fc.uniqueArray(
        fc.record({ tenant: fc.constantFrom('t-1', 't-2', 't-3', 't-4'), toolsets: fc.subarray(['web-a', 'web-b', 'api-c', 'db-d'], { minLength: 2 }), events: fc.nat(300), sampleEvents: fc.array(fc.record({ eventId: idArb, toolset: fc.constantFrom('web-a', 'web-b', 'api-c', 'db-d') }), { maxLength: 10 }) }),
        { selector: (x) => x.tenant, maxLength: 4 },
      ),
      focal: fc.option(fc.record({ eventId: idArb, toolset: fc.constantFrom('crm', 'billing'), eventType: fc.constant('x.y'), tenant: fc.option(fc.constant('acme')), ts: tsArb, upstream: lineageArb, downstream: lineageArb }), { freq: 3 }),
    })
    .map((parts) => snapshot(parts));

  /** Every id the input shows, with the toolsets it is shown for. */
  const inputIds = (s: InvestigationSnapshot) => {
    const shown = new Map<string, Set<string>>();
    const add = (id: string, toolset: string) => shown.set(id, (shown.get(id) ?? new Set()).add(toolset));
    s.toolsets.forEach((t) => t.sampleEventIds.forEach((id) => add(id, t.toolset)));
    s.clusters.forEach((c) => c.sampleEventIds.forEach((id) => add(id, 'honeypot')));
    s.crossToolset.forEach((x) => x.sampleEvents.forEach((e) => add(e.eventId, e.toolset)));
    if (s.focal) [s.focal, ...s.focal.upstream, ...s.focal.downstream].forEach((e) => add(e.eventId, e.toolset));
    return shown;
  };

  it.each([
    ['1.0.0', V100],
    ['1.1.0', V110],
  ] as [string, InvestigationProposerParams][])('%s: never more than 3 (1 with a focal event), schema-valid, cites only input ids of its own toolset, from < to, order-independent', (_v, params) => {
    fc.assert(
      fc.property(arbSnapshot, (s) => {
        const out = proposeInvestigations(s, params);
        expect(out.length).toBeLessThanOrEqual(MAX_INVESTIGATIONS);
        if (s.focal) expect(out).toHaveLength(1);
        const known = inputIds(s);
        for (const p of out) {
          expect(Value.Check(InvestigationItem, p)).toBe(true);
          expect(p.rationale).toHaveLength(3);
          expect(Date.parse(p.filters.from)).toBeLessThan(Date.parse(p.filters.to));
          for (const id of p.evidenceEventIds) expect(known.get(id)?.has(p.toolset)).toBe(true);
          if (!s.focal) expect([p.filters.from, p.filters.to, p.filters.focalEventId]).toEqual([s.windowStart, s.windowEnd, null]);
        }
        const names = out.map((p) => JSON.stringify(p.filters));
        expect(new Set(names).size).toBe(names.length);
        const shuffled = { ...s, toolsets: [...s.toolsets].reverse(), clusters: [...s.clusters].reverse(), crossToolset: [...s.crossToolset].reverse() };
        expect(proposeInvestigations(shuffled, params)).toEqual(out);
      }),
      { numRuns: 200 },
    );
  });

  it('never proposes more than 3 even when told to', () => {
    fc.assert(
      fc.property(arbSnapshot, fc.integer({ min: 0, max: 20 }), (s, max) => {
        expect(proposeInvestigations(s, { ...V110, maxInvestigations: max, minLiarClusterEvents: 0, minToolsetEvents: 0, rateFactor: 0, crossToolsetMin: 2 }).length).toBeLessThanOrEqual(Math.min(3, s.focal ? 1 : max));
      }),
    );
  });
});

describe('INVESTIGATION_PROPOSER_VERSIONS', () => {
  it('ships 1.0.0 then 1.1.0 with compact prompts naming the output and the cap', () => {
    expect(INVESTIGATION_PROPOSER_VERSIONS.map((v) => v.version)).toEqual(['1.0.0', '1.1.0']);
    for (const v of INVESTIGATION_PROPOSER_VERSIONS) {
      // The agent's own part stays compact; every prompt ends with the shared untrusted-data rules.
      expect(v.systemPrompt.endsWith(`\n\n${UNTRUSTED_DATA_RULES}`)).toBe(true);
      expect(v.systemPrompt.slice(0, -UNTRUSTED_DATA_RULES.length).split('\n').length).toBeLessThanOrEqual(40);
      expect(v.systemPrompt).toContain('{"proposals": [...]}');
      expect(v.systemPrompt).toContain(`at most ${v.params.maxInvestigations} proposals`);
    }
  });
});
