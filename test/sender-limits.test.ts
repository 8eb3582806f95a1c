import { MAX_BODY_BYTES, INGEST_PATH as SENDER_INGEST_PATH, MAX_EVENTS_PER_REQUEST as SENDER_MAX_EVENTS, parseTrusted, requestEvent } from '@observatory/sender';
import { describe, expect, it } from 'vitest';
import { ingestEndpoints } from '../src/domains/honeypot/ingest/endpoints.ts';
import { MAX_EVENTS_PER_REQUEST, parseIngestBody } from '../src/domains/honeypot/ingest/service.ts';
import { BODY_LIMIT_BYTES } from '../src/platform/http/server.ts';

/**
 * The sender package cannot import the service (it runs on other machines), so it states the
 * ingest's path and limits again. This holds the two to each other: the path and the per-request
 * limits match, and the event the package builds from the most hostile request a site can see
 * (every field too long, NUL bytes, an odd method) is one the ingest's own validation accepts.
 */
describe('the sender agrees with the ingest it sends to', () => {
  it('on the path, the events per request and the body limit', () => {
    const ingest = ingestEndpoints({ tenants: {} as never, ingest: {} as never, clock: {} as never }).find((e) => e.id === 'ingestHoneypotEvents');
    expect(ingest?.path).toBe(SENDER_INGEST_PATH);
    expect(SENDER_MAX_EVENTS).toBe(MAX_EVENTS_PER_REQUEST);
    expect(MAX_BODY_BYTES).toBe(ingest?.bodyLimit ?? BODY_LIMIT_BYTES);
  });

  it('on what one event may hold', () => {
    const long = (n: number) => 'é\u0000'.repeat(n);
    const headers = Object.fromEntries(['accept', 'accept-language', 'signature', 'signature-input', 'signature-agent', 'sec-ch-ua', 'via', 'from'].map((h) => [h, long(9000)]));
    const { event } = requestEvent(
      { method: 'M-SEARCH', url: `/${long(3000)}?${long(5000)}`, headers: { ...headers, 'user-agent': long(3000), referer: long(3000), host: 'x' }, peer: '::ffff:198.51.100.9' },
      { trustedProxies: [], clientIpHeader: 'x-forwarded-for', ja4Header: null },
      parseTrusted([]),
      Date.parse('2026-11-28T12:00:00Z'),
    );
    // Validated by the ingest's schema (a refusal throws 400 naming the field). `parseIngestBody`'s
    // compiled checker knows no `date-time` format (the HTTP route's Ajv does), so `ts` is held to
    // its form here instead.
    expect(new Date(event.ts as string).toISOString()).toBe(event.ts);
    expect(parseIngestBody(JSON.stringify({ events: [{ ...event, ts: undefined, id: 'e-1' }] })).events[0]).toMatchObject({ id: 'e-1', ip: '198.51.100.9', method: 'GET' });
  });
});
