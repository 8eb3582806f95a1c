import { describe, expect, it } from 'vitest';
import { clientOf, parseTrusted, recordedHeaders } from './client.ts';

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
