import { describe, expect, it } from 'vitest';
import { type Claim, type PostmortemDraft } from '../agents/types.ts';
import { LINK_REMOVED } from '../../../platform/llm/links.ts';
import { type DraftGuard, identifiersIn, identifierTokens, idsInText, stripDraft, TECHNICAL_TERMS } from './strip.ts';

// The postmortem guard's reading of identifiers (strip.ts), form by form: each kind of token that is
// not an id (times, units, versions, exponents, terms of the trade) at its edges, and the near
// misses that are ids; uuids and claim ids in every spelling; what `known` holds.

const L1 = 'aaaaaaaa-0000-4000-8000-000000000001';
const L2 = 'aaaaaaaa-0000-4000-8000-000000000002';
const F1 = 'ffffffff-0000-4000-8000-000000000001';
const ORIGIN = 'https://observatory.example.com';
const FALLBACK = 'Postmortem: the incident';
const guard = (known: Iterable<string> = []): DraftGuard => ({ citable: new Set([L1, L2]), known: new Set(known), linkOrigin: ORIGIN, fallbackTitle: FALLBACK });
const claim = (text: string, eventIds: string[] = []): Claim => ({ text, eventIds });
const draft = (claims: Claim[], title = 'Postmortem'): PostmortemDraft => ({ title, sections: { summary: claims, timeline: [], impact: [], rootCause: [], actionItems: [] } });

/** The id-shaped tokens of `text`, as written (lowercased). */
const tokens = (text: string) => identifiersIn(text).tokens.map((t) => t.written);

describe('times are not identifiers', () => {
  it('takes no ISO 8601 date-time, in any of its shapes, for an id', () => {
    const times = [
      '2026-11-26T10',
      '2026-11-26T10Z',
      '2026-11-26t10:30z',
      '2026-11-26T10:30',
      '2026-11-26T10:30:00',
      '2026-11-26T10:30:00Z',
      '2026-11-26T10:30:00.5Z',
      '2026-11-26T10:30:00.123456789Z',
      '2026-11-26T10:30:00.123',
      '2026-11-26T10:30:00-05:00',
      '2026-11-26T10:30:00-0500',
      '2026-11-26T10:30:00-05',
      '2026-11-26T10:30:00+02:00',
      '2026-11-26Z',
      '2026-11-26-05:00',
      '2026-11-26-0500',
      '10:30Z',
      '9:30z',
      '10:30:00Z',
      '10:30:00.1234',
      '10:30:00.123456789',
      '10:30:00.5z',
    ];
    for (const time of times) expect(tokens(`at ${time} it began`), time).toEqual([]);
  });

  it('takes a time glued to other letters or digits for an id', () => {
    expect(tokens('ab1-2026-11-26T10:30Z')).toEqual(['ab1-2026-11-26t10:30z']);
    expect(tokens('2026-11-26T10:30:00Z-abc1')).toEqual(['2026-11-26t10:30:00z-abc1']);
    expect(tokens('2026-11-26T10:30:00.1234567890Z')).toEqual(['2026-11-26t10:30:00.1234567890z']);
    expect(tokens('10:30:00.1234567890')).toEqual(['10:30:00.1234567890']);
    expect(tokens('x10:30Z')).toEqual(['x10:30z']);
    expect(tokens('100:30Z')).toEqual(['100:30z']);
    expect(tokens('2026-11-26T10:30Y')).toEqual(['2026-11-26t10:30y']);
  });
});

describe('numbers', () => {
  it('takes a number of 10 digits or more for an id, and a shorter one not', () => {
    expect(tokens('1234567890 and 123456789 and 12345678901')).toEqual(['1234567890', '12345678901']);
    expect(tokens('12345-67890')).toEqual(['12345-67890']);
    expect(tokens('1,234,567,890')).toEqual([]);
  });

  it('does not take a number with a unit or an ordinal, or several, for an id', () => {
    for (const word of ['15min', '1h30m', '2nd', '3rd', '1st', '4th', '250ms', '5xx', '3x', '10k', '2gb', '1H30M', '24h', '7d', '2w']) expect(tokens(word), word).toEqual([]);
  });

  it('takes a unit glued to other letters for an id', () => {
    expect(tokens('x5m and 5mx1 and evt5m and 5mfoo')).toEqual(['x5m', '5mx1', 'evt5m', '5mfoo']);
  });

  it('does not take numbers in exponent notation for ids, and takes near misses', () => {
    for (const word of ['5e-324', '12e5', '1.25e10', '1.5E-3', '25E10']) expect(tokens(word), word).toEqual([]);
    expect(tokens('x5e3 and 5e3x and e5 and 5e and 1.e5')).toEqual(['x5e3', '5e3x', 'e5', '5e', '1.e5']);
  });
});

describe('versions', () => {
  it('does not take v1 … v999.999.999 for ids', () => {
    for (const word of ['v1', 'V2', 'v12', 'v123', 'v1.22', 'v1.2.0', 'v10.200.3']) expect(tokens(`see ${word}`), word).toEqual([]);
  });

  it('takes near misses for ids', () => {
    expect(tokens('xv1 v1x v1234 v1.2.3.4 w1 v1.2345')).toEqual(['xv1', 'v1x', 'v1234', 'v1.2.3.4', 'w1', 'v1.2345']);
  });
});

describe('terms of the trade', () => {
  it('takes none of TECHNICAL_TERMS for an id, whatever its case or separators', () => {
    // Listed here, not read from the set: a term missing from the set must fail this test.
    const terms = ['ja3', 'ja3s', 'ja4', 'ja4h', 'ipv4', 'ipv6', 'sha1', 'sha256', 'sha512', 'md5', 'http2', 'http3', 'h2', 'h3', 'tls12', 'tls13', 'utf8', 'utf16', 'x509', 'base64', 'p50', 'p90', 'p95', 'p99', 'p999'];
    expect(new Set(terms)).toEqual(TECHNICAL_TERMS);
    for (const term of terms) {
      expect(tokens(term), term).toEqual([]);
      expect(tokens(term.toUpperCase()), term).toEqual([]);
    }
    expect(tokens('SHA-256, HTTP/2, TLS1.3, IPv6, UTF-8, X.509')).toEqual([]);
  });

  it('takes a term with more digits for an id', () => {
    expect(tokens('ja5 sha257 p96')).toEqual(['ja5', 'sha257', 'p96']);
  });
});

describe('words', () => {
  it('takes no word without a digit, and no short number, for an id', () => {
    expect(tokens('Rate spike: web-a received many events; crawl.page and login#fail. 42 of 100, 3.5')).toEqual([]);
  });

  it('reads a token joined by - _ . : # as one, letters and digits of any script', () => {
    expect(tokens('evt-0001 EVT_0042 a.b.3 x:9 ab#7 ид7 ٣abc')).toEqual(['evt-0001', 'evt_0042', 'a.b.3', 'x:9', 'ab#7', 'ид7', '٣abc']);
    expect(identifiersIn('EVT-00_1').tokens).toEqual([{ written: 'evt-00_1', folded: 'evt001' }]);
  });

  it('does not join across other punctuation or doubled separators', () => {
    expect(tokens('evt/0001 evt--0001 evt,1')).toEqual([]);
  });

  it('reads past the place of a uuid: the text either side of it is not one word', () => {
    expect(identifiersIn(`evt${L1}2`)).toEqual({ uuids: [L1], tokens: [] });
    expect(identifierTokens(`evt${L1}2`)).toEqual(new Set([L1, 'evt', '2']));
  });
});

describe('uuids in text', () => {
  it('reads a uuid with any one of its hyphens left out', () => {
    const groups = F1.split('-');
    for (let i = 1; i < groups.length; i++) {
      const text = groups.slice(0, i).join('-') + groups.slice(i).join('-');
      expect(idsInText(`see ${text}`), text).toEqual([F1]);
    }
  });

  it('needs every hex digit of each group', () => {
    expect(idsInText('ffffffff-0000-4000-8000-00000000001')).toEqual([]);
    expect(idsInText('fffffff-0000-4000-8000-000000000001')).toEqual([]);
    expect(idsInText('gfffffff-0000-4000-8000-000000000001')).toEqual([]);
  });
});

describe('claim eventIds', () => {
  it('reads a lineage uuid in any spelling as the lineage id', () => {
    const bare = L1.replaceAll('-', '');
    const groups = L1.split('-');
    const spellings = [L1, L1.toUpperCase(), bare, `{${L1}}`, `{${bare}}`, `urn:uuid:${L1}`, `URN:UUID:${bare}`, `urn:uuid:{${L1}}`, `{${L1}`, `${L1}}`, ` ${L1} `, `\u200b${L1}`, L1.replace('aaaaaaaa', 'ａａａａａａａａ')];
    for (let i = 1; i < groups.length; i++) spellings.push(groups.slice(0, i).join('-') + groups.slice(i).join('-'));
    for (const id of spellings) {
      const out = stripDraft(draft([claim('x', [id])]), guard());
      expect(out.strippedClaims, id).toBe(0);
      expect(out.draft.sections.summary, id).toEqual([claim('x', [L1])]);
      expect(out.citedEventIds, id).toEqual([L1]);
    }
  });

  it('does not read a uuid out of a longer id: that id is foreign', () => {
    for (const id of [`x${L1}`, `${L1}x`, `${L1}0`, `urn:${L1}`, `{{${L1}}`]) {
      const out = stripDraft(draft([claim('x', [id])]), guard());
      expect(out.strippedClaims, id).toBe(1);
      expect(out.strippedEventIds, id).toEqual([id.toLowerCase()]);
    }
  });
});

describe('identifierTokens (the input\'s identifiers)', () => {
  it('reads strings and numbers anywhere in the input, keys left out', () => {
    const value = { lineage: [{ eventId: L1.toUpperCase(), eventType: 'replay of EVT-0001', count: 1_700_000_000_123, ratio: 1.5 }], note: null, flag: true, gone: undefined, nested: [[`id ${F1.replaceAll('-', '')}`]] };
    expect(identifierTokens(value)).toEqual(new Set([L1, 'replay', 'of', 'evt0001', '1700000000123', '15', F1, 'id']));
  });

  it('adds to the set it is given', () => {
    const into = new Set(['x']);
    expect(identifierTokens('a-1', into)).toBe(into);
    expect(into).toEqual(new Set(['x', 'a1']));
    expect(identifierTokens(42)).toEqual(new Set(['42']));
    expect(identifierTokens(null)).toEqual(new Set());
  });

  it('keeps a claim naming a known identifier in another spelling, and only that one', () => {
    const known = identifierTokens({ eventType: 'evt-0001' });
    expect(stripDraft(draft([claim('Then EVT_0001 came.')]), guard(known)).strippedClaims).toBe(0);
    expect(stripDraft(draft([claim('Then EVT_0002 came.')]), guard(known))).toMatchObject({ strippedClaims: 1, strippedEventIds: ['evt_0002'] });
  });
});

describe('stripDraft', () => {
  it('counts each removed claim once and keeps the order of the others', () => {
    const out = stripDraft(draft([claim('a'), claim('b', [F1]), claim('c evt-9'), claim('d', [L1])]), guard());
    expect(out.strippedClaims).toBe(2);
    expect(out.draft.sections.summary).toEqual([claim('a'), claim('d', [L1])]);
    expect(out.strippedEventIds).toEqual(['evt-9', F1]);
  });

  it('lists a foreign id of the text as written, lowercased, and a foreign eventId canonical', () => {
    const out = stripDraft(draft([claim('See EVT-0001.', [F1.toUpperCase().replaceAll('-', '')])]), guard());
    expect(out.strippedEventIds).toEqual(['evt-0001', F1]);
  });

  it('reads the origin of a link to the service as a break between words', () => {
    const out = stripDraft(draft([claim(`Open ${ORIGIN}/r/evt-${ORIGIN}1 now.`)]), guard());
    expect(out.strippedClaims).toBe(0);
    expect(out.draft.sections.summary).toEqual([claim(`Open ${ORIGIN}/r/evt-${ORIGIN}1 now.`)]);
  });

  it('does not read ids in a dropped link', () => {
    const out = stripDraft(draft([claim(`See https://evil.example/evt-0001/${F1} now.`)], `T https://evil.example/${F1}`), guard());
    expect(out).toMatchObject({ strippedClaims: 0, strippedEventIds: [] });
    expect(out.draft.sections.summary).toEqual([claim(`See ${LINK_REMOVED} now.`)]);
    expect(out.draft.title).toBe(`T ${LINK_REMOVED}`);
  });

  it('clips a kept claim that dropping links made longer than a claim may be', () => {
    const text = `${'x'.repeat(990)} www.e.co`;
    const [kept] = stripDraft(draft([claim(text)]), guard()).draft.sections.summary;
    expect(kept!.text).toHaveLength(1000);
    expect(kept!.text).toBe(`${'x'.repeat(990)} ${LINK_REMOVED}`.slice(0, 999) + '…');
  });

  it('drops foreign links from the fallback title too', () => {
    const out = stripDraft(draft([], 'About evt-7'), { ...guard(), fallbackTitle: 'Postmortem, see www.evil.example/x' });
    expect(out.draft.title).toBe(`Postmortem, see ${LINK_REMOVED}`);
    expect(out.strippedEventIds).toEqual(['evt-7']);
  });

  it('keeps a title without foreign ids, links dropped', () => {
    expect(stripDraft(draft([], `Postmortem ${L1} 2026-11-26T10:30Z`), guard()).draft.title).toBe(`Postmortem ${L1} 2026-11-26T10:30Z`);
  });
});
