import { describe, expect, it } from 'vitest';
import { clientOf, parseTrusted, recordedHeaders, requestEvent } from './request.ts';

const rules = { trustedProxies: ['10.0.0.0/8', '127.0.0.1'], clientIpHeader: 'x-forwarded-for', ja4Header: 'x-ja4' };
const trusted = parseTrusted(rules.trustedProxies);

describe('who sent a request', () => {
  it('believes a trusted proxy: the right-most address that is not a proxy of ours, and its JA4 header', () => {
    expect(clientOf('10.1.2.3', { 'x-forwarded-for': '203.0.113.5', 'x-ja4': 't13d1516h2_8daaf6152771_e5627efa2ab1' }, rules, trusted)).toEqual({
      ip: '203.0.113.5',
      ja4: 't13d1516h2_8daaf6152771_e5627efa2ab1',
      viaProxy: true,
    });
    // The client wrote "1.1.1.1" itself; our proxies appended the real address and themselves.
    expect(clientOf('127.0.0.1', { 'x-forwarded-for': '1.1.1.1, 198.51.100.7, 10.0.0.2' }, rules, trusted).ip).toBe('198.51.100.7');
  });

  it('ignores those headers from anyone else', () => {
    expect(clientOf('198.51.100.9', { 'x-forwarded-for': '52.230.152.10', 'x-ja4': 'forged' }, rules, trusted)).toEqual({ ip: '198.51.100.9', ja4: undefined, viaProxy: false });
    expect(clientOf('127.0.0.1', {}, { ...rules, trustedProxies: [] }, [])).toEqual({ ip: '127.0.0.1', ja4: undefined, viaProxy: false });
  });

  it('records IPv4-mapped IPv6 peers as IPv4, and refuses a JA4 that is not one', () => {
    expect(clientOf('::ffff:127.0.0.1', { 'x-forwarded-for': '2001:db8::1' }, rules, trusted).ip).toBe('2001:db8::1');
    expect(clientOf('::ffff:198.51.100.3', {}, rules, trusted).ip).toBe('198.51.100.3');
    expect(clientOf('127.0.0.1', { 'x-ja4': 'x"; drop' }, rules, trusted).ja4).toBeUndefined();
  });

  it('falls back to the left-most listed address when every one is a proxy, and to the peer when none is valid', () => {
    expect(clientOf('127.0.0.1', { 'x-forwarded-for': '10.0.0.5, 10.0.0.6' }, rules, trusted).ip).toBe('10.0.0.5');
    expect(clientOf('127.0.0.1', { 'x-forwarded-for': 'garbage' }, rules, trusted).ip).toBe('127.0.0.1');
  });

  it('keeps the listed headers only, Web Bot Auth signatures included, cut and without NUL', () => {
    expect(recordedHeaders({ cookie: 'secret', 'signature-agent': '"https://agent.example"', signature: 'sig1=:abc:', 'signature-input': 'sig1=("@authority")', accept: `a\u0000b${'x'.repeat(5000)}` })).toEqual({
      'signature-agent': '"https://agent.example"',
      signature: 'sig1=:abc:',
      'signature-input': 'sig1=("@authority")',
      accept: `ab${'x'.repeat(4094)}`,
    });
    expect(recordedHeaders({ cookie: 'x' })).toBeUndefined();
  });
});

describe('the event of a request', () => {
  const at = Date.parse('2026-11-28T12:00:00Z');

  it('carries what the ingest takes: time, method, path, query, UA, referer, address, JA4 and the listed headers', () => {
    const seen = requestEvent(
      { method: 'POST', url: '/q/a?b=c', headers: { 'user-agent': 'GPTBot/1.1', referer: 'https://r.example/', 'x-forwarded-for': '203.0.113.5', 'x-ja4': 't13d1516h2_8daaf6152771_e5627efa2ab1', accept: '*/*', cookie: 'no' }, peer: '10.0.0.1' },
      rules,
      trusted,
      at,
    );
    expect(seen.event).toEqual({
      ts: '2026-11-28T12:00:00.000Z',
      method: 'POST',
      path: '/q/a',
      query: 'b=c',
      ua: 'GPTBot/1.1',
      ip: '203.0.113.5',
      ja4: 't13d1516h2_8daaf6152771_e5627efa2ab1',
      referer: 'https://r.example/',
      headers: { accept: '*/*' },
    });
    expect(seen.path).toBe('/q/a');
    expect(seen.key).toBe('203.0.113.5\nt13d1516h2_8daaf6152771_e5627efa2ab1\nGPTBot/1.1');
  });

  it('records the JA4 the site read from the ClientHello itself over any header, and keys the client by it', () => {
    const own = 't13d1312h2_aaaaaaaaaaaa_bbbbbbbbbbbb';
    const seen = requestEvent({ method: 'GET', url: '/', headers: { 'user-agent': 'x', 'x-ja4': 't13d1516h2_8daaf6152771_e5627efa2ab1' }, peer: '127.0.0.1', ja4: own }, rules, trusted, at);
    expect(seen.event.ja4).toBe(own);
    expect(seen.key).toBe(`127.0.0.1\n${own}\nx`);
    expect(requestEvent({ method: 'GET', url: '/', headers: {}, peer: '198.51.100.2', ja4: own }, rules, trusted, at).event).toMatchObject({ ip: '198.51.100.2', ja4: own });
  });

  it('cuts what is too long, drops NUL, reads an absolute URL as its path, and names an odd method GET', () => {
    const long = requestEvent({ method: 'M-SEARCH', url: `/${'p'.repeat(3000)}?${'q'.repeat(5000)}`, headers: { 'user-agent': `a\u0000${'u'.repeat(3000)}` }, peer: '198.51.100.1' }, rules, trusted, at);
    expect(long.event.path).toHaveLength(2048);
    expect(long.event.query).toHaveLength(4096);
    expect(long.event.ua).toBe(`a${'u'.repeat(2047)}`);
    expect(long.event.method).toBe('GET');
    expect(requestEvent({ method: 'GET', url: 'http://bait.example/agents/x?y=1', headers: {}, peer: '198.51.100.1' }, rules, trusted, at).event).toMatchObject({ path: '/agents/x', query: 'y=1', ua: '' });
    expect(requestEvent({ method: undefined, url: '', headers: {}, peer: undefined }, rules, trusted, at).event).toMatchObject({ path: '/', method: 'GET', ip: '0.0.0.0' });
  });
});
