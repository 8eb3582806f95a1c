import { Value } from '@sinclair/typebox/value';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../platform/crypto.ts';
import { checkPredicate, EmpirePredicate } from '../../empire/index.ts';
import { MAX_PROPOSALS } from '../runs/service.ts';
import { classifyIncidents, INCIDENT_CLASSIFIER_VERSIONS } from './incident-classifier.ts';
import { INVESTIGATION_PROPOSER_VERSIONS, proposeInvestigations } from './investigation-proposer.ts';
import {
  IncidentItem,
  InvestigationItem,
  MAX_CLAIM_EVENT_IDS,
  MAX_CLAIMS,
  MAX_EVIDENCE,
  parseDraft,
  parseProposals,
  PostmortemDraftSchema,
  proposalsAnswer,
  RuleItem,
} from './output.ts';
import { POSTMORTEM_WRITER_VERSIONS, writePostmortem } from './postmortem-writer.ts';
import { proposeRules, RULE_PROPOSER_VERSIONS } from './rule-proposer.ts';
import { POSTMORTEM_SECTIONS, type InvestigationSnapshot, type PostmortemSnapshot, type RuleSnapshot, type ToolsetWindow, type TriageSnapshot } from './types.ts';

// How an agent's answer is read (docs/triage/README.md, "Output"): the whole answer first, then each item.

const item = {
  kind: 'incident',
  toolset: 'web-a',
  severity: 'minor',
  signal: 'rate-spike',
  title: 'Rate spike: web-a — 30 events',
  summary: 'web-a received 30 events.',
  evidenceEventIds: ['11111111-1111-4111-8111-111111111111'],
};
const answer = (proposals: unknown) => JSON.stringify({ proposals });

describe('parseProposals: the whole answer', () => {
  it('refuses text that is not JSON, quoting the parser', () => {
    const out = parseProposals('{"proposals": [', IncidentItem, 20);
    expect(out.items).toEqual([]);
    expect(out.refused).toMatch(/^malformed-output: the answer is not JSON \(.+\)$/);
    expect(parseProposals('', IncidentItem, 20).refused).toMatch(/^malformed-output: the answer is not JSON/);
    expect(parseProposals('Here are the proposals: {"proposals": []}', IncidentItem, 20).refused).toMatch(/^malformed-output: the answer is not JSON/);
  });

  it('cuts the parser\'s message to 120 characters', () => {
    const refused = parseProposals(`{"proposals": [${'1,'.repeat(500)}`, IncidentItem, 20).refused!;
    expect(refused.length).toBeLessThanOrEqual('malformed-output: the answer is not JSON ()'.length + 120);
  });

  it('refuses JSON that is not an object holding a proposals array', () => {
    for (const text of ['[]', '"proposals"', '42', 'null', 'true', '{}', '{"proposals": {}}', '{"proposals": null}', '{"proposals": "[]"}', '{"Proposals": []}', `[${answer([item])}]`]) {
      expect(parseProposals(text, IncidentItem, 20), text).toEqual({ refused: 'malformed-output: the answer is not an object {"proposals": [...]}', items: [] });
    }
  });

  it('reads an empty list as nothing to propose', () => {
    expect(parseProposals(answer([]), IncidentItem, 20)).toEqual({ refused: null, items: [] });
  });
});

describe('parseProposals: each item', () => {
  it('keeps the valid items and refuses each invalid one alone, in order, naming the path', () => {
    const out = parseProposals(answer([item, { ...item, title: undefined }, { ...item, severity: 'critical' }, { ...item, extra: 1 }, { ...item, severity: 'huge' }, 'x', item]), IncidentItem, 20);
    expect(out.refused).toBeNull();
    expect(out.items).toEqual([
      { ok: true, value: item },
      { ok: false, reason: 'schema-violation: /title Expected required property' },
      { ok: true, value: { ...item, severity: 'critical' } },
      { ok: false, reason: 'schema-violation: /extra Unexpected property' },
      { ok: false, reason: 'schema-violation: /severity Expected union value' },
      { ok: false, reason: 'schema-violation: / Expected object' },
      { ok: true, value: item },
    ]);
  });

  it('refuses items breaking a bound: empty or long texts, too many evidence ids, a bad toolset name', () => {
    const reason = (over: Record<string, unknown>) => {
      const [first] = parseProposals(answer([{ ...item, ...over }]), IncidentItem, 20).items;
      return first!.ok ? null : first!.reason;
    };
    expect(reason({ title: '' })).toMatch(/^schema-violation: \/title /);
    expect(reason({ title: 'x'.repeat(201) })).toMatch(/^schema-violation: \/title /);
    expect(reason({ title: 'x'.repeat(200) })).toBeNull();
    expect(reason({ evidenceEventIds: Array.from({ length: MAX_EVIDENCE + 1 }, (_, i) => `id-${i}`) })).toMatch(/^schema-violation: \/evidenceEventIds /);
    expect(reason({ evidenceEventIds: ['x'.repeat(65)] })).toMatch(/^schema-violation: \/evidenceEventIds\/0 /);
    expect(reason({ toolset: 'ab' })).toMatch(/^schema-violation: \/toolset /);
    expect(reason({ toolset: 'web_a' })).toMatch(/^schema-violation: \/toolset /);
    expect(reason({ postmortemDraft: null })).toBeNull();
    expect(reason({ postmortemDraft: { title: 't', sections: {} } })).toMatch(/^schema-violation: \/postmortemDraft/);
  });

  it('refuses the items beyond maxItems, keeping the first maxItems', () => {
    const out = parseProposals(answer([item, item, item, { nonsense: true }]), IncidentItem, 2);
    expect(out.items).toEqual([
      { ok: true, value: item },
      { ok: true, value: item },
      { ok: false, reason: 'schema-violation: more than 2 proposals in one answer' },
      { ok: false, reason: 'schema-violation: more than 2 proposals in one answer' },
    ]);
  });

  it('cuts a schema-violation reason to 300 characters', () => {
    const key = 'k'.repeat(400);
    const [first] = parseProposals(answer([{ ...item, [key]: 1 }]), IncidentItem, 20).items;
    expect(first).toEqual({ ok: false, reason: `schema-violation: /${key}`.slice(0, 300) });
  });

  it('checks a rule\'s predicate only as an object with a kind (the union comes later, as invalid-predicate)', () => {
    const rule = { kind: 'alert-rule', toolset: 'web-a', name: 'r', predicate: { kind: 'anything', count: -1 }, rationale: 'why' };
    expect(parseProposals(answer([rule]), RuleItem, 20).items).toEqual([{ ok: true, value: rule }]);
    expect(parseProposals(answer([{ ...rule, predicate: { count: 5 } }]), RuleItem, 20).items[0]).toEqual({ ok: false, reason: 'schema-violation: /predicate/kind Expected required property' });
  });

  it('wants exactly three rationale bullets of an investigation', () => {
    const view = {
      kind: 'investigation',
      toolset: 'web-a',
      name: 'v',
      rationale: ['a', 'b', 'c'],
      filters: { toolset: null, tenant: null, eventType: null, uaClass: null, fingerprintId: null, focalEventId: null, from: 'x', to: 'y' },
      evidenceEventIds: [],
    };
    expect(parseProposals(answer([view]), InvestigationItem, 3).items[0]!.ok).toBe(true);
    expect(parseProposals(answer([{ ...view, rationale: ['a', 'b'] }]), InvestigationItem, 3).items[0]).toMatchObject({ ok: false, reason: expect.stringMatching(/^schema-violation: \/rationale /) });
    // Every filter member is required, null meaning "any".
    const { tenant: _tenant, ...filters } = view.filters;
    expect(parseProposals(answer([{ ...view, filters }]), InvestigationItem, 3).items[0]).toEqual({ ok: false, reason: 'schema-violation: /filters/tenant Expected required property' });
  });
});

const emptySections = () => Object.fromEntries(POSTMORTEM_SECTIONS.map((s) => [s, []]));

describe('parseDraft', () => {
  it('reads a five-section draft', () => {
    const draft = { title: 'Postmortem', sections: { ...emptySections(), summary: [{ text: 'It happened.', eventIds: ['e1'] }] } };
    expect(parseDraft(JSON.stringify(draft))).toEqual({ ok: true, value: draft });
  });

  it('refuses text that is not JSON', () => {
    expect(parseDraft('Postmortem: …')).toMatchObject({ ok: false, reason: expect.stringMatching(/^malformed-output: the answer is not JSON \(/) });
  });

  it('refuses a missing, an extra or a malformed section, and too many claims or ids', () => {
    const { rootCause: _r, ...four } = emptySections();
    expect(parseDraft(JSON.stringify({ title: 't', sections: four }))).toEqual({ ok: false, reason: 'schema-violation: /sections/rootCause Expected required property' });
    expect(parseDraft(JSON.stringify({ title: 't', sections: { ...emptySections(), lessons: [] } }))).toEqual({ ok: false, reason: 'schema-violation: /sections/lessons Unexpected property' });
    expect(parseDraft(JSON.stringify({ title: 't', sections: { ...emptySections(), impact: [{ text: 'x' }] } }))).toEqual({ ok: false, reason: 'schema-violation: /sections/impact/0/eventIds Expected required property' });
    const claims = Array.from({ length: MAX_CLAIMS + 1 }, () => ({ text: 'x', eventIds: [] }));
    expect(parseDraft(JSON.stringify({ title: 't', sections: { ...emptySections(), timeline: claims } }))).toMatchObject({ ok: false, reason: expect.stringMatching(/^schema-violation: \/sections\/timeline /) });
    const ids = Array.from({ length: MAX_CLAIM_EVENT_IDS + 1 }, (_, i) => `e${i}`);
    expect(parseDraft(JSON.stringify({ title: 't', sections: { ...emptySections(), summary: [{ text: 'x', eventIds: ids }] } }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^schema-violation: \/sections\/summary\/0\/eventIds /),
    });
    expect(parseDraft(JSON.stringify({ title: '', sections: emptySections() }))).toMatchObject({ ok: false, reason: expect.stringMatching(/^schema-violation: \/title /) });
    expect(parseDraft('[]')).toEqual({ ok: false, reason: 'schema-violation: / Expected object' });
  });
});

// ——— the built-in agents' answers pass the same schemas ———

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => uuid(from + i));
const WINDOW = { windowStart: '2024-05-01T11:45:00.000Z', windowEnd: '2024-05-01T12:00:00.000Z', windowMinutes: 15 };

function toolset(name: string, events: number, baseline: number | null, firstId: number): ToolsetWindow {
  return {
    toolset: name,
    events,
    tenants: 3,
    topEventTypes: events > 0 ? [{ eventType: 'login.fail', count: Math.ceil(events / 2) }, { eventType: 'page.view', count: Math.floor(events / 2) }] : [],
    sampleEventIds: events > 0 ? ids(firstId, 20) : [],
    forecast: baseline === null ? null : { score: 0.9, level: 'alert', baselineMean: baseline, recentMean: baseline * 3, computedAt: '2024-05-01T11:45:00.000Z' },
  };
}

/** A window with every signal: a spike, a silence, a liar flood with a tarpit, a tarpit alone, a tenant in three toolsets. */
const fleet: TriageSnapshot = {
  ...WINDOW,
  toolsets: [toolset('web-big', 400, 40, 100), toolset('web-dead', 0, 800, 0), toolset('api-y', 30, 40, 200), toolset('db-z', 10, null, 300)],
  honeypot: [
    {
      tenant: 'hp-a',
      events: 200,
      liarEvents: 150,
      topLiarFingerprints: [{ fingerprintId: 'fp-1', liarEvents: 120 }],
      tarpitsTriggered: [{ fingerprintId: 'fp-1', triggeredAt: '2024-05-01T11:50:00.000Z', liarEventCount: 30 }],
      sampleLiarEventIds: ids(400, 20),
    },
    { tenant: 'hp-b', events: 40, liarEvents: 10, topLiarFingerprints: [], tarpitsTriggered: [{ fingerprintId: 'fp-9', triggeredAt: '2024-05-01T11:55:00.000Z', liarEventCount: 5 }], sampleLiarEventIds: ids(500, 10) },
  ],
  crossToolset: [{ tenant: 'acme', toolsets: ['api-y', 'db-z', 'web-big'], events: 60, sampleEvents: ids(600, 10).map((eventId, i) => ({ eventId, toolset: ['api-y', 'db-z', 'web-big'][i % 3]! })) }],
  openIncidents: [],
};

/** What the run service does with a built-in answer: canonical JSON, then the agent's schema. */
function readBack(proposals: unknown[], schema: typeof IncidentItem | typeof InvestigationItem | typeof RuleItem, max: number) {
  const text = canonicalJson({ proposals });
  expect(Value.Check(proposalsAnswer(schema, max), JSON.parse(text))).toBe(true);
  return parseProposals(text, schema, max);
}

describe('the built-in agents answer what the schemas accept', () => {
  it('the incident classifier, every version', () => {
    for (const { version, params } of INCIDENT_CLASSIFIER_VERSIONS) {
      const proposals = classifyIncidents(fleet, params);
      expect(proposals.length, version).toBeGreaterThan(0);
      const out = readBack(proposals, IncidentItem, MAX_PROPOSALS.incident);
      expect(out.refused).toBeNull();
      expect(out.items.map((i) => (i.ok ? 'ok' : i.reason)), version).toEqual(proposals.map(() => 'ok'));
      expect(out.items.map((i) => i.ok && i.value)).toEqual(JSON.parse(canonicalJson(proposals)));
    }
    // 1.1.0 sees every signal of this window.
    expect(new Set(classifyIncidents(fleet, INCIDENT_CLASSIFIER_VERSIONS.at(-1)!.params).map((p) => p.signal))).toEqual(new Set(['rate-spike', 'silence', 'liar-flood', 'tarpit', 'cross-toolset']));
  });

  it('the investigation proposer, cluster-level and around a focal event, every version', () => {
    const snapshot: InvestigationSnapshot = {
      ...fleet,
      focal: null,
      clusters: [
        { ja4: 't13d1516h2_8daaf6152771_02713d6af862', uaClass: 'LIAR', asn: 64500, tenant: 'hp-a', events: 120, fingerprints: 4, sampleEventIds: ids(400, 10) },
        { ja4: null, uaClass: 'LIAR', asn: null, tenant: 'hp-a', events: 30, fingerprints: 1, sampleEventIds: ids(420, 5) },
      ],
    };
    const focal: InvestigationSnapshot['focal'] = {
      eventId: uuid(700),
      toolset: 'web-big',
      eventType: 'login.fail',
      tenant: 'acme',
      ts: '2024-05-01T11:40:00.000Z',
      upstream: [{ eventId: uuid(701), toolset: 'api-y', eventType: 'token.issued', ts: '2024-04-30T09:00:00.000Z' }],
      downstream: [{ eventId: uuid(702), toolset: 'db-z', eventType: 'row.locked', ts: '2024-05-01T11:58:00.000Z' }],
    };
    for (const { version, params } of INVESTIGATION_PROPOSER_VERSIONS) {
      for (const s of [snapshot, { ...snapshot, focal }]) {
        const proposals = proposeInvestigations(s, params);
        expect(proposals.length, version).toBeGreaterThan(0);
        const out = readBack(proposals, InvestigationItem, MAX_PROPOSALS.investigation);
        expect(out.items.map((i) => (i.ok ? 'ok' : i.reason)), version).toEqual(proposals.map(() => 'ok'));
      }
    }
  });

  it('the rule proposer, every version, with predicates in the empire union', () => {
    const from = Date.parse('2024-04-28T00:00:00.000Z');
    const hour = (h: number) => new Date(from + h * 3_600_000).toISOString();
    const snapshot: RuleSnapshot = {
      lookbackDays: 3,
      from: hour(0),
      to: hour(72),
      history: [
        { toolset: 'web-big', hours: Array.from({ length: 72 }, (_, i) => (i === 30 || i === 31 ? 80 : 5 + (i % 4))) },
        { toolset: 'api-y', hours: Array.from({ length: 72 }, (_, i) => (i % 24 === 3 ? 60 : 2)) },
      ],
      resolvedIncidents: [
        { id: 'i1', toolset: 'web-big', openedAt: hour(32), resolvedAt: hour(34), severity: 'major' },
        { id: 'i2', toolset: 'api-y', openedAt: hour(28), resolvedAt: hour(29), severity: 'minor' },
      ],
      examples: [{ toolset: 'api-y', predicate: { kind: 'empire_count_gte', count: 61, windowMinutes: 60 }, decision: 'rejected', notes: 'too noisy' }],
      existingRules: [],
    };
    for (const { version, params } of RULE_PROPOSER_VERSIONS) {
      const proposals = proposeRules(snapshot, params);
      expect(proposals.length, version).toBeGreaterThan(0);
      const out = readBack(proposals, RuleItem, MAX_PROPOSALS['alert-rule']);
      expect(out.items.map((i) => (i.ok ? 'ok' : i.reason)), version).toEqual(proposals.map(() => 'ok'));
      for (const p of proposals) {
        expect(Value.Check(EmpirePredicate, p.predicate)).toBe(true);
        expect(checkPredicate(p.predicate as EmpirePredicate, { toolset: p.toolset })).toBeNull();
      }
    }
  });

  it('the postmortem writer, every version', () => {
    const snapshot: PostmortemSnapshot = {
      incident: { id: uuid(900), toolset: 'web-big', severity: 'major', title: 'Rate spike: web-big — 400 events in 15 min, 40× expected', status: 'open', source: 'triage', openedAt: '2024-05-01T12:00:00.000Z', resolvedAt: null },
      lineage: Array.from({ length: 40 }, (_, i) => ({
        eventId: uuid(100 + i),
        toolset: i % 3 === 0 ? 'api-y' : 'web-big',
        eventType: i % 2 === 0 ? 'login.fail' : 'page.view',
        tenant: i % 5 === 0 ? null : `tenant-${i % 4}`,
        ts: new Date(Date.parse('2024-05-01T11:45:00.000Z') + i * 10_000).toISOString(),
        causedBy: i === 0 ? null : uuid(100 + i - 1),
      })),
      operatorNotes: 'Seen after the 11:40 deploy.',
    };
    for (const { version, params } of POSTMORTEM_WRITER_VERSIONS) {
      const draft = writePostmortem(snapshot, params);
      expect(Value.Check(PostmortemDraftSchema, draft), version).toBe(true);
      expect(parseDraft(canonicalJson(draft)), version).toEqual({ ok: true, value: JSON.parse(canonicalJson(draft)) });
    }
  });

  it('the incident classifier and the investigation proposer on any window, names at their longest', () => {
    const name = (max: number) => fc.tuple(fc.constantFrom('a', 'Z'), fc.string({ unit: fc.constantFrom('a', 'b', '0', '-'), minLength: 2, maxLength: max - 1 })).map(([h, t]) => h + t);
    const count = fc.integer({ min: 0, max: 100_000 });
    const idList = fc.array(fc.integer({ min: 0, max: 5000 }).map(uuid), { maxLength: 20 });
    const arbToolset = fc.record({
      toolset: name(128),
      events: count,
      tenants: fc.integer({ min: 0, max: 500 }),
      topEventTypes: fc.array(fc.record({ eventType: fc.string({ minLength: 1, maxLength: 128 }), count }), { maxLength: 5 }),
      sampleEventIds: idList,
      forecast: fc.option(
        fc.record({
          score: fc.double({ min: 0, max: 1, noNaN: true }),
          level: fc.constantFrom('none' as const, 'watch' as const, 'alert' as const),
          baselineMean: fc.double({ min: 0, max: 1e6, noNaN: true }),
          recentMean: fc.double({ min: 0, max: 1e6, noNaN: true }),
          computedAt: fc.constant('2024-05-01T11:45:00.000Z'),
        }),
        { nil: null },
      ),
    });
    const slug = fc.string({ unit: fc.constantFrom('a', 'z', '0', '-'), minLength: 1, maxLength: 64 });
    const arbHoneypot = fc.record({
      tenant: slug,
      events: count,
      liarEvents: count,
      topLiarFingerprints: fc.array(fc.record({ fingerprintId: fc.string({ minLength: 16, maxLength: 16 }), liarEvents: count }), { maxLength: 5 }),
      tarpitsTriggered: fc.array(fc.record({ fingerprintId: fc.string({ minLength: 16, maxLength: 16 }), triggeredAt: fc.constant('2024-05-01T11:50:00.000Z'), liarEventCount: count }), { maxLength: 10 }),
      sampleLiarEventIds: idList,
    });
    const arbCross = fc.record({ tenant: fc.string({ minLength: 1, maxLength: 128 }), toolsets: fc.array(name(128), { minLength: 2, maxLength: 6 }), events: count, sampleEvents: fc.array(fc.record({ eventId: fc.integer({ min: 0, max: 5000 }).map(uuid), toolset: name(128) }), { maxLength: 10 }) });
    const arbCluster = fc.record({
      ja4: fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: null }),
      uaClass: fc.constantFrom('LIAR', 'KNOWN_LLM_AGENT'),
      asn: fc.option(fc.integer({ min: 0, max: 4_294_967_295 }), { nil: null }),
      tenant: slug,
      events: count,
      fingerprints: fc.integer({ min: 1, max: 1000 }),
      sampleEventIds: fc.array(fc.integer({ min: 0, max: 5000 }).map(uuid), { maxLength: 10 }),
    });
    const arbSnapshot = fc.record({
      toolsets: fc.uniqueArray(arbToolset, { maxLength: 6, selector: (t) => t.toolset }),
      honeypot: fc.uniqueArray(arbHoneypot, { maxLength: 4, selector: (h) => h.tenant }),
      crossToolset: fc.array(arbCross, { maxLength: 4 }),
      clusters: fc.array(arbCluster, { maxLength: 6 }),
    });
    fc.assert(
      fc.property(arbSnapshot, (s) => {
        const triage: TriageSnapshot = { ...WINDOW, toolsets: s.toolsets, honeypot: s.honeypot, crossToolset: s.crossToolset, openIncidents: [] };
        for (const { params } of INCIDENT_CLASSIFIER_VERSIONS) {
          const out = readBack(classifyIncidents(triage, params), IncidentItem, MAX_PROPOSALS.incident);
          expect(out.items.filter((i) => !i.ok)).toEqual([]);
        }
        for (const { params } of INVESTIGATION_PROPOSER_VERSIONS) {
          const out = readBack(proposeInvestigations({ ...triage, focal: null, clusters: s.clusters }, params), InvestigationItem, MAX_PROPOSALS.investigation);
          expect(out.items.filter((i) => !i.ok)).toEqual([]);
        }
      }),
      { numRuns: 200 },
    );
  });
});
