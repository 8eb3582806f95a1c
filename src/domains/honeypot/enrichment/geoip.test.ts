import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ASN_PACKAGE, COUNTRY_PACKAGE, type GeoIp, isValidIp, normaliseIp, openGeoIp } from './geoip.ts';

// Expectations are what the shipped data (the versions pinned in package-lock.json) says; they
// were read from the files before being written down here. Anycast addresses carry the country
// of their registration, e.g. 1.1.1.1 is APNIC-registered to Australia.
describe('openGeoIp with the shipped data', () => {
  let geo: GeoIp;
  beforeAll(async () => {
    geo = await openGeoIp();
  });

  it.each([
    ['8.8.8.8', 'US', 15169, 'Google LLC'],
    ['1.1.1.1', 'AU', 13335, 'Cloudflare, Inc.'],
    ['9.9.9.9', 'US', 19281, 'Quad9'],
    ['81.2.69.142', 'GB', 20712, 'Andrews & Arnold Ltd'],
    ['2001:4860:4860::8888', 'US', 15169, 'Google LLC'],
    ['2606:4700:4700::1111', 'US', 13335, 'Cloudflare, Inc.'],
    ['2a00:1450:4001:80b::200e', 'IE', 15169, 'Google LLC'],
  ])('%s → %s / AS%i', (ip, country, asn, asOrg) => {
    expect(geo.lookup(ip)).toEqual({ country, asn, asOrg });
  });

  it('looks up other spellings of the same address alike', () => {
    const expected = geo.lookup('8.8.8.8');
    expect(geo.lookup('::ffff:8.8.8.8')).toEqual(expected);
    expect(geo.lookup('::ffff:808:808')).toEqual(expected);
    expect(geo.lookup('2001:4860:4860:0:0:0:0:8888')).toEqual(geo.lookup('2001:4860:4860::8888'));
    expect(geo.lookup('2001:4860:4860::8888'.toUpperCase())).toEqual(geo.lookup('2001:4860:4860::8888'));
  });

  it('takes the later range where the ASN data overlaps (215.0.0.0 lies in both DoD ranges)', () => {
    expect(geo.info.asn.overlapsResolved).toBe(1);
    expect(geo.info.asn.tailsDropped).toBe(0);
    expect(geo.lookup('215.0.0.1').asn).toBe(721);
    expect(geo.lookup('214.255.255.255').asn).toBe(749);
  });

  // The country MMDB itself answers for some of these (192.168.0.0/16 comes back as "AU"), which
  // is why lookups are limited to public unicast addresses.
  it.each([
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '127.0.0.1',
    '100.64.0.1',
    '169.254.1.1',
    '224.0.0.1',
    '255.255.255.255',
    '0.0.0.0',
    '192.0.2.1',
    '198.51.100.7',
    '240.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'ff02::1',
    '2001:db8::1',
    '::ffff:10.0.0.1',
  ])('private or special %s → nulls', (ip) => {
    expect(geo.lookup(ip)).toEqual({ country: null, asn: null, asOrg: null });
  });

  it.each(['', 'x', 'localhost', '999.1.1.1', '8.8.8', '08.8.8.8', '0x8.8.8.8', ' 8.8.8.8', '8.8.8.8 ', 'fe80::1%eth0', '1:2:3:4:5:6:7:8:9', '::ffff:08.8.8.8', '2001:4860:4860::8888/32', '1'.repeat(100)])(
    'invalid %j → nulls without throwing',
    (ip) => {
      expect(geo.lookup(ip)).toEqual({ country: null, asn: null, asOrg: null });
    },
  );

  it('tolerates what is not a string at all', () => {
    for (const value of [undefined, null, 42, {}, []]) {
      expect(geo.lookup(value as unknown as string)).toEqual({ country: null, asn: null, asOrg: null });
    }
  });

  it('reports its sources and shares one loaded instance', async () => {
    expect(geo.info.country.package).toBe(COUNTRY_PACKAGE);
    expect(geo.info.asn.package).toBe(ASN_PACKAGE);
    expect(geo.info.country.version).toMatch(/^\d+\.\d+\.\d{10}$/);
    expect(geo.info.asn.version).toMatch(/^\d+\.\d+\.\d{10}$/);
    expect(Number.isNaN(Date.parse(geo.info.country.buildEpoch))).toBe(false);
    expect(geo.info.asn.ipv4Ranges).toBeGreaterThan(100_000);
    expect(geo.info.asn.ipv6Ranges).toBeGreaterThan(10_000);
    expect(geo.info.loadMs).toBeGreaterThan(0);
    expect(await openGeoIp()).toBe(geo);
  });
});

describe('openGeoIp with other files', () => {
  it('reads ASN CSVs given by path (quoted organisations included)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'geoip-'));
    const v4 = join(dir, 'v4.csv');
    const v6 = join(dir, 'v6.csv');
    // 8.8.8.0/24 and 2001:4860::/32 with made-up owners.
    await writeFile(v4, '134744064,134744319,64500,"Example, ""Quoted"" Org"\n');
    await writeFile(v6, '42541956101370907050197289607612071936,42541956180599069564461627201156022271,64501,Six Org\n');
    const geo = await openGeoIp({ asnIpv4Csv: v4, asnIpv6Csv: v6 });
    expect(geo.lookup('8.8.8.8')).toEqual({ country: 'US', asn: 64500, asOrg: 'Example, "Quoted" Org' });
    expect(geo.lookup('8.8.9.1')).toEqual({ country: 'US', asn: null, asOrg: null });
    expect(geo.lookup('2001:4860:4860::8888')).toEqual({ country: 'US', asn: 64501, asOrg: 'Six Org' });
    expect(await openGeoIp()).not.toBe(geo);
  });

  it('refuses to open a missing or malformed file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'geoip-'));
    await expect(openGeoIp({ countryMmdb: join(dir, 'none.mmdb') })).rejects.toThrow(/ENOENT/);
    const bad = join(dir, 'bad.csv');
    await writeFile(bad, '1,2,3,ok\nthis is not csv\n');
    await expect(openGeoIp({ asnIpv4Csv: bad })).rejects.toThrow(/bad\.csv|asn-ipv4-num\.csv:2/);
    const notMmdb = join(dir, 'x.mmdb');
    await writeFile(notMmdb, 'not a database');
    await expect(openGeoIp({ countryMmdb: notMmdb })).rejects.toThrow();
  });
});

describe('isValidIp and normaliseIp', () => {
  it.each([
    ['8.8.8.8', '8.8.8.8'],
    ['0.0.0.0', '0.0.0.0'],
    ['255.255.255.255', '255.255.255.255'],
    ['::ffff:8.8.8.8', '8.8.8.8'],
    ['::FFFF:192.0.2.1', '192.0.2.1'],
    ['::ffff:c000:201', '192.0.2.1'],
    ['2001:DB8::1', '2001:db8::1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:db8::0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['::', '::'],
    ['::1', '::1'],
    ['fe80::1', 'fe80::1'],
    // The deprecated IPv4-compatible form is read as the IPv4 address, as ipaddr.js reads it.
    ['::8.8.8.8', '8.8.8.8'],
    ['64:ff9b::8.8.8.8', '64:ff9b::808:808'],
  ])('%s is valid and normalises to %s', (ip, normal) => {
    expect(isValidIp(ip)).toBe(true);
    expect(normaliseIp(ip)).toBe(normal);
  });

  it.each(['', ' ', '8.8.8', '8.8.8.8.8', '256.1.1.1', '08.8.8.8', '0x8.8.8.8', '134744072', ' 8.8.8.8', '8.8.8.8\n', 'fe80::1%eth0', '2001:db8::1::1', ':::', '12345::', '::ffff:256.1.1.1', 'example.com', '8.8.8.8:443', '[::1]'])(
    '%j is not valid',
    (ip) => {
      expect(isValidIp(ip)).toBe(false);
      expect(normaliseIp(ip)).toBeNull();
    },
  );
});
