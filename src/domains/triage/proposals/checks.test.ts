import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../platform/crypto.ts';
import { LINK_REMOVED } from '../../../platform/llm/links.ts';
import type { IncidentItem, InvestigationItem, RuleItem } from '../agents/output.ts';
import type { ResolvedIncident, ToolsetHistory } from '../agents/types.ts';
import { canonicalPredicate, checkIncident, checkInvestigation, checkRule, evidenceProblem, type IncidentContext, OTHER_TOOLSET, refusedCandidate, type RuleContext, withoutOtherToolsets } from './checks.ts';

// The automatic rejections of proposals (docs/triage/README.md, "Automatic rejection"), one rule at a time.

const WINDOW_START = new Date('2024-05-01T11:45:00.000Z');
const WINDOW_END = new Date('2024-05-01T12:00:00.000Z');
const ORIGIN = 'https://observatory.example.com';
const PHISH = 'https://evil.example/login';

/** Event ids (uuid, lowercase as the stores spell them) the run's input showed, and of which toolset. */
const IN_1 = '11111111-1111-4111-8111-111111111111';
const IN_2 = '22222222-2222-4222-8222-222222222222';
const OTHER_1 = '33333333-3333-4333-8333-333333333333';
const OTHER_2 = '44444444-4444-4444-8444-444444444444';
const LIAR = '55555555-5555-4555-8555-555555555555';
const LINEAGE_OLD = '66666666-6666-4666-8666-666666666666';
/** Not in the input at all. */
const UNKNOWN = '77777777-7777-4777-8777-777777777777';

const SHOWN = new Map([
  [IN_1, 'web-a'],
  [IN_2, 'web-a'],
  [OTHER_1, 'web-b'],
  [OTHER_2, 'web-b'],
  [LIAR, 'honeypot'],
  [LINEAGE_OLD, 'web-a'],
]);

function context(over: Partial<IncidentContext> = {}): IncidentContext {
  return { shown: SHOWN, linkOrigin: ORIGIN, toolsets: new Set(['web-a', 'web-b', 'honeypot']), known: new Set(), severityCeiling: () => ({ max: 'major', why: 'the test allows major' }), ...over };
}

function incident(over: Partial<IncidentItem> = {}): IncidentItem {
  return {
    kind: 'incident',
    toolset: 'web-a',
    severity: 'minor',
    signal: 'rate-spike',
    title: 'Rate spike: web-a — 30 events in 15 minutes (3× expected)',
    summary: 'web-a received 30 events against 10 expected.',
    evidenceEventIds: [IN_1],
    ...over,
  };
}

describe('evidenceProblem', () => {
  it('accepts ids the input showed for the proposal\'s toolset', () => {
    expect(evidenceProblem([IN_1, IN_2, LINEAGE_OLD], 'web-a', context())).toBeNull();
    expect(evidenceProblem([LIAR], 'honeypot', context())).toBeNull();
    expect(evidenceProblem([], 'web-a', context())).toBeNull();
  });

  it('refuses ids the input did not show, naming at most five but counting them all', () => {
    expect(evidenceProblem([IN_1, UNKNOWN, 'not-an-event-id'], 'web-a', context())).toBe(
      `evidence-not-in-input: 2 cited event id(s) are not among the event ids the run's input showed (${UNKNOWN}, not-an-event-id)`,
    );
    const six = Array.from({ length: 6 }, (_, i) => `${String(i).repeat(8)}-0000-4000-8000-000000000000`);
    expect(evidenceProblem(six, 'web-a', context())).toBe(`evidence-not-in-input: 6 cited event id(s) are not among the event ids the run's input showed (${six.slice(0, 5).join(', ')})`);
  });

  it('refuses events of another toolset without naming them', () => {
    const reason = evidenceProblem([IN_1, OTHER_1, OTHER_2, LIAR], 'web-a', context())!;
    expect(reason).toBe('evidence-other-toolset: 3 cited event id(s) are events of another toolset than web-a; a proposal cites only its own toolset\'s events');
    for (const id of [OTHER_1, OTHER_2, LIAR]) expect(reason).not.toContain(id);
    expect(evidenceProblem([IN_1], 'honeypot', context())).toMatch(/^evidence-other-toolset: 1 /);
  });

  it('names what the input did not show before what belongs elsewhere', () => {
    expect(evidenceProblem([OTHER_1, UNKNOWN], 'web-a', context())).toMatch(/^evidence-not-in-input: 1 /);
  });
});

describe('checkIncident', () => {
  it('keeps an incident whose evidence the input showed for its toolset as pending, its ids lowercased and unique', () => {
    const c = checkIncident(incident({ evidenceEventIds: [IN_1.toUpperCase(), IN_1, IN_2] }), context());
    expect(c).toEqual({
      kind: 'incident',
      status: 'pending',
      toolset: 'web-a',
      title: 'Rate spike: web-a — 30 events in 15 minutes (3× expected)',
      payload: { ...incident(), evidenceEventIds: [IN_1, IN_2], postmortemDraft: null },
      backtest: null,
      dedupeKey: 'incident:web-a:rate-spike:rate spike: web-a',
      autoRejectReason: null,
      evidenceEventIds: [IN_1, IN_2],
    });
  });

  it('keeps the postmortem seed in the payload when the agent wrote one', () => {
    const postmortemDraft = { title: 'Postmortem', sections: { summary: [], timeline: [], impact: [], rootCause: [], actionItems: [] } };
    expect(checkIncident(incident({ postmortemDraft }), context()).payload).toMatchObject({ postmortemDraft });
  });

  it('refuses evidence the input did not show, keeping what the proposal was about', () => {
    for (const id of [UNKNOWN, 'not-a-uuid']) {
      const c = checkIncident(incident({ evidenceEventIds: [IN_1, id] }), context());
      expect(c.status).toBe('auto-rejected');
      expect(c.autoRejectReason).toBe(`evidence-not-in-input: 1 cited event id(s) are not among the event ids the run's input showed (${id})`);
      // A refused incident keeps what it was about, for the operator reading the refusals.
      expect(c.dedupeKey).toBe('incident:web-a:rate-spike:rate spike: web-a');
      expect(c.evidenceEventIds).toEqual([IN_1, id]);
    }
  });

  it('refuses an incident of one toolset citing another toolset\'s events (the injected answer of issue 26)', () => {
    const c = checkIncident(incident({ toolset: 'web-a', severity: 'major', evidenceEventIds: [OTHER_1, OTHER_2] }), context());
    expect(c).toMatchObject({ status: 'auto-rejected', toolset: 'web-a' });
    expect(c.autoRejectReason).toMatch(/^evidence-other-toolset: 2 cited event id\(s\) are events of another toolset than web-a/);
  });

  it('lets a silence cite nothing, but no other signal', () => {
    expect(checkIncident(incident({ signal: 'silence', title: 'Silence: web-a — 0 events', evidenceEventIds: [] }), context()).status).toBe('pending');
    for (const signal of ['rate-spike', 'liar-flood', 'tarpit', 'cross-toolset', 'other'] as const) {
      const c = checkIncident(incident({ signal, evidenceEventIds: [] }), context());
      expect(c).toMatchObject({ status: 'auto-rejected', autoRejectReason: 'no-evidence: an incident must cite at least one event of the window' });
    }
  });

  it('checks a silence that does cite events like any other incident', () => {
    expect(checkIncident(incident({ signal: 'silence', evidenceEventIds: [UNKNOWN] }), context()).status).toBe('auto-rejected');
  });

  describe('severity policy', () => {
    const asked: unknown[] = [];
    const ceiling = (max: 'major' | 'minor'): IncidentContext['severityCeiling'] => (proposal) => {
      asked.push(proposal);
      return { max, why: `the input shows ${max}` };
    };

    it('refuses a severity above the ceiling the classifier\'s rules give this input, saying why', () => {
      const c = checkIncident(incident({ severity: 'major' }), context({ severityCeiling: ceiling('minor') }));
      expect(c).toMatchObject({
        status: 'auto-rejected',
        autoRejectReason: 'severity-policy: a rate-spike proposal of web-a may be at most minor on this input (the input shows minor); the answer said major',
      });
      expect(checkIncident(incident({ severity: 'critical' }), context({ severityCeiling: ceiling('major') })).autoRejectReason).toBe(
        'severity-policy: a rate-spike proposal of web-a may be at most major on this input (the input shows major); the answer said critical',
      );
    });

    it('accepts the ceiling itself and anything milder, and asks it about the proposal\'s toolset, signal and lowercased evidence', () => {
      asked.length = 0;
      expect(checkIncident(incident({ severity: 'major', signal: 'liar-flood', toolset: 'honeypot', evidenceEventIds: [LIAR.toUpperCase()] }), context({ severityCeiling: ceiling('major') })).status).toBe('pending');
      expect(checkIncident(incident({ severity: 'minor' }), context({ severityCeiling: ceiling('minor') })).status).toBe('pending');
      expect(asked[0]).toMatchObject({ toolset: 'honeypot', signal: 'liar-flood', evidenceEventIds: [LIAR] });
    });

    it('comes after the evidence: a proposal citing foreign events is refused for them', () => {
      expect(checkIncident(incident({ severity: 'critical', evidenceEventIds: [OTHER_1] }), context({ severityCeiling: ceiling('minor') })).autoRejectReason).toMatch(/^evidence-other-toolset: /);
    });
  });

  describe('links', () => {
    it('drops links that leave this service from the title and summary, keeping the service\'s own', () => {
      const c = checkIncident(
        incident({
          title: `Rate spike: web-a — see ${PHISH}`,
          summary: `Reset your token at ${PHISH}, or hXXps://evil.example/x. Details: ${ORIGIN}/v1/empire/triage/proposals.`,
        }),
        context(),
      );
      expect(c.status).toBe('pending');
      expect(c.title).toBe(`Rate spike: web-a — see ${LINK_REMOVED}`);
      expect(c.payload).toMatchObject({ title: c.title, summary: `Reset your token at ${LINK_REMOVED}, or ${LINK_REMOVED}. Details: ${ORIGIN}/v1/empire/triage/proposals.` });
      expect(JSON.stringify(c)).not.toContain('evil.example');
    });

    it('stays within the schema\'s bounds when a short link is replaced', () => {
      const c = checkIncident(incident({ title: `${'x'.repeat(190)} a.bc/d e.fg/h` }), context());
      expect(c.title.length).toBeLessThanOrEqual(200);
      expect(c.title).not.toContain('a.bc/d');
    });

    it('guards the postmortem seed: claims citing events beyond the evidence or naming unknown identifiers go, links are dropped', () => {
      const postmortemDraft = {
        title: 'Postmortem: web-a',
        sections: {
          summary: [
            { text: 'web-a surged.', eventIds: [IN_1] },
            { text: 'web-b saw it too.', eventIds: [OTHER_1] },
          ],
          timeline: [{ text: 'Then EVT_0001 arrived.', eventIds: [] }],
          impact: [{ text: `Runbook: ${PHISH}`, eventIds: [] }],
          rootCause: [],
          actionItems: [{ text: 'Check tenant acme-7.', eventIds: [] }],
        },
      };
      const c = checkIncident(incident({ postmortemDraft }), context({ known: new Set(['acme7']) }));
      expect(c.status).toBe('pending');
      expect((c.payload as { postmortemDraft: unknown }).postmortemDraft).toEqual({
        title: 'Postmortem: web-a',
        sections: {
          summary: [{ text: 'web-a surged.', eventIds: [IN_1] }],
          timeline: [],
          impact: [{ text: `Runbook: ${LINK_REMOVED}`, eventIds: [] }],
          rootCause: [],
          actionItems: [{ text: 'Check tenant acme-7.', eventIds: [] }],
        },
      });
    });
  });

  describe('dedupe key', () => {
    const flood = (tenant: string, numbers: string) =>
      checkIncident(incident({ toolset: 'honeypot', signal: 'liar-flood', title: `Liar flood: ${tenant} — ${numbers}` }), context()).dedupeKey;

    it('tells two liar floods of different tenants apart', () => {
      expect(flood('hp-a', '50 LIAR events')).toBe('incident:honeypot:liar-flood:liar flood: hp-a');
      expect(flood('hp-b', '50 LIAR events')).toBe('incident:honeypot:liar-flood:liar flood: hp-b');
    });

    it('is the same for the same toolset, signal and subject, whatever the numbers or the letter case', () => {
      expect(flood('hp-a', '50 LIAR events')).toBe(flood('hp-a', '900 LIAR events and 2 tarpits'));
      expect(flood('HP-A ', '50')).toBe(flood('hp-a', '50'));
    });

    it('differs by toolset and by signal for the same subject', () => {
      const key = (toolset: string, signal: IncidentItem['signal']) => checkIncident(incident({ toolset, signal, title: 'Subject — n' }), context()).dedupeKey;
      expect(new Set([key('web-a', 'rate-spike'), key('web-b', 'rate-spike'), key('web-a', 'other')]).size).toBe(3);
    });

    it('takes the whole title when it has no " — "', () => {
      expect(checkIncident(incident({ title: 'Something Odd' }), context()).dedupeKey).toBe('incident:web-a:rate-spike:something odd');
    });
  });
});

const windowFilters = {
  toolset: 'web-a',
  tenant: null,
  eventType: null,
  uaClass: null,
  fingerprintId: null,
  focalEventId: null,
  from: WINDOW_START.toISOString(),
  to: WINDOW_END.toISOString(),
};

function investigation(over: Partial<InvestigationItem> = {}, filters: Partial<InvestigationItem['filters']> = {}): InvestigationItem {
  return {
    kind: 'investigation',
    toolset: 'web-a',
    name: 'web-a: login.fail surge',
    rationale: ['one', 'two', 'three'],
    filters: { ...windowFilters, ...filters },
    evidenceEventIds: [IN_1],
    ...over,
  };
}

describe('checkInvestigation', () => {
  it('keeps a view over the window with evidence inside it as pending, keyed by its filters without from/to', () => {
    const c = checkInvestigation(investigation({ evidenceEventIds: [IN_1.toUpperCase()] }), context());
    const { from: _from, to: _to, ...scope } = windowFilters;
    expect(c).toEqual({
      kind: 'investigation',
      status: 'pending',
      toolset: 'web-a',
      title: 'web-a: login.fail surge',
      payload: { ...investigation(), evidenceEventIds: [IN_1] },
      backtest: null,
      dedupeKey: `investigation:${canonicalJson(scope)}`,
      autoRejectReason: null,
      evidenceEventIds: [IN_1],
    });
  });

  it('keys two views of the same filters over different windows alike, and views of different filters apart', () => {
    const key = (filters: Partial<InvestigationItem['filters']>) => checkInvestigation(investigation({}, filters), context()).dedupeKey;
    expect(key({ from: '2024-05-01T10:00:00Z', to: '2024-05-01T11:00:00Z' })).toBe(key({}));
    expect(key({ eventType: 'login.fail' })).not.toBe(key({}));
    expect(key({ focalEventId: IN_1 })).not.toBe(key({}));
  });

  const refusedFilters = 'invalid-filters: filters.from and filters.to must be ISO 8601 times with from before to';

  it('refuses from equal to to, and from after to', () => {
    expect(checkInvestigation(investigation({}, { to: windowFilters.from }), context())).toMatchObject({ status: 'auto-rejected', autoRejectReason: refusedFilters });
    expect(checkInvestigation(investigation({}, { from: windowFilters.to, to: windowFilters.from }), context()).autoRejectReason).toBe(refusedFilters);
    // The same instant spelled twice is still equal.
    expect(checkInvestigation(investigation({}, { from: '2024-05-01T13:45:00+02:00', to: '2024-05-01T11:45:00.000Z' }), context()).autoRejectReason).toBe(refusedFilters);
  });

  it('refuses times that are not ISO 8601 date-times with a zone, even when Date.parse reads them', () => {
    for (const from of ['2024-05-01 11:45:00Z', '2024-05-01', '2024-05-01T11:45:00', 'May 1, 2024 11:45 UTC', '1714563900000', 'yesterday', '2024-13-01T00:00:00Z', '2024-05-01T11:45:00.0000000000Z']) {
      expect(checkInvestigation(investigation({}, { from }), context()).autoRejectReason, from).toBe(refusedFilters);
    }
  });

  it('accepts the ISO spellings with or without seconds, with fractions, with an offset', () => {
    for (const from of ['2024-05-01T11:45Z', '2024-05-01T11:45:00Z', '2024-05-01T11:45:00.5Z', '2024-05-01T11:45:00.123456789Z', '2024-05-01T13:45:00+02:00', '2024-05-01T06:45:00-05:00']) {
      expect(checkInvestigation(investigation({}, { from }), context()).status, from).toBe('pending');
    }
  });

  it('checks the filters before the evidence', () => {
    expect(checkInvestigation(investigation({ evidenceEventIds: [UNKNOWN] }, { from: 'x' }), context()).autoRejectReason).toBe(refusedFilters);
  });

  it('refuses evidence the input did not show, or of another toolset', () => {
    expect(checkInvestigation(investigation({ evidenceEventIds: [UNKNOWN] }), context()).autoRejectReason).toBe(
      `evidence-not-in-input: 1 cited event id(s) are not among the event ids the run's input showed (${UNKNOWN})`,
    );
    expect(checkInvestigation(investigation({ evidenceEventIds: [IN_1, OTHER_1] }), context()).autoRejectReason).toMatch(/^evidence-other-toolset: 1 /);
    expect(checkInvestigation(investigation({ evidenceEventIds: [LINEAGE_OLD] }, { focalEventId: LINEAGE_OLD }), context()).status).toBe('pending');
  });

  it('checks the focal event like a citation, and filters.toolset against the proposal\'s', () => {
    expect(checkInvestigation(investigation({ evidenceEventIds: [IN_1] }, { focalEventId: OTHER_1 }), context()).autoRejectReason).toMatch(/^evidence-other-toolset: 1 /);
    expect(checkInvestigation(investigation({}, { focalEventId: UNKNOWN.toUpperCase() }), context()).autoRejectReason).toMatch(/^evidence-not-in-input: 1 /);
    expect(checkInvestigation(investigation({}, { toolset: 'web-b' }), context()).autoRejectReason).toBe("invalid-filters: filters.toolset must be the proposal's toolset (web-a) or null");
    expect(checkInvestigation(investigation({}, { toolset: null }), context()).status).toBe('pending');
  });

  it('drops links that leave this service from the name and the rationale', () => {
    const c = checkInvestigation(investigation({ name: `Open ${PHISH}`, rationale: ['one', `two: www.evil.example`, `three: ${ORIGIN}/ui`] }), context());
    expect(c.payload).toMatchObject({ name: `Open ${LINK_REMOVED}`, rationale: ['one', `two: ${LINK_REMOVED}`, `three: ${ORIGIN}/ui`] });
    expect(c.title).toBe(`Open ${LINK_REMOVED}`);
  });

  it('lets an investigation cite nothing', () => {
    expect(checkInvestigation(investigation({ evidenceEventIds: [] }), context()).status).toBe('pending');
  });
});

// ——— rules ———

const LOOKBACK_DAYS = 2;
const HISTORY_FROM = new Date('2024-04-29T12:00:00.000Z');
const hourIso = (h: number) => new Date(HISTORY_FROM.getTime() + h * 3_600_000).toISOString();
/** web-a: 5 an hour, 60 in hours 20 and 21; an incident opened at hour 22, resolved at 24. */
const webA: ToolsetHistory = { toolset: 'web-a', hours: Array.from({ length: LOOKBACK_DAYS * 24 }, (_, i) => (i === 20 || i === 21 ? 60 : 5)) };
const incidents: ResolvedIncident[] = [{ id: 'inc-1', toolset: 'web-a', openedAt: hourIso(22), resolvedAt: hourIso(24), severity: 'major' }];

function ruleContext(existing: Record<string, unknown[]> = {}): RuleContext {
  return {
    history: new Map([['web-a', webA]]),
    historyFrom: HISTORY_FROM,
    lookbackDays: LOOKBACK_DAYS,
    toolsets: new Set(['web-a', 'web-b']),
    incidents,
    existing: new Map(Object.entries(existing).map(([toolset, predicates]) => [toolset, new Set(predicates.map((p) => canonicalPredicate(p)!))])),
    linkOrigin: ORIGIN,
  };
}

const rule = (predicate: Record<string, unknown>, toolset = 'web-a'): RuleItem => ({ kind: 'alert-rule', toolset, name: `${toolset}: rule`, predicate: predicate as RuleItem['predicate'], rationale: 'Because.' });
const count = (n: number, windowMinutes = 60) => ({ kind: 'empire_count_gte', count: n, windowMinutes });
const join = (over: Record<string, unknown> = {}) => ({ kind: 'cross_toolset_join', otherToolset: 'web-b', windowMinutes: 30, ...over });

describe('checkRule', () => {
  it('keeps a valid predicate as pending, normalized, backtested, keyed by toolset and canonical predicate', () => {
    const c = checkRule(rule(count(50)), ruleContext());
    expect(c).toMatchObject({
      kind: 'alert-rule',
      status: 'pending',
      toolset: 'web-a',
      title: 'web-a: rule',
      autoRejectReason: null,
      evidenceEventIds: [],
      dedupeKey: `alert-rule:web-a:${canonicalJson(count(50))}`,
      payload: rule(count(50)),
    });
    // Hours 20 and 21 reach 50 (a one-hour window is quiet for one hour only), both in the day before the incident;
    // the first firing is evaluated at the end of hour 20, an hour before the opening.
    expect(c.backtest).toEqual({ method: 'hourly-count', lookbackDays: LOOKBACK_DAYS, TP: 2, FP: 0, meanLeadTimeSec: 3600, incidents: 1, caught: 1, firings: 2 });
  });

  it('backtests a toolset without history as all zeros, and a predicate hourly counts cannot replay as unsupported', () => {
    expect(checkRule(rule(count(50), 'web-new'), ruleContext()).backtest).toMatchObject({ method: 'hourly-count', TP: 0, FP: 0, firings: 0, incidents: 0 });
    expect(checkRule(rule(join()), ruleContext()).backtest).toMatchObject({ method: 'unsupported', TP: 0, FP: 0, firings: 0 });
  });

  const invalid = (predicate: Record<string, unknown>, toolset = 'web-a') => {
    const c = checkRule(rule(predicate, toolset), ruleContext());
    expect(c).toMatchObject({ status: 'auto-rejected', dedupeKey: null, backtest: null, payload: rule(predicate, toolset) });
    return c.autoRejectReason!;
  };

  it('refuses a kind outside the empire union, a missing member, a wrong type or an extra member', () => {
    expect(invalid({ kind: 'honeypot_count_gte', count: 5, windowMinutes: 60 })).toMatch(/^invalid-predicate: the predicate is not one of the empire predicates \(.+\)$/);
    expect(invalid({ kind: 'empire_count_gte', count: 5 })).toMatch(/^invalid-predicate: the predicate is not one of the empire predicates/);
    expect(invalid({ kind: 'empire_count_gte', count: 1.5, windowMinutes: 60 })).toMatch(/^invalid-predicate: the predicate is not one of the empire predicates/);
    expect(invalid({ ...count(5), threshold: 3 })).toMatch(/^invalid-predicate: the predicate is not one of the empire predicates/);
  });

  it('refuses values out of the union\'s bounds, with the sentence rule creation would answer', () => {
    expect(invalid(count(0))).toBe('invalid-predicate: predicate.count must be a whole number from 1 to 100000000 (got 0).');
    expect(invalid(count(100_000_001))).toBe('invalid-predicate: predicate.count must be a whole number from 1 to 100000000 (got 100000001).');
    expect(invalid(count(5, 4))).toBe('invalid-predicate: predicate.windowMinutes must be a whole number from 5 to 1440 minutes (got 4).');
    expect(invalid(count(5, 1441))).toBe('invalid-predicate: predicate.windowMinutes must be a whole number from 5 to 1440 minutes (got 1441).');
    expect(invalid({ ...count(5), eventType: '' })).toBe('invalid-predicate: predicate.eventType must be 1 to 128 characters long (got 0).');
    expect(invalid(join({ minTenants: 0 }))).toBe('invalid-predicate: predicate.minTenants must be a whole number from 1 to 10000 (got 0).');
    expect(invalid(join({ otherToolset: 'web-a' }))).toMatch(/^invalid-predicate: predicate.otherToolset must name another toolset than the rule's own \(web-a\)/);
    expect(invalid(join({ otherToolset: '9x' }))).toMatch(/^invalid-predicate: predicate.otherToolset must be a toolset name/);
    expect(invalid({ kind: 'graph_lag_gte', lagSec: 0 })).toBe('invalid-predicate: predicate.lagSec must be a whole number from 1 to 604800 seconds (got 0).');
    expect(invalid({ kind: 'graph_lag_gte', lagSec: 60, nodeKind: 'Planet' })).toMatch(/^invalid-predicate: predicate.nodeKind must be one of: /);
  });

  it('drops links that leave this service from the name and the rationale', () => {
    const c = checkRule({ ...rule(count(50)), name: `web-a: see ${PHISH}`, rationale: `Backtested; runbook at //evil.example/rb and ${ORIGIN}/ui/triage.` }, ruleContext());
    expect(c).toMatchObject({ status: 'pending', title: `web-a: see ${LINK_REMOVED}` });
    expect(c.payload).toMatchObject({ name: `web-a: see ${LINK_REMOVED}`, rationale: `Backtested; runbook at ${LINK_REMOVED} and ${ORIGIN}/ui/triage.` });
  });

  it('accepts the bounds themselves', () => {
    for (const p of [count(1, 5), count(100_000_000, 1440), join({ minTenants: 10_000 }), { kind: 'graph_lag_gte', lagSec: 604_800 }]) {
      expect(checkRule(rule(p), ruleContext()).status).toBe('pending');
    }
  });

  it('quotes at most 140 characters of a long name, so the refusal stays within 300', () => {
    const reason = invalid(join({ otherToolset: `a${'b'.repeat(300)}` }));
    expect(reason).toContain(`"a${'b'.repeat(139)}"`);
    expect(reason.length).toBeLessThanOrEqual(300);
  });

  it('refuses a predicate an enabled rule of the toolset already has, keeping its key and backtest', () => {
    const c = checkRule(rule(count(50)), ruleContext({ 'web-a': [count(50)] }));
    expect(c).toMatchObject({ status: 'auto-rejected', autoRejectReason: 'duplicates-existing-rule: an enabled alert rule of the toolset already has this predicate', dedupeKey: `alert-rule:web-a:${canonicalJson(count(50))}` });
    expect(c.backtest).toMatchObject({ method: 'hourly-count', TP: 2 });
    // Another toolset's rule, or another predicate, is no duplicate.
    expect(checkRule(rule(count(50)), ruleContext({ 'web-b': [count(50)] })).status).toBe('pending');
    expect(checkRule(rule(count(51)), ruleContext({ 'web-a': [count(50)] })).status).toBe('pending');
  });

  it('compares and keys the normalized predicate: the minTenants default and member order do not matter', () => {
    const bare = checkRule(rule(join()), ruleContext());
    const explicit = checkRule(rule(join({ minTenants: 1 })), ruleContext());
    const reordered = checkRule(rule({ minTenants: 1, windowMinutes: 30, otherToolset: 'web-b', kind: 'cross_toolset_join' }), ruleContext());
    expect(bare.dedupeKey).toBe(`alert-rule:web-a:${canonicalJson(join({ minTenants: 1 }))}`);
    expect(explicit.dedupeKey).toBe(bare.dedupeKey);
    expect(reordered.dedupeKey).toBe(bare.dedupeKey);
    expect(bare.payload).toMatchObject({ predicate: { ...join(), minTenants: 1 } });
    expect(checkRule(rule(join()), ruleContext({ 'web-a': [join({ minTenants: 1 })] })).autoRejectReason).toMatch(/^duplicates-existing-rule/);
    expect(checkRule(rule(join({ minTenants: 1 })), ruleContext({ 'web-a': [join()] })).autoRejectReason).toMatch(/^duplicates-existing-rule/);
    expect(checkRule(rule(join({ minTenants: 2 })), ruleContext({ 'web-a': [join()] })).status).toBe('pending');
  });
});

describe('canonicalPredicate', () => {
  it('is the canonical JSON of the normalized predicate', () => {
    expect(canonicalPredicate(join())).toBe('{"kind":"cross_toolset_join","minTenants":1,"otherToolset":"web-b","windowMinutes":30}');
    expect(canonicalPredicate({ windowMinutes: 60, count: 5, kind: 'empire_count_gte' })).toBe('{"count":5,"kind":"empire_count_gte","windowMinutes":60}');
  });

  it('is null for what is not in the union', () => {
    expect(canonicalPredicate({ kind: 'bogus' })).toBeNull();
    expect(canonicalPredicate({ ...count(5), extra: true })).toBeNull();
    expect(canonicalPredicate(null)).toBeNull();
    expect(canonicalPredicate('empire_count_gte')).toBeNull();
  });

  it('reads the shape only: a stored predicate out of bounds still has a canonical form', () => {
    expect(canonicalPredicate(count(0))).toBe('{"count":0,"kind":"empire_count_gte","windowMinutes":60}');
  });
});

describe('refusedCandidate', () => {
  it('refuses a whole answer (index -1) or one item, with nothing of it kept but the reason', () => {
    expect(refusedCandidate('incident', 'malformed-output: x', -1, 'incident-classifier')).toEqual({
      kind: 'incident',
      status: 'auto-rejected',
      toolset: null,
      title: 'Unreadable answer of incident-classifier',
      payload: null,
      backtest: null,
      dedupeKey: null,
      autoRejectReason: 'malformed-output: x',
      evidenceEventIds: [],
    });
    expect(refusedCandidate('alert-rule', 'schema-violation: /name Expected required property', 0, 'rule-proposer')).toMatchObject({
      kind: 'alert-rule',
      title: 'Unreadable proposal #1 of rule-proposer',
      autoRejectReason: 'schema-violation: /name Expected required property',
    });
    expect(refusedCandidate('investigation', 'r', 2, 'investigation-proposer').title).toBe('Unreadable proposal #3 of investigation-proposer');
  });
});

describe('properties', () => {
  /** Where a cited id stands against the input, for a proposal of web-a. */
  const placements = ['own', 'other-toolset', 'honeypot', 'not-shown'] as const;
  type Placement = (typeof placements)[number];

  /** One id per (placement, index), cited in any case. */
  function built(cited: { placement: Placement; upper: boolean }[]) {
    const shown = new Map<string, string>();
    const ids = cited.map(({ placement, upper }, i) => {
      const id = `${String(i).padStart(8, '0')}-0000-4000-8000-${placements.indexOf(placement).toString().padStart(12, '0')}`;
      const toolset = { own: 'web-a', 'other-toolset': 'web-b', honeypot: 'honeypot', 'not-shown': null }[placement];
      if (toolset !== null) shown.set(id, toolset);
      return upper ? id.toUpperCase() : id;
    });
    return { ids, ctx: context({ shown }) };
  }

  const citations = fc.array(fc.record({ placement: fc.constantFrom(...placements), upper: fc.boolean() }), { maxLength: 8 });
  const reasonOf = (cited: { placement: Placement }[]) =>
    cited.some((x) => x.placement === 'not-shown') ? /^evidence-not-in-input: / : cited.some((x) => x.placement !== 'own') ? /^evidence-other-toolset: / : null;

  it('an incident is pending iff it cites something (or is a silence), every cited id was shown for its toolset, and its severity holds', () => {
    fc.assert(
      fc.property(
        citations,
        fc.constantFrom('rate-spike', 'silence', 'liar-flood', 'tarpit', 'cross-toolset', 'other') as fc.Arbitrary<IncidentItem['signal']>,
        fc.constantFrom('critical', 'major', 'minor') as fc.Arbitrary<IncidentItem['severity']>,
        fc.constantFrom('major', 'minor') as fc.Arbitrary<'major' | 'minor'>,
        (cited, signal, severity, max) => {
          const { ids, ctx } = built(cited);
          const c = checkIncident(incident({ signal, severity, evidenceEventIds: ids }), { ...ctx, severityCeiling: () => ({ max, why: 'x' }) });
          const noEvidence = cited.length === 0 && signal !== 'silence';
          const evidence = reasonOf(cited);
          const severityOk = severity === 'minor' || (severity === 'major' && max === 'major');
          const expectPending = !noEvidence && evidence === null && severityOk;
          expect(c.status).toBe(expectPending ? 'pending' : 'auto-rejected');
          expect(c.autoRejectReason === null).toBe(expectPending);
          if (!expectPending) expect(c.autoRejectReason).toMatch(noEvidence ? /^no-evidence: / : (evidence ?? /^severity-policy: /));
          expect(c.evidenceEventIds.every((id) => id === id.toLowerCase())).toBe(true);
        },
      ),
    );
  });

  it('an investigation is pending iff its filters are a forward ISO range and every cited id was shown for its toolset', () => {
    const instants = fc.constantFrom('2024-05-01T11:45:00Z', '2024-05-01T12:00:00.000Z', '2024-05-01T13:45:00+02:00', '2024-05-01T11:50Z', '2024-05-01 11:50:00Z', 'soon');
    fc.assert(
      fc.property(citations, instants, instants, (cited, from, to) => {
        const { ids, ctx } = built(cited);
        const c = checkInvestigation(investigation({ evidenceEventIds: ids }, { from, to }), ctx);
        const iso = (s: string) => (s.includes('T') ? Date.parse(s) : Number.NaN);
        const filtersOk = iso(from) < iso(to);
        const expectPending = filtersOk && reasonOf(cited) === null;
        expect(c.status).toBe(expectPending ? 'pending' : 'auto-rejected');
        if (!filtersOk) expect(c.autoRejectReason).toMatch(/^invalid-filters: /);
      }),
    );
  });

  it('a rule is pending iff its predicate passes the union and its bounds and no enabled rule of the toolset has it', () => {
    const predicate = fc.oneof(
      fc.record({ kind: fc.constant('empire_count_gte'), count: fc.integer({ min: -1, max: 200 }), windowMinutes: fc.integer({ min: 3, max: 1500 }) }),
      fc.record({ kind: fc.constant('cross_toolset_join'), otherToolset: fc.constantFrom('web-a', 'web-b'), windowMinutes: fc.constantFrom(30, 60), minTenants: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }) }, { requiredKeys: ['kind', 'otherToolset', 'windowMinutes'] }),
      fc.record({ kind: fc.constantFrom('graph_lag_gte', 'nope'), lagSec: fc.integer({ min: 0, max: 100 }) }),
    );
    fc.assert(
      fc.property(predicate, fc.array(predicate, { maxLength: 3 }), (p, existing) => {
        const raw = JSON.parse(JSON.stringify(p)) as Record<string, unknown>;
        const ctx = ruleContext({ 'web-a': existing.map((e) => JSON.parse(JSON.stringify(e)) as unknown).filter((e) => canonicalPredicate(e) !== null) });
        const c = checkRule(rule(raw), ctx);
        const windowOk = (w: unknown) => typeof w === 'number' && w >= 5 && w <= 1440;
        const valid =
          raw['kind'] === 'empire_count_gte'
            ? (raw['count'] as number) >= 1 && windowOk(raw['windowMinutes'])
            : raw['kind'] === 'cross_toolset_join'
              ? raw['otherToolset'] !== 'web-a' && (raw['minTenants'] === undefined || (raw['minTenants'] as number) >= 1)
              : raw['kind'] === 'graph_lag_gte' && (raw['lagSec'] as number) >= 1;
        const duplicate = valid && ctx.existing.get('web-a')!.has(canonicalPredicate(raw)!);
        expect(c.status).toBe(valid && !duplicate ? 'pending' : 'auto-rejected');
        expect(c.autoRejectReason?.split(':')[0] ?? null).toBe(!valid ? 'invalid-predicate' : duplicate ? 'duplicates-existing-rule' : null);
        expect(c.dedupeKey).toBe(valid ? `alert-rule:web-a:${canonicalPredicate(raw)}` : null);
      }),
    );
  });
});

describe('a proposal speaks of its own toolset only', () => {
  const toolsets = new Set(['web-a', 'web-b', 'web-b-2', 'honeypot']);

  it('replaces every other toolset of the input, in any case, as a whole name only', () => {
    expect(withoutOtherToolsets('web-a, WEB-B and web-b-2 share tenant web-bx; see honeypot', 'web-a', toolsets)).toBe(
      `web-a, ${OTHER_TOOLSET} and ${OTHER_TOOLSET} share tenant web-bx; see honeypot`,
    );
    expect(withoutOtherToolsets('nothing to hide', 'web-a', new Set())).toBe('nothing to hide');
    // Names are matched as text, not as patterns.
    expect(withoutOtherToolsets('a.b and axb', 'web-a', new Set(['a.b']))).toBe(`${OTHER_TOOLSET} and axb`);
  });

  it('in an incident\'s title, summary and postmortem seed, an investigation\'s name and rationale, and a rule\'s name and rationale', () => {
    const seed = { title: 'Postmortem of web-b', sections: { summary: [{ text: 'Tenant t reached web-a and web-b.', eventIds: [IN_1] }], timeline: [], impact: [], rootCause: [], actionItems: [] } };
    const c = checkIncident(incident({ title: 'Tenant t — web-a and web-b', summary: 'also in WEB-B', evidenceEventIds: [IN_1], postmortemDraft: seed }), context());
    expect(c.status).toBe('pending');
    expect(c.title).toBe(`Tenant t — web-a and ${OTHER_TOOLSET}`);
    expect(c.payload).toMatchObject({
      summary: `also in ${OTHER_TOOLSET}`,
      postmortemDraft: { title: `Postmortem of ${OTHER_TOOLSET}`, sections: { summary: [{ text: `Tenant t reached web-a and ${OTHER_TOOLSET}.` }] } },
    });
    const view = checkInvestigation(investigation({ name: 'web-a next to web-b', rationale: ['web-b too', 'two', 'three'] }), context());
    expect(view.payload).toMatchObject({ name: `web-a next to ${OTHER_TOOLSET}`, rationale: [`${OTHER_TOOLSET} too`, 'two', 'three'] });
    const r = checkRule({ ...rule(count(50)), name: 'web-a like web-b', rationale: 'web-b has one' }, ruleContext());
    expect(r.payload).toMatchObject({ name: `web-a like ${OTHER_TOOLSET}`, rationale: `${OTHER_TOOLSET} has one` });
  });
});
