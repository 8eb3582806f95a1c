import { type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ClaimSchema,
  IncidentItem,
  InvestigationItem,
  MAX_CLAIM_EVENT_IDS,
  MAX_CLAIMS,
  MAX_EVIDENCE,
  NarrationSchema,
  parseDraft,
  parseNarration,
  parseProposals,
  PostmortemDraftSchema,
  proposalsAnswer,
  RuleItem,
  TEXT_MAX,
  ViewFiltersSchema,
} from './output.ts';
import { POSTMORTEM_SECTIONS } from './types.ts';

// Every bound of the answer schemas (output.ts), at its edge: the longest text kept and one more
// character refused, the shortest kept and the empty one refused, every allowed value and a wrong
// one, closed objects. The schemas are also what the live model is sent as its response format.

const x = (n: number) => 'x'.repeat(n);
const ids = (n: number) => Array.from({ length: n }, (_, i) => `e${i}`);

const incident = {
  kind: 'incident',
  toolset: 'web-a',
  severity: 'minor',
  signal: 'rate-spike',
  title: 'Rate spike',
  summary: 'web-a received 30 events.',
  evidenceEventIds: ['e1'],
};
const filters = { toolset: null, tenant: null, eventType: null, uaClass: null, fingerprintId: null, focalEventId: null, from: 'f', to: 't' };
const investigation = { kind: 'investigation', toolset: 'web-a', name: 'v', rationale: ['a', 'b', 'c'], filters, evidenceEventIds: [] };
const rule = { kind: 'alert-rule', toolset: 'web-a', name: 'r', predicate: { kind: 'empire_count_gte' }, rationale: 'why' };
const sections = () => Object.fromEntries(POSTMORTEM_SECTIONS.map((s) => [s, [] as unknown[]]));
const draft = { title: 't', sections: sections() };

/** The reason `value` is refused by `schema` through parseProposals, or 'ok'. */
function verdict(schema: TSchema, value: unknown): string {
  const [first] = parseProposals(JSON.stringify({ proposals: [value] }), schema, 20).items;
  return first!.ok ? 'ok' : first!.reason;
}
const ok = (schema: TSchema, value: unknown) => expect(verdict(schema, value), JSON.stringify(value).slice(0, 200)).toBe('ok');
const refused = (schema: TSchema, value: unknown, path: string) => expect(verdict(schema, value), JSON.stringify(value).slice(0, 200)).toMatch(new RegExp(`^schema-violation: ${path.replace(/[/]/g, '\\/')} `));

describe('TEXT_MAX', () => {
  it('states the longest text of each kind', () => {
    expect(TEXT_MAX).toEqual({ title: 200, summary: 2000, name: 120, bullet: 300, rationale: 1000, claim: 1000, paragraph: 4000 });
  });
});

describe('IncidentItem', () => {
  it('takes each text from 1 character to its bound', () => {
    for (const [field, max] of [['title', TEXT_MAX.title], ['summary', TEXT_MAX.summary]] as const) {
      ok(IncidentItem, { ...incident, [field]: x(1) });
      ok(IncidentItem, { ...incident, [field]: x(max) });
      refused(IncidentItem, { ...incident, [field]: '' }, `/${field}`);
      refused(IncidentItem, { ...incident, [field]: x(max + 1) }, `/${field}`);
      refused(IncidentItem, { ...incident, [field]: 5 }, `/${field}`);
    }
  });

  it('wants kind "incident"', () => {
    refused(IncidentItem, { ...incident, kind: 'investigation' }, '/kind');
    refused(IncidentItem, { ...incident, kind: '' }, '/kind');
  });

  it('takes every severity and signal, and nothing else', () => {
    for (const severity of ['critical', 'major', 'minor']) ok(IncidentItem, { ...incident, severity });
    for (const severity of ['', 'huge', 'Minor']) refused(IncidentItem, { ...incident, severity }, '/severity');
    for (const signal of ['rate-spike', 'silence', 'liar-flood', 'tarpit', 'cross-toolset', 'other']) ok(IncidentItem, { ...incident, signal });
    for (const signal of ['', 'spike', 'Other']) refused(IncidentItem, { ...incident, signal }, '/signal');
  });

  it('wants a toolset name of 3 to 128 characters, a letter then letters, digits or hyphens', () => {
    for (const toolset of ['abc', 'a-1', `a${x(127)}`, 'Web-2-b']) ok(IncidentItem, { ...incident, toolset });
    for (const toolset of ['ab', '', `a${x(128)}`, '1ab', '-ab', 'a_b', 'a b', 'web.a', 'ab\n']) refused(IncidentItem, { ...incident, toolset }, '/toolset');
  });

  it('takes up to MAX_EVIDENCE evidence ids of up to 64 characters', () => {
    ok(IncidentItem, { ...incident, evidenceEventIds: [] });
    ok(IncidentItem, { ...incident, evidenceEventIds: ids(MAX_EVIDENCE) });
    ok(IncidentItem, { ...incident, evidenceEventIds: [x(64), ''] });
    refused(IncidentItem, { ...incident, evidenceEventIds: ids(MAX_EVIDENCE + 1) }, '/evidenceEventIds');
    refused(IncidentItem, { ...incident, evidenceEventIds: [x(65)] }, '/evidenceEventIds/0');
    refused(IncidentItem, { ...incident, evidenceEventIds: [1] }, '/evidenceEventIds/0');
  });

  it('takes a postmortem draft, null or none, but checks a draft given', () => {
    ok(IncidentItem, { ...incident, postmortemDraft: draft });
    ok(IncidentItem, { ...incident, postmortemDraft: null });
    const { evidenceEventIds: _e, ...without } = incident;
    refused(IncidentItem, without, '/evidenceEventIds');
    refused(IncidentItem, { ...incident, postmortemDraft: { ...draft, title: '' } }, '/postmortemDraft');
    refused(IncidentItem, { ...incident, postmortemDraft: 'draft' }, '/postmortemDraft');
  });

  it('is closed', () => {
    refused(IncidentItem, { ...incident, note: 'x' }, '/note');
  });
});

describe('InvestigationItem and its view filters', () => {
  it('takes the item as built', () => {
    ok(InvestigationItem, investigation);
    refused(InvestigationItem, { ...investigation, kind: 'incident' }, '/kind');
    refused(InvestigationItem, { ...investigation, kind: '' }, '/kind');
    refused(InvestigationItem, { ...investigation, extra: 1 }, '/extra');
    refused(InvestigationItem, { ...investigation, toolset: 'ab' }, '/toolset');
  });

  it('bounds the name and each rationale bullet, and wants exactly three bullets', () => {
    ok(InvestigationItem, { ...investigation, name: x(TEXT_MAX.name) });
    refused(InvestigationItem, { ...investigation, name: x(TEXT_MAX.name + 1) }, '/name');
    refused(InvestigationItem, { ...investigation, name: '' }, '/name');
    ok(InvestigationItem, { ...investigation, rationale: ['a', x(TEXT_MAX.bullet), 'c'] });
    refused(InvestigationItem, { ...investigation, rationale: ['a', x(TEXT_MAX.bullet + 1), 'c'] }, '/rationale/1');
    refused(InvestigationItem, { ...investigation, rationale: ['a', '', 'c'] }, '/rationale/1');
    refused(InvestigationItem, { ...investigation, rationale: ['a', 'b'] }, '/rationale');
    refused(InvestigationItem, { ...investigation, rationale: ['a', 'b', 'c', 'd'] }, '/rationale');
  });

  it('bounds the evidence ids', () => {
    ok(InvestigationItem, { ...investigation, evidenceEventIds: ids(MAX_EVIDENCE) });
    refused(InvestigationItem, { ...investigation, evidenceEventIds: ids(MAX_EVIDENCE + 1) }, '/evidenceEventIds');
    refused(InvestigationItem, { ...investigation, evidenceEventIds: [x(65)] }, '/evidenceEventIds/0');
  });

  it('wants every filter, each a text within its bound or null; from and to never null', () => {
    const bounds = { toolset: 128, tenant: 128, eventType: 128, uaClass: 64, fingerprintId: 128, focalEventId: 64 } as const;
    for (const [field, max] of Object.entries(bounds)) {
      expect(Value.Check(ViewFiltersSchema, { ...filters, [field]: x(max) }), field).toBe(true);
      expect(Value.Check(ViewFiltersSchema, { ...filters, [field]: 'a' }), field).toBe(true);
      ok(InvestigationItem, { ...investigation, filters: { ...filters, [field]: x(max) } });
      refused(InvestigationItem, { ...investigation, filters: { ...filters, [field]: x(max + 1) } }, `/filters/${field}`);
      refused(InvestigationItem, { ...investigation, filters: { ...filters, [field]: '' } }, `/filters/${field}`);
      const { [field as keyof typeof filters]: _drop, ...rest } = filters;
      refused(InvestigationItem, { ...investigation, filters: rest }, `/filters/${field}`);
    }
    for (const field of ['from', 'to'] as const) {
      ok(InvestigationItem, { ...investigation, filters: { ...filters, [field]: x(40) } });
      refused(InvestigationItem, { ...investigation, filters: { ...filters, [field]: x(41) } }, `/filters/${field}`);
      refused(InvestigationItem, { ...investigation, filters: { ...filters, [field]: '' } }, `/filters/${field}`);
      refused(InvestigationItem, { ...investigation, filters: { ...filters, [field]: null } }, `/filters/${field}`);
    }
    refused(InvestigationItem, { ...investigation, filters: { ...filters, window: '1h' } }, '/filters/window');
  });
});

describe('RuleItem', () => {
  it('bounds the name and rationale, wants kind "alert-rule" and a closed item', () => {
    ok(RuleItem, rule);
    ok(RuleItem, { ...rule, name: x(TEXT_MAX.name), rationale: x(TEXT_MAX.rationale) });
    refused(RuleItem, { ...rule, name: x(TEXT_MAX.name + 1) }, '/name');
    refused(RuleItem, { ...rule, name: '' }, '/name');
    refused(RuleItem, { ...rule, rationale: x(TEXT_MAX.rationale + 1) }, '/rationale');
    refused(RuleItem, { ...rule, rationale: '' }, '/rationale');
    refused(RuleItem, { ...rule, kind: 'incident' }, '/kind');
    refused(RuleItem, { ...rule, kind: '' }, '/kind');
    refused(RuleItem, { ...rule, toolset: 'a_b' }, '/toolset');
    refused(RuleItem, { ...rule, extra: true }, '/extra');
  });

  it('wants a predicate object with a kind of 1 to 64 characters, other fields left to the later check', () => {
    ok(RuleItem, { ...rule, predicate: { kind: x(64), count: 5, windowMinutes: 'nonsense' } });
    refused(RuleItem, { ...rule, predicate: { kind: x(65) } }, '/predicate/kind');
    refused(RuleItem, { ...rule, predicate: { kind: '' } }, '/predicate/kind');
    refused(RuleItem, { ...rule, predicate: 'empire_count_gte' }, '/predicate');
  });

  it('tells the model that a predicate is open and every other object closed (the response format)', () => {
    expect(RuleItem.properties.predicate.additionalProperties).toBe(true);
    for (const schema of [RuleItem, IncidentItem, InvestigationItem, ViewFiltersSchema, ClaimSchema, PostmortemDraftSchema, PostmortemDraftSchema.properties.sections, NarrationSchema, proposalsAnswer(RuleItem, 3)]) {
      expect(schema.additionalProperties).toBe(false);
    }
  });
});

describe('proposalsAnswer (the whole answer\'s response format)', () => {
  it('is a closed object holding at most maxItems items of the schema', () => {
    const schema = proposalsAnswer(IncidentItem, 2);
    expect(Value.Check(schema, { proposals: [] })).toBe(true);
    expect(Value.Check(schema, { proposals: [incident, incident] })).toBe(true);
    expect(Value.Check(schema, { proposals: [incident, incident, incident] })).toBe(false);
    expect(Value.Check(schema, { proposals: [{ ...incident, kind: 'x' }] })).toBe(false);
    expect(Value.Check(schema, { proposals: [], more: 1 })).toBe(false);
    expect(Value.Check(schema, {})).toBe(false);
  });
});

describe('parseProposals', () => {
  it('refuses each item beyond maxItems, the last allowed one kept', () => {
    expect(parseProposals(JSON.stringify({ proposals: [incident, incident] }), IncidentItem, 1).items).toEqual([
      { ok: true, value: incident },
      { ok: false, reason: 'schema-violation: more than 1 proposals in one answer' },
    ]);
    expect(parseProposals(JSON.stringify({ proposals: [incident] }), IncidentItem, 0).items).toEqual([{ ok: false, reason: 'schema-violation: more than 0 proposals in one answer' }]);
  });

  it('refuses every JSON value but an object holding a proposals array', () => {
    const whole = 'malformed-output: the answer is not an object {"proposals": [...]}';
    for (const text of ['null', '0', '1', '""', '"x"', 'false', '[]', '[[]]', '{}', '{"proposals":1}', '{"proposals":{"0":{}}}', '{"proposals":null}']) {
      expect(parseProposals(text, IncidentItem, 5), text).toEqual({ refused: whole, items: [] });
    }
    expect(parseProposals('{"proposals":[],"other":1}', IncidentItem, 5)).toEqual({ refused: null, items: [] });
  });

  it('names the root path "/" when the item itself is wrong', () => {
    expect(parseProposals('{"proposals":[null, 3]}', IncidentItem, 5).items).toEqual([
      { ok: false, reason: 'schema-violation: / Expected object' },
      { ok: false, reason: 'schema-violation: / Expected object' },
    ]);
  });
});

describe('the parser\'s message in a malformed-output reason', () => {
  afterEach(() => vi.restoreAllMocks());

  it('quotes it, cut to 120 characters, for each reader', () => {
    const long = `${x(119)}yz${x(50)}`;
    vi.spyOn(JSON, 'parse').mockImplementation(() => {
      throw new SyntaxError(long);
    });
    const expected = `malformed-output: the answer is not JSON (${long.slice(0, 120)})`;
    expect(parseProposals('{}', IncidentItem, 5)).toEqual({ refused: expected, items: [] });
    expect(parseDraft('{}')).toEqual({ ok: false, reason: expected });
    expect(parseNarration('{}')).toEqual({ ok: false, reason: expected });
  });

  it('quotes a short one whole', () => {
    const message = (text: string) => {
      try {
        JSON.parse(text);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('parsed');
    };
    expect(parseProposals('{', IncidentItem, 5).refused).toBe(`malformed-output: the answer is not JSON (${message('{')})`);
    expect(parseDraft('nope')).toEqual({ ok: false, reason: `malformed-output: the answer is not JSON (${message('nope')})` });
    expect(parseNarration('')).toEqual({ ok: false, reason: `malformed-output: the answer is not JSON (${message('')})` });
  });
});

describe('parseDraft', () => {
  const withClaims = (section: string, claims: unknown[]) => JSON.stringify({ title: 't', sections: { ...sections(), [section]: claims } });

  it('takes every section with up to MAX_CLAIMS claims, each of up to MAX_CLAIM_EVENT_IDS ids', () => {
    for (const section of POSTMORTEM_SECTIONS) {
      const claims = Array.from({ length: MAX_CLAIMS }, () => ({ text: x(TEXT_MAX.claim), eventIds: ids(MAX_CLAIM_EVENT_IDS) }));
      expect(parseDraft(withClaims(section, claims)).ok, section).toBe(true);
      expect(parseDraft(withClaims(section, [...claims, claims[0]])), section).toMatchObject({ ok: false, reason: expect.stringMatching(new RegExp(`^schema-violation: /sections/${section} `)) });
      const { [section]: _drop, ...four } = sections();
      expect(parseDraft(JSON.stringify({ title: 't', sections: four })), section).toEqual({ ok: false, reason: `schema-violation: /sections/${section} Expected required property` });
    }
  });

  it('bounds a claim\'s text and ids, and closes the claim', () => {
    const reason = (claim: unknown) => {
      const out = parseDraft(withClaims('impact', [claim]));
      return out.ok ? 'ok' : out.reason;
    };
    expect(reason({ text: 'a', eventIds: [] })).toBe('ok');
    expect(reason({ text: '', eventIds: [] })).toMatch(/^schema-violation: \/sections\/impact\/0\/text /);
    expect(reason({ text: x(TEXT_MAX.claim + 1), eventIds: [] })).toMatch(/^schema-violation: \/sections\/impact\/0\/text /);
    expect(reason({ text: 'a', eventIds: ids(MAX_CLAIM_EVENT_IDS + 1) })).toMatch(/^schema-violation: \/sections\/impact\/0\/eventIds /);
    expect(reason({ text: 'a', eventIds: [x(64)] })).toBe('ok');
    expect(reason({ text: 'a', eventIds: [x(65)] })).toMatch(/^schema-violation: \/sections\/impact\/0\/eventIds\/0 /);
    expect(reason({ text: 'a', eventIds: [], source: 'model' })).toMatch(/^schema-violation: \/sections\/impact\/0\/source /);
  });

  it('bounds the title and closes the draft', () => {
    expect(parseDraft(JSON.stringify({ ...draft, title: x(TEXT_MAX.title) })).ok).toBe(true);
    expect(parseDraft(JSON.stringify({ ...draft, title: x(TEXT_MAX.title + 1) }))).toMatchObject({ ok: false, reason: expect.stringMatching(/^schema-violation: \/title /) });
    expect(parseDraft(JSON.stringify({ ...draft, author: 'm' }))).toMatchObject({ ok: false, reason: expect.stringMatching(/^schema-violation: \/author /) });
    expect(parseDraft(JSON.stringify({ title: 't' }))).toEqual({ ok: false, reason: 'schema-violation: /sections Expected required property' });
  });
});

describe('parseNarration', () => {
  it('reads a paragraph of 1 to 4000 characters', () => {
    expect(parseNarration(JSON.stringify({ paragraph: 'p' }))).toEqual({ ok: true, value: { paragraph: 'p' } });
    expect(parseNarration(JSON.stringify({ paragraph: x(TEXT_MAX.paragraph) }))).toEqual({ ok: true, value: { paragraph: x(TEXT_MAX.paragraph) } });
  });

  it('refuses a paragraph empty, too long, missing or not text, and anything beside it', () => {
    for (const value of [{ paragraph: '' }, { paragraph: x(TEXT_MAX.paragraph + 1) }, { paragraph: 5 }]) {
      expect(parseNarration(JSON.stringify(value))).toMatchObject({ ok: false, reason: expect.stringMatching(/^schema-violation: \/paragraph /) });
    }
    expect(parseNarration('{}')).toEqual({ ok: false, reason: 'schema-violation: /paragraph Expected required property' });
    expect(parseNarration(JSON.stringify({ paragraph: 'p', sources: [] }))).toEqual({ ok: false, reason: 'schema-violation: /sources Unexpected property' });
    expect(parseNarration('"p"')).toEqual({ ok: false, reason: 'schema-violation: / Expected object' });
  });

  it('cuts a long violation to 300 characters', () => {
    const key = 'k'.repeat(400);
    expect(parseNarration(JSON.stringify({ paragraph: 'p', [key]: 1 }))).toEqual({ ok: false, reason: `schema-violation: /${key}`.slice(0, 300) });
  });
});
