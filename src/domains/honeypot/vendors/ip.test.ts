import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { cidrContains, parseCidr, parseIp } from './ip.ts';

describe('parseIp', () => {
  it('accepts dotted-quad IPv4 and IPv6 text, and maps ::ffff:a.b.c.d to IPv4', () => {
    expect(parseIp('52.230.152.9')).toEqual({ family: 4, words: [0x34e69809] });
    expect(parseIp('::ffff:52.230.152.9')).toEqual({ family: 4, words: [0x34e69809] });
    expect(parseIp('::FFFF:34e6:9809')).toEqual({ family: 4, words: [0x34e69809] });
    expect(parseIp('2001:db8::1')).toEqual({ family: 6, words: [0x20010db8, 0, 0, 1] });
    expect(parseIp('::52.230.152.9')).toEqual({ family: 6, words: [0, 0, 0, 0x34e69809] });
    expect(parseIp('64:ff9b::1.2.3.4')).toEqual({ family: 6, words: [0x0064ff9b, 0, 0, 0x01020304] });
    expect(parseIp('fe80::1%eth0')).toEqual({ family: 6, words: [0xfe800000, 0, 0, 1] });
  });

  it('refuses everything else, including the short and hexadecimal IPv4 forms', () => {
    for (const text of ['', '1.2.3', '0x7f.0.0.1', '127.1', '3232235777', '1.2.3.4/32', '256.1.1.1', '01.2.3.4', 'gggg::1', '::ffff:1.2.3', 'x'.repeat(100)]) {
      expect(parseIp(text), text).toBeNull();
    }
  });

  it('agrees with ipaddr.js on which IPv4 addresses a prefix holds', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.ipV4(), fc.integer({ min: 0, max: 32 }), (a, b, bits) => {
        const range = parseCidr(`${b}/${bits}`)!;
        const expected = ipaddr.parse(a).match(ipaddr.parseCIDR(`${b}/${bits}`));
        expect(cidrContains(range, parseIp(a)!)).toBe(expected);
      }),
    );
  });

  it('agrees with ipaddr.js on which IPv6 addresses a prefix holds', () => {
    fc.assert(
      fc.property(fc.ipV6(), fc.ipV6(), fc.integer({ min: 0, max: 128 }), (a, b, bits) => {
        const ip = parseIp(a)!;
        fc.pre(ip.family === 6 && !ipaddr.IPv6.parse(b).isIPv4MappedAddress() && !b.includes('.'));
        const expected = ipaddr.IPv6.parse(a).match(ipaddr.IPv6.parseCIDR(`${b}/${bits}`));
        expect(cidrContains(parseCidr(`${b}/${bits}`)!, ip)).toBe(expected);
      }),
    );
  });
});

describe('parseCidr', () => {
  it('masks host bits and keeps the text as written', () => {
    expect(parseCidr('193.183.0.162/31')).toMatchObject({ cidr: '193.183.0.162/31', family: 4 });
    expect(cidrContains(parseCidr('10.1.2.3/8')!, parseIp('10.200.0.1')!)).toBe(true);
    expect(cidrContains(parseCidr('0.0.0.0/0')!, parseIp('203.0.113.1')!)).toBe(true);
    expect(cidrContains(parseCidr('0.0.0.0/0')!, parseIp('2001:db8::1')!)).toBe(false);
    expect(cidrContains(parseCidr('2001:db8::/127')!, parseIp('2001:db8::1')!)).toBe(true);
    expect(cidrContains(parseCidr('2001:db8::/128')!, parseIp('2001:db8::1')!)).toBe(false);
  });

  it('refuses what is not a prefix', () => {
    for (const text of ['1.2.3.4', '1.2.3.4/33', '1.2.3/24', '2001:db8::/129', '2001:db8::/-1', '1.2.3.4/ 8', '/8', 'a.b.c.d/8', '1.2.3.4/08x']) {
      expect(parseCidr(text), text).toBeNull();
    }
  });
});
