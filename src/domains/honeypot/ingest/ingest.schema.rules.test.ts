import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../platform/errors.ts';
import { buildValidatorFactory } from '../../../platform/http/validation.ts';

// The limits of the honeypot ingest body (docs/honeypot/README.md, "Ingest") as the server's request
// validator applies them, the descriptions that tell clients those limits, and the refusals of
// `parseIngestBody` (the test event's path). The schemas are imported inside each test, so that a
// schema broken at load fails these tests (a failure at import would fail only the collection of
// the files that import it).

async function validators() {
  const { IngestEvent, IngestBody, MAX_EVENTS_PER_REQUEST, parseIngestBody } = await import('./service.ts');
  const factory = buildValidatorFactory()({}, {});
  const compile = (schema: unknown) => factory({ schema: schema as never, method: 'POST', url: '/ingest', httpPart: 'body' }) as (data: unknown) => boolean;
  return { event: compile(IngestEvent), body: compile(IngestBody), IngestEvent, MAX_EVENTS_PER_REQUEST, parseIngestBody };
}

const minimal = { path: '/', ip: '203.0.113.9' };
const full = {
  id: 'edge-1',
  ts: '2026-11-23T10:00:00Z',
  method: 'post',
  path: '/honeypot/topics/x',
  query: 'a=1',
  ua: 'Mozilla/5.0',
  ip: '203.0.113.9',
  ja4: 't13d1516h2_8daaf6152771_02713d6af862',
  asn: 4294967295,
  country: 'DE',
  referer: 'https://example.org/',
  headers: { accept: 'text/html', 'x-forwarded-for-2': 'y' },
};

describe('the ingest event schema', () => {
  it('accepts a minimal and a complete event, and every member at its bound', async () => {
    const { event } = await validators();
    expect(event({ ...minimal })).toBe(true);
    expect(event({ ...full })).toBe(true);
    const atBounds = {
      id: 'x'.repeat(128),
      method: 'A'.repeat(16),
      path: '/'.repeat(2048),
      query: 'q'.repeat(4096),
      ua: 'u'.repeat(2048),
      ip: 'i'.repeat(64),
      ja4: 'j'.repeat(64),
      asn: 0,
      referer: 'r'.repeat(2048),
      headers: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`h-${i}`, i === 0 ? 'v'.repeat(8192) : ''])),
    };
    expect(event(atBounds)).toBe(true);
    expect(event({ ...minimal, id: 'x', ip: '::', ua: '', query: '', ja4: '', referer: '' })).toBe(true);
    expect(event({ ...minimal, query: null, ja4: null, referer: null, asn: null, country: null })).toBe(true);
    expect(event({ ...minimal, headers: { [`${'a'.repeat(63)}-`]: 'v' } })).toBe(true);
  });

  it('refuses each member outside its bounds', async () => {
    const { event } = await validators();
    const refused = [
      { ...minimal, id: '' },
      { ...minimal, id: 'x'.repeat(129) },
      { ...minimal, ts: 'yesterday' },
      { ...minimal, ts: '2026-11-23' },
      { ...minimal, method: 'G3T' },
      { ...minimal, method: '' },
      { ...minimal, method: 'A'.repeat(17) },
      { ...minimal, path: '' },
      { ...minimal, path: '/'.repeat(2049) },
      { ...minimal, query: 'q'.repeat(4097) },
      { ...minimal, ua: 'u'.repeat(2049) },
      { ...minimal, ip: '1' },
      { ...minimal, ip: 'i'.repeat(65) },
      { ...minimal, ja4: 'j'.repeat(65) },
      { ...minimal, asn: -1 },
      { ...minimal, asn: 4294967296 },
      { ...minimal, asn: 1.5 },
      { ...minimal, country: 'de' },
      { ...minimal, referer: 'r'.repeat(2049) },
      { ...minimal, headers: { accept: 'v'.repeat(8193) } },
      { ...minimal, headers: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`h-${i}`, ''])) },
      { ...minimal, headers: { accept: 1 } },
      { path: '/' },
      { ip: '203.0.113.9' },
    ];
    for (const candidate of refused) expect({ candidate, valid: event(candidate) }).toEqual({ candidate, valid: false });
  });

  it('fills in GET for a missing method', async () => {
    const { event } = await validators();
    const sent: Record<string, unknown> = { ...minimal };
    expect(event(sent)).toBe(true);
    expect(sent.method).toBe('GET');
  });

  it('takes 1 to 500 events', async () => {
    const { body, MAX_EVENTS_PER_REQUEST } = await validators();
    expect(MAX_EVENTS_PER_REQUEST).toBe(500);
    expect(body({ events: [minimal] })).toBe(true);
    expect(body({ events: Array.from({ length: 500 }, () => ({ ...minimal })) })).toBe(true);
    expect(body({ events: Array.from({ length: 501 }, () => ({ ...minimal })) })).toBe(false);
    expect(body({ events: [] })).toBe(false);
    expect(body({})).toBe(false);
  });

  it('tells clients the rules of the members they may send, as the manifest serves them', async () => {
    const { IngestEvent } = await validators();
    const p = IngestEvent.properties;
    expect(p.id).toMatchObject({ type: 'string', minLength: 1, maxLength: 128, description: 'The sender\'s id; sent again for the same tenant it counts as a duplicate.' });
    expect(p.ts).toMatchObject({ type: 'string', format: 'date-time', description: 'Default: the receive time. At most 30 days in the past and 5 minutes in the future.' });
    expect(p.method).toMatchObject({ type: 'string', pattern: '^[A-Za-z]{1,16}$', default: 'GET' });
    expect(p.path).toMatchObject({ type: 'string', minLength: 1, maxLength: 2048 });
    expect(p.ua).toMatchObject({ type: 'string', maxLength: 2048, description: 'Raw User-Agent; may be empty.' });
    expect(p.ip).toMatchObject({ type: 'string', minLength: 2, maxLength: 64, description: 'IPv4 or IPv6 text; only a keyed hash is stored.' });
    // Header names are lower-case letters, digits and dashes, 1 to 64 of them.
    expect(JSON.parse(JSON.stringify(p.headers))).toEqual({
      type: 'object',
      patternProperties: { '^[a-z0-9-]{1,64}$': { type: 'string', maxLength: 8192 } },
      maxProperties: 64,
    });
  });
});

describe('parseIngestBody', () => {
  const refusal = async (raw: string) => {
    const { parseIngestBody } = await validators();
    try {
      parseIngestBody(raw);
    } catch (error) {
      expect(error).toBeInstanceOf(ServiceError);
      const { status, reason, message, details } = error as ServiceError;
      return { status, reason, message, details };
    }
    throw new Error(`accepted ${raw}`);
  };
  const events = (n: number, bad: number, event: unknown) => JSON.stringify({ events: Array.from({ length: n }, (_, i) => (i === bad ? event : { ...minimal })) });

  it('refuses text that is not JSON as malformed-json', async () => {
    expect(await refusal('{"events": [')).toEqual({ status: 400, reason: 'malformed-json', message: 'The request body is not valid JSON.', details: {} });
    expect(await refusal('')).toMatchObject({ reason: 'malformed-json' });
  });

  it('names the first failing member with its event index, one or several digits, inside or at the end of the path', async () => {
    expect(await refusal(events(13, 12, { ...minimal, ip: 'x' }))).toEqual({
      status: 400,
      reason: 'invalid-body',
      message: 'body.events[12].ip Expected string length greater or equal to 2.',
      details: { field: 'body.events[12].ip' },
    });
    expect(await refusal(events(2, 1, { ...minimal, ip: 'x' }))).toMatchObject({ details: { field: 'body.events[1].ip' } });
    expect(await refusal(events(12, 11, 5))).toEqual({ status: 400, reason: 'invalid-body', message: 'body.events[11] Expected object.', details: { field: 'body.events[11]' } });
    expect(await refusal(events(2, 1, 'text'))).toMatchObject({ details: { field: 'body.events[1]' } });
    expect(await refusal(events(1, 0, { ...minimal, headers: { accept: 'v'.repeat(8193) } }))).toMatchObject({
      message: 'body.events[0].headers.accept Expected string length less or equal to 8192.',
      details: { field: 'body.events[0].headers.accept' },
    });
    expect(await refusal('[]')).toEqual({ status: 400, reason: 'invalid-body', message: 'body Expected object.', details: { field: 'body' } });
  });

  it('returns a valid body as parsed, without defaults filled in', async () => {
    const { parseIngestBody } = await validators();
    expect(parseIngestBody(JSON.stringify({ events: [{ ...minimal, method: 'post' }, minimal] }))).toEqual({ events: [{ ...minimal, method: 'post' }, minimal] });
  });
});
