import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../platform/errors.ts';
import { parseIngestBody } from './service.ts';

const validEvent = fc.record(
  {
    id: fc.string({ minLength: 1, maxLength: 128 }),
    path: fc.string({ minLength: 1, maxLength: 200 }),
    ip: fc.oneof(fc.ipV4(), fc.ipV6()),
    ua: fc.string({ maxLength: 300 }),
    method: fc.constantFrom('GET', 'POST', 'HEAD', 'options'),
    ja4: fc.option(fc.string({ maxLength: 64 }), { nil: null }),
    asn: fc.option(fc.integer({ min: 0, max: 4294967295 }), { nil: null }),
    country: fc.option(fc.constantFrom('US', 'DE', 'JP', 'BR'), { nil: null }),
    headers: fc.dictionary(fc.stringMatching(/^[a-z0-9-]{1,20}$/), fc.string({ maxLength: 50 }), { maxKeys: 8 }),
  },
  { requiredKeys: ['path', 'ip'] },
);

describe('parseIngestBody', () => {
  it('accepts every well-formed batch of 1 to 500 events unchanged', () => {
    fc.assert(
      fc.property(fc.array(validEvent, { minLength: 1, maxLength: 20 }), (events) => {
        const raw = JSON.stringify({ events });
        expect(parseIngestBody(raw)).toEqual(JSON.parse(raw));
      }),
      { numRuns: 200 },
    );
  });

  it('answers any other input with a 400 svc error, never anything else', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((v) => JSON.stringify(v))), (raw) => {
        try {
          parseIngestBody(raw);
        } catch (error) {
          expect(error).toBeInstanceOf(ServiceError);
          expect((error as ServiceError).status).toBe(400);
          expect(['malformed-json', 'invalid-body']).toContain((error as ServiceError).reason);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('names the failing field in path notation', () => {
    const attempt = (body: unknown) => {
      try {
        parseIngestBody(JSON.stringify(body));
        return null;
      } catch (error) {
        return (error as ServiceError).details.field;
      }
    };
    expect(attempt({ events: [{ path: '/', ip: '1.2.3.4' }, { ip: '1.2.3.4' }] })).toBe('body.events[1].path');
    expect(attempt({ events: [] })).toBe('body.events');
    expect(attempt({ events: [{ path: '/', ip: '1.2.3.4', asn: -1 }] })).toBe('body.events[0].asn');
  });

  it('refuses batches over 500 events', () => {
    const events = Array.from({ length: 501 }, () => ({ path: '/', ip: '1.2.3.4' }));
    expect(() => parseIngestBody(JSON.stringify({ events }))).toThrow(ServiceError);
  });
});
