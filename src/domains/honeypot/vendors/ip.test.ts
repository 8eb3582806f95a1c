import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { cidrContains, firstContaining, type ParsedCidr, type ParsedIp, parseCidr, parseIp, PrefixIndex } from './ip.ts';
import { loadVendorRegistry } from './registry.ts';

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
        // ipaddr.js reads any `::a.b.c.d` as the IPv4-mapped `::ffff:a.b.c.d` (RFC 4291 makes `::0.0.0.0`
        // the all-zero address), so it is no oracle for a dotted tail on either side; parseIp decodes
        // those itself (see the first test, and the one below).
        fc.pre(ip.family === 6 && !ipaddr.IPv6.parse(b).isIPv4MappedAddress() && !b.includes('.') && !a.includes('.'));
        const expected = ipaddr.IPv6.parse(a).match(ipaddr.IPv6.parseCIDR(`${b}/${bits}`));
        expect(cidrContains(parseCidr(`${b}/${bits}`)!, ip)).toBe(expected);
      }),
    );
  });
});

describe('a dotted tail on an IPv6 address', () => {
  it('is the low 32 bits, not an IPv4-mapped address (ipaddr.js would read ::0.0.0.0 as ::ffff:0.0.0.0)', () => {
    expect(parseIp('::0.0.0.0')).toEqual({ family: 6, words: [0, 0, 0, 0] });
    expect(cidrContains(parseCidr('::0/81')!, parseIp('::0.0.0.0')!)).toBe(true);
    expect(cidrContains(parseCidr('::0/81')!, parseIp('::1.2.3.4')!)).toBe(true);
    expect(cidrContains(parseCidr('::0/103')!, parseIp('::1.2.3.4')!)).toBe(true);
    expect(cidrContains(parseCidr('::0/104')!, parseIp('::1.2.3.4')!)).toBe(false);
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

describe('PrefixIndex', () => {
  const linear = (lists: ParsedCidr[][], ip: ParsedIp) =>
    new Map(lists.flatMap((ranges, i) => {
      const hit = firstContaining(ranges, ip);
      return hit ? [[i, hit] as const] : [];
    }));

  it('finds, per list, exactly the first prefix a linear scan finds (random prefixes of every length)', () => {
    const v4Prefix = fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 32 })).map(([a, bits]) => parseCidr(`${a}/${bits}`)!);
    const v6Prefix = fc
      .tuple(fc.ipV6(), fc.integer({ min: 0, max: 128 }))
      .filter(([a]) => !a.includes('.') && !ipaddr.IPv6.parse(a).isIPv4MappedAddress())
      .map(([a, bits]) => parseCidr(`${a}/${bits}`)!);
    const lists = fc.array(fc.array(fc.oneof(v4Prefix, v6Prefix), { maxLength: 12 }), { maxLength: 6 });
    // Addresses near the prefixes' own starts are the ones that hit.
    fc.assert(
      fc.property(lists, fc.array(fc.oneof(fc.ipV4(), fc.ipV6()), { maxLength: 8 }), (prefixLists, extra) => {
        const index = new PrefixIndex(prefixLists);
        const starts = prefixLists.flat().map((r) => ({ family: r.family, words: r.words }) as ParsedIp);
        for (const ip of [...starts, ...extra.map((a) => parseIp(a)).filter((p): p is ParsedIp => p !== null)]) {
          expect(index.firstOfEach(ip)).toEqual(linear(prefixLists, ip));
        }
      }),
    );
  });

  it('agrees with a linear scan over the shipped registry, inside and outside its prefixes', () => {
    const lists = loadVendorRegistry(null).vendors.map((v) => [...v.ranges]);
    const index = new PrefixIndex(lists);
    const inside = lists.flat().map((r) => ({ family: r.family, words: r.words.map((w, i) => (w | (~r.masks[i]! & 0x5a5a5a5a)) >>> 0) }) as ParsedIp);
    let hits = 0;
    for (const ip of inside) {
      const expected = linear(lists, ip);
      hits += expected.size > 0 ? 1 : 0;
      expect(index.firstOfEach(ip)).toEqual(expected);
    }
    expect(hits).toBe(inside.length);
    fc.assert(fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (a) => {
      const ip = parseIp(a);
      if (ip) expect(index.firstOfEach(ip)).toEqual(linear(lists, ip));
    }));
  });
});
