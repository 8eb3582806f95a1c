import { Value } from '@sinclair/typebox/value';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UNTRUSTED_DATA_RULES } from '../../../platform/llm/untrusted.ts';
import { identifierTokens, stripDraft } from '../postmortems/strip.ts';
import { PostmortemDraftSchema } from './output.ts';
import {
  POSTMORTEM_WRITER_PARAMS_1_0_0 as V100,
  POSTMORTEM_WRITER_PARAMS_1_1_0 as V110,
  POSTMORTEM_WRITER_VERSIONS,
  type PostmortemWriterParams,
  writePostmortem,
} from './postmortem-writer.ts';
import { type PostmortemDraft, POSTMORTEM_SECTIONS, type PostmortemSnapshot } from './types.ts';

type Event = PostmortemSnapshot['lineage'][number];
const ev = (eventId: string, hhmm: string, toolset: string, eventType: string, tenant: string | null, causedBy: string | null): Event => ({
  eventId,
  toolset,
  eventType,
  tenant,
  ts: `2024-05-01T${hhmm}:00.000Z`,
  causedBy,
});

/**
 * An import in crm (e1) fans out into rows (e2, e3) whose invoices fail in billing (e4, e5); a
 * retry (e6) arrives later, caused by an event outside the lineage. The incident (billing, major,
 * opened by the forecaster) ran 10:15 → 11:00.
 */
const lineage = [
  ev('e1', '10:00', 'crm', 'import.started', 'acme', null),
  ev('e2', '10:05', 'crm', 'import.row', 'acme', 'e1'),
  ev('e3', '10:06', 'crm', 'import.row', 'acme', 'e1'),
  ev('e4', '10:10', 'billing', 'invoice.failed', 'acme', 'e2'),
  ev('e5', '10:12', 'billing', 'invoice.failed', 'globex', 'e3'),
  ev('e6', '10:20', 'billing', 'retry', null, 'outside-1'),
];

const snapshot = (over: Partial<PostmortemSnapshot> = {}): PostmortemSnapshot => ({
  incident: {
    id: 'inc-1',
    toolset: 'billing',
    severity: 'major',
    title: 'Forecast: billing event rate surged (score 0.81 on 3 runs)',
    status: 'resolved',
    source: 'forecast',
    openedAt: '2024-05-01T10:15:00.000Z',
    resolvedAt: '2024-05-01T11:00:00.000Z',
  },
  lineage,
  operatorNotes: null,
  ...over,
});

const cited = (draft: PostmortemDraft) => POSTMORTEM_SECTIONS.flatMap((s) => draft.sections[s].flatMap((c) => c.eventIds));

describe('writePostmortem on a known incident (1.1.0)', () => {
  const draft = writePostmortem(snapshot(), V110);

  it('titles the draft after the incident', () => {
    expect(draft.title).toBe('Postmortem: Forecast: billing event rate surged (score 0.81 on 3 runs)');
  });

  it('summarises what, when, where and how bad, citing the first events', () => {
    expect(draft.sections.summary).toEqual([
      {
        text: 'Major incident on billing, "Forecast: billing event rate surged (score 0.81 on 3 runs)", opened 2024-05-01T10:15:00.000Z by forecast; resolved 2024-05-01T11:00:00.000Z after 45 min.',
        eventIds: ['e1', 'e2', 'e3'],
      },
      { text: 'Its lineage holds 6 events of 4 types in 2 toolsets (billing, crm), from 2024-05-01T10:00:00.000Z to 2024-05-01T10:20:00.000Z.', eventIds: ['e1', 'e6'] },
    ]);
  });

  it('tells the timeline at each change of event type, with the incident\'s own moments in order', () => {
    expect(draft.sections.timeline).toEqual([
      { text: '2024-05-01T10:00:00.000Z: first event, import.started in crm from tenant acme; 1 event of that type in a row.', eventIds: ['e1'] },
      { text: '2024-05-01T10:05:00.000Z: events turn to import.row in crm, 2 in a row.', eventIds: ['e2', 'e3'] },
      { text: '2024-05-01T10:10:00.000Z: events turn to invoice.failed in billing, 2 in a row.', eventIds: ['e4', 'e5'] },
      { text: '2024-05-01T10:15:00.000Z: incident opened (forecast, major).', eventIds: [] },
      { text: '2024-05-01T10:20:00.000Z: events turn to retry in billing, 1 in a row.', eventIds: ['e6'] },
      { text: '2024-05-01T10:20:00.000Z: last event, retry in billing.', eventIds: ['e6'] },
      { text: '2024-05-01T11:00:00.000Z: incident resolved.', eventIds: [] },
    ]);
  });

  it('counts the impact per type and per tenant', () => {
    expect(draft.sections.impact).toEqual([
      { text: '2 events of type import.row (crm).', eventIds: ['e2', 'e3'] },
      { text: '2 events of type invoice.failed (billing).', eventIds: ['e4', 'e5'] },
      { text: '1 event of type import.started (crm).', eventIds: ['e1'] },
      { text: '1 event of type retry (billing).', eventIds: ['e6'] },
      { text: 'Tenant acme: 4 events of 6 in 2 toolsets.', eventIds: ['e1', 'e2', 'e3', 'e4'] },
      { text: 'Tenant globex: 1 event of 6 in 1 toolset.', eventIds: ['e5'] },
      { text: '1 event carries no source tenant.', eventIds: ['e6'] },
    ]);
  });

  it('names the earliest upstream event as the probable origin, and the independent chain', () => {
    expect(draft.sections.rootCause).toEqual([
      {
        text: 'Probable origin: import.started in crm from tenant acme at 2024-05-01T10:00:00.000Z, the earliest event of the lineage that no other lineage event caused; 4 of the other 5 events descend from it.',
        eventIds: ['e1'],
      },
      { text: '1 other chain starts independently (retry), so the origin above may be one of several causes.', eventIds: ['e6'] },
      { text: 'This is inferred from causedBy links and timing; confirm it against the producer before closing the postmortem.', eventIds: [] },
    ]);
  });

  it('lists concrete follow-ups, the operator notes first', () => {
    const withNotes = writePostmortem(snapshot({ operatorNotes: '  The CRM import was re-run by hand at 10:40.  ' }), V110);
    expect(withNotes.sections.actionItems).toEqual([
      { text: 'Operator notes: The CRM import was re-run by hand at 10:40.', eventIds: [] },
      { text: 'Review the forecast of billing: whether its baseline still matches normal traffic, and whether the latch was right to open this incident.', eventIds: [] },
      { text: 'Inspect the producer of import.started in crm around 2024-05-01T10:00:00.000Z for the change that started the chain.', eventIds: ['e1'] },
      { text: 'Check tenants acme, globex: 5 of the 6 events came from them.', eventIds: ['e1', 'e2', 'e3', 'e4', 'e5'] },
      { text: 'Make sure a rule or forecast on billing would catch a recurrence earlier than this one.', eventIds: [] },
    ]);
    expect(draft.sections.actionItems.map((c) => c.text)).not.toContain('Operator notes');
  });
});

describe('writePostmortem edge cases and versions', () => {
  it('1.0.0 keeps 5 claims a section and says how many type changes it left out', () => {
    const d = writePostmortem(snapshot(), V100);
    expect(d.sections.timeline.map((c) => c.text)).toEqual([
      '2024-05-01T10:00:00.000Z: first event, import.started in crm from tenant acme; 1 event of that type in a row.',
      '2024-05-01T10:05:00.000Z: events turn to import.row in crm, 2 in a row.',
      '2024-05-01T10:15:00.000Z: incident opened (forecast, major).',
      '2024-05-01T10:20:00.000Z: last event, retry in billing (after 2 more changes of event type not listed).',
      '2024-05-01T11:00:00.000Z: incident resolved.',
    ]);
    // One line for the tenants instead of one claim each.
    expect(d.sections.impact.slice(-2).map((c) => c.text)).toEqual(['2 tenants affected: acme (4), globex (1).', '1 event carries no source tenant.']);
    for (const s of POSTMORTEM_SECTIONS) expect(d.sections[s].length).toBeLessThanOrEqual(5);
  });

  it('says the cause is unknown and cites nothing when the lineage is empty', () => {
    const d = writePostmortem(snapshot({ lineage: [], incident: { ...snapshot().incident, resolvedAt: null, status: 'open', source: 'triage' } }), V110);
    expect(cited(d)).toEqual([]);
    expect(d.sections.rootCause).toEqual([{ text: 'Unknown: the incident has no linked events to trace a cause from.', eventIds: [] }]);
    expect(d.sections.summary[0]!.text).toContain('still open');
    expect(d.sections.summary[1]!.text).toBe('No event is linked to this incident, so this draft rests on the incident record alone.');
    expect(d.sections.timeline.map((c) => c.text)).toEqual(['2024-05-01T10:15:00.000Z: incident opened (triage, major).']);
    expect(d.sections.actionItems.map((c) => c.text)).toEqual([
      'Review what opened this incident (source triage) and whether its threshold or condition fits billing.',
      'The incident is still open: resolve it once the cause is confirmed, and record the fix here.',
    ]);
  });

  it('caps event ids per claim', () => {
    const many = Array.from({ length: 30 }, (_, i) => ev(`m${String(i).padStart(2, '0')}`, `10:${String(i).padStart(2, '0')}`, 'crm', 'import.row', 'acme', null));
    const d = writePostmortem(snapshot({ lineage: many }), V100);
    for (const s of POSTMORTEM_SECTIONS) for (const c of d.sections[s]) expect(c.eventIds.length).toBeLessThanOrEqual(10);
    expect(d.sections.timeline[0]!.eventIds).toEqual(many.slice(0, 10).map((e) => e.eventId));
  });

  it('gives the same draft for the lineage in any order', () => {
    const shuffled = snapshot({ lineage: [lineage[3]!, lineage[5]!, lineage[0]!, lineage[2]!, lineage[4]!, lineage[1]!] });
    expect(writePostmortem(shuffled, V110)).toEqual(writePostmortem(snapshot(), V110));
    expect(writePostmortem(structuredClone(snapshot()), V110)).toEqual(writePostmortem(snapshot(), V110));
  });

  it('ships 1.0.0 then 1.1.0 with compact prompts naming the five sections and the caps', () => {
    expect(POSTMORTEM_WRITER_VERSIONS.map((v) => v.version)).toEqual(['1.0.0', '1.1.0']);
    for (const v of POSTMORTEM_WRITER_VERSIONS) {
      // The agent's own part stays compact; every prompt ends with the shared untrusted-data rules.
      expect(v.systemPrompt.endsWith(`\n\n${UNTRUSTED_DATA_RULES}`)).toBe(true);
      expect(v.systemPrompt.slice(0, -UNTRUSTED_DATA_RULES.length).split('\n').length).toBeLessThanOrEqual(40);
      for (const s of POSTMORTEM_SECTIONS) expect(v.systemPrompt).toContain(`"${s}"`);
      expect(v.systemPrompt).toContain(`At most ${v.params.maxClaimsPerSection} claims per section`);
    }
  });
});

describe('writePostmortem properties (fast-check)', () => {
  const arbLineage = fc
    .uniqueArray(
      fc.record({
        eventId: fc.stringMatching(/^[0-9a-f]{6}$/),
        toolset: fc.constantFrom('crm', 'billing', 'honeypot'),
        eventType: fc.constantFrom('a.b', 'c.d', 'e.f', 'honeypot.LIAR'),
        tenant: fc.option(fc.constantFrom('acme', 'globex', 'initech', 'umbrella')),
        ts: fc.integer({ min: 0, max: 7200 }).map((s) => new Date(Date.parse('2024-05-01T10:00:00.000Z') + s * 1000).toISOString()),
        parent: fc.nat(40),
      }),
      { selector: (e) => e.eventId, maxLength: 60 },
    )
    .map((events) => events.map(({ parent, ...e }) => ({ ...e, causedBy: parent < events.length ? events[parent]!.eventId : parent % 2 === 0 ? null : 'not-in-lineage' })));

  it.each([
    ['1.0.0', V100],
    ['1.1.0', V110],
  ] as [string, PostmortemWriterParams][])('%s: schema-valid, five sections, caps kept, cites only lineage ids, passes the guard untouched, order-independent', (_v, params) => {
    fc.assert(
      fc.property(arbLineage, fc.option(fc.string({ maxLength: 2000 })), (events, notes) => {
        const s = snapshot({ lineage: events, operatorNotes: notes });
        const d = writePostmortem(s, params);
        expect(Value.Check(PostmortemDraftSchema, d)).toBe(true);
        const ids = new Set(events.map((e) => e.eventId));
        for (const section of POSTMORTEM_SECTIONS) {
          expect(d.sections[section].length).toBeGreaterThan(0);
          expect(d.sections[section].length).toBeLessThanOrEqual(params.maxClaimsPerSection);
          for (const c of d.sections[section]) expect(c.eventIds.length).toBeLessThanOrEqual(params.maxEventIdsPerClaim);
        }
        for (const id of cited(d)) expect(ids.has(id)).toBe(true);
        // The guard (postmortems/strip.ts) finds nothing to strip in what the built-in writer says.
        const guarded = stripDraft(d, { citable: ids, known: identifierTokens(s), linkOrigin: 'https://observatory.example.com', fallbackTitle: 'x' });
        expect(guarded.strippedEventIds).toEqual([]);
        expect(guarded.draft).toEqual(d);
        expect(writePostmortem({ ...s, lineage: [...events].reverse() }, params)).toEqual(d);
      }),
      { numRuns: 200 },
    );
  });
});
