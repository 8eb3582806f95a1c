import { describe, expect, it } from 'vitest';
import { buildAsnTables, parseAsnCsvLine } from './asn-table.ts';

const V6_EMPTY = '';

describe('parseAsnCsvLine', () => {
  it.each([
    ['16777216,16777471,13335,"Cloudflare, Inc."', { first: '16777216', last: '16777471', asn: 13335, org: 'Cloudflare, Inc.' }],
    ['35309568,35313663,201907,"LLC ""SPUTNIK"""', { first: '35309568', last: '35313663', asn: 201907, org: 'LLC "SPUTNIK"' }],
    ['1,2,3,Plain Org\r', { first: '1', last: '2', asn: 3, org: 'Plain Org' }],
    ['1,2,4294967294,', { first: '1', last: '2', asn: 4294967294, org: '' }],
  ])('%s', (line, row) => {
    expect(parseAsnCsvLine(line)).toEqual(row);
  });

  it.each(['', '1,2,3', 'a,2,3,x', '1,2,-3,x', '1,2,4294967296,x', '1,2,3,"unterminated', '1,2,3,"'])('refuses %j', (line) => {
    expect(parseAsnCsvLine(line)).toBeNull();
  });
});

describe('buildAsnTables', () => {
  const v4 = ['10,19,100,Ten', '20,29,200,"Twenty, Inc."', '40,49,400,Forty', '45,59,450,Overlap'].join('\n');
  const v6 = [
    // 2001:db8::/32 and 2001:db9::/48, as decimal integers
    '42540766411282592856903984951653826560,42540766490510755371168322545197776895,64496,Doc',
    '42540766490510755371168322545197776896,42540766490511964296987937174372483071,64497,Next',
  ].join('\n');

  it('finds the range holding an address and nothing outside the ranges', () => {
    const { v4: t } = buildAsnTables(v4, V6_EMPTY);
    expect(t.lookup(9)).toBeNull();
    expect(t.lookup(10)).toEqual({ asn: 100, asOrg: 'Ten' });
    expect(t.lookup(19)).toEqual({ asn: 100, asOrg: 'Ten' });
    expect(t.lookup(25)).toEqual({ asn: 200, asOrg: 'Twenty, Inc.' });
    expect(t.lookup(30)).toBeNull();
    expect(t.lookup(0xffffffff)).toBeNull();
  });

  it('cuts an earlier range where an overlapping later one begins', () => {
    const { v4: t } = buildAsnTables(v4, V6_EMPTY);
    expect(t.stats).toEqual({ ranges: 4, overlapsResolved: 1, tailsDropped: 0 });
    expect(t.lookup(44)).toEqual({ asn: 400, asOrg: 'Forty' });
    expect(t.lookup(45)).toEqual({ asn: 450, asOrg: 'Overlap' });
    expect(t.lookup(59)).toEqual({ asn: 450, asOrg: 'Overlap' });
  });

  it('counts a range swallowed whole by the one before it', () => {
    const { v4: t } = buildAsnTables('10,50,1,Big\n20,30,2,Inner', V6_EMPTY);
    expect(t.stats).toEqual({ ranges: 2, overlapsResolved: 1, tailsDropped: 1 });
    expect(t.lookup(15)?.asn).toBe(1);
    expect(t.lookup(25)?.asn).toBe(2);
    expect(t.lookup(40)).toBeNull();
  });

  it('compares IPv6 addresses over all 128 bits', () => {
    const { v6: t, organisations } = buildAsnTables('', v6);
    expect(organisations).toBe(2);
    const doc = [0x2001, 0x0db8, 0, 0, 0, 0, 0, 1];
    expect(t.lookup(doc)).toEqual({ asn: 64496, asOrg: 'Doc' });
    expect(t.lookup([0x2001, 0x0db8, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff])).toEqual({ asn: 64496, asOrg: 'Doc' });
    expect(t.lookup([0x2001, 0x0db9, 0, 0, 0, 0, 0, 0])).toEqual({ asn: 64497, asOrg: 'Next' });
    expect(t.lookup([0x2001, 0x0db7, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff])).toBeNull();
    expect(t.lookup([0x2001, 0x0dba, 0, 0, 0, 0, 0, 0])).toBeNull();
  });

  it('refuses unsorted, inverted or malformed data', () => {
    expect(() => buildAsnTables('20,29,1,a\n10,19,2,b', '')).toThrow(/not sorted/);
    expect(() => buildAsnTables('20,10,1,a', '')).toThrow(/bad range/);
    expect(() => buildAsnTables('1,4294967296,1,a', '')).toThrow(/bad range/);
    expect(() => buildAsnTables('1,2,1,a\nnope', '')).toThrow(/asn-ipv4-num\.csv:2/);
    expect(() => buildAsnTables('', `0,${2n ** 128n},1,a`)).toThrow(/bad range/);
  });

  it('shares one copy of each organisation name', () => {
    const tables = buildAsnTables('1,2,1,Same\n3,4,1,Same', '0,5,1,Same');
    expect(tables.organisations).toBe(1);
  });
});
