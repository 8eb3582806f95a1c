import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type ipaddr from 'ipaddr.js';
import { Reader, type Response } from 'maxmind';
import { createRecentMap } from '../../../platform/memo.ts';
import { buildAsnTables, type AsnTables } from './asn-table.ts';
import { isPublicUnicast, normaliseIp, parseIp } from './ip.ts';

export { isValidIp, normaliseIp } from './ip.ts';

/**
 * Offline country and AS-number lookup for client IPs (spec D3: "Missing country and asn are
 * derived from the IP with GeoIP data that ships with the project"). Both data sets come from npm
 * packages and are read from node_modules at start; nothing is fetched at run time. See
 * docs/honeypot/enrichment.md for the sources, licences and what was measured.
 */
export interface GeoIpResult {
  /** ISO 3166-1 alpha-2, upper case, or null. */
  country: string | null;
  asn: number | null;
  /** The AS's organisation name as the ASN data gives it. */
  asOrg: string | null;
}

export interface GeoIpSourceInfo {
  package: string;
  version: string;
  files: string[];
}

export interface GeoIpInfo {
  country: GeoIpSourceInfo & { buildEpoch: string; databaseType: string };
  asn: GeoIpSourceInfo & {
    ipv4Ranges: number;
    ipv6Ranges: number;
    organisations: number;
    overlapsResolved: number;
    tailsDropped: number;
  };
  /** Wall time to read and index both data sets. */
  loadMs: number;
}

export interface GeoIp {
  /** Never throws: an invalid, private or otherwise non-public address, or one the data lacks, gives nulls. */
  lookup(ip: string): GeoIpResult;
  readonly info: GeoIpInfo;
}

export const COUNTRY_PACKAGE = '@ip-location-db/geo-whois-asn-country-mmdb';
export const COUNTRY_FILE = 'geo-whois-asn-country.mmdb';
export const ASN_PACKAGE = '@ip-location-db/asn';
export const ASN_IPV4_FILE = 'asn-ipv4-num.csv';
export const ASN_IPV6_FILE = 'asn-ipv6-num.csv';

/** Where the data files are; the defaults resolve them inside the installed npm packages. */
export interface GeoIpFiles {
  countryMmdb: string;
  asnIpv4Csv: string;
  asnIpv6Csv: string;
}

const require = createRequire(import.meta.url);

export function defaultGeoIpFiles(): GeoIpFiles {
  return {
    countryMmdb: require.resolve(`${COUNTRY_PACKAGE}/${COUNTRY_FILE}`),
    asnIpv4Csv: require.resolve(`${ASN_PACKAGE}/${ASN_IPV4_FILE}`),
    asnIpv6Csv: require.resolve(`${ASN_PACKAGE}/${ASN_IPV6_FILE}`),
  };
}

function packageVersion(name: string): string {
  try {
    const meta = require(`${name}/package.json`) as { version?: unknown };
    return typeof meta.version === 'string' ? meta.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** A record of the ip-location-db country MMDBs: `{ country_code: "US" }` (not MaxMind's layout). */
interface CountryRecord {
  country_code?: unknown;
}

const COUNTRY_CODE = /^[A-Z]{2}$/;
/** Decoded MMDB records kept, a generation of `createRecentMap`. */
const DECODED_RECORDS = 4096;

function nulls(): GeoIpResult {
  return { country: null, asn: null, asOrg: null };
}

class LoadedGeoIp implements GeoIp {
  constructor(
    private readonly countries: Reader<Response>,
    private readonly asns: AsnTables,
    readonly info: GeoIpInfo,
  ) {}

  lookup(ip: string): GeoIpResult {
    const parsed = parseIp(ip);
    if (parsed === null || !isPublicUnicast(parsed)) return nulls();
    try {
      // The one text form is kept with the parse (hashing wants it too), so this builds no text.
      return { country: this.country(normaliseIp(ip)!), ...this.asn(parsed) };
    } catch {
      return nulls();
    }
  }

  private country(ip: string): string | null {
    const record = this.countries.get(ip) as CountryRecord | null;
    const code = record?.country_code;
    // "ZZ" is the conventional "unknown" code, not a country.
    return typeof code === 'string' && COUNTRY_CODE.test(code) && code !== 'ZZ' ? code : null;
  }

  private asn(ip: ipaddr.IPv4 | ipaddr.IPv6): { asn: number | null; asOrg: string | null } {
    const hit =
      ip.kind() === 'ipv4'
        ? this.asns.v4.lookup((ip as ipaddr.IPv4).octets.reduce((acc, octet) => acc * 256 + octet, 0))
        : this.asns.v6.lookup((ip as ipaddr.IPv6).parts);
    // AS 0 means "not routed" (RFC 7607), not an AS.
    if (hit === null || hit.asn === 0) return { asn: null, asOrg: null };
    return { asn: hit.asn, asOrg: hit.asOrg };
  }
}

async function load(given?: Partial<GeoIpFiles>): Promise<GeoIp> {
  const started = performance.now();
  const files = defaultGeoIpFiles();
  for (const key of Object.keys(files) as (keyof GeoIpFiles)[]) {
    const path = given?.[key];
    if (path !== undefined) files[key] = path;
  }
  const [mmdb, ipv4Csv, ipv6Csv] = await Promise.all([
    readFile(files.countryMmdb),
    readFile(files.asnIpv4Csv, 'utf8'),
    readFile(files.asnIpv6Csv, 'utf8'),
  ]);
  // Many addresses share one record (a country's): decoded once and kept by its offset in the
  // file, which bounds the cache by the data's records (about 250 here) as well as by the map.
  const countries = new Reader<Response>(mmdb, { cache: createRecentMap<string | number, unknown>(DECODED_RECORDS) });
  const asns = buildAsnTables(ipv4Csv, ipv6Csv);
  const loadMs = Math.round(performance.now() - started);
  const info: GeoIpInfo = {
    country: {
      package: COUNTRY_PACKAGE,
      version: packageVersion(COUNTRY_PACKAGE),
      files: [files.countryMmdb],
      buildEpoch: countries.metadata.buildEpoch.toISOString(),
      databaseType: countries.metadata.databaseType,
    },
    asn: {
      package: ASN_PACKAGE,
      version: packageVersion(ASN_PACKAGE),
      files: [files.asnIpv4Csv, files.asnIpv6Csv],
      ipv4Ranges: asns.v4.stats.ranges,
      ipv6Ranges: asns.v6.stats.ranges,
      organisations: asns.organisations,
      overlapsResolved: asns.v4.stats.overlapsResolved + asns.v6.stats.overlapsResolved,
      tailsDropped: asns.v4.stats.tailsDropped + asns.v6.stats.tailsDropped,
    },
    loadMs,
  };
  return new LoadedGeoIp(countries, asns, info);
}

let shared: Promise<GeoIp> | undefined;

/**
 * Reads the shipped data into memory (about 0.65 s; about 53 MB stay resident: 35 MB of JS heap
 * and 18 MB of buffers; see docs/honeypot/enrichment.md).
 * Without arguments the result is shared: every caller in the process gets the same instance, so
 * the data is read once. With `files` (tests, or an operator pointing at other copies) a fresh
 * instance is built. Rejects when a file is missing or malformed: the service should not start
 * attributing with broken data.
 */
export function openGeoIp(files?: Partial<GeoIpFiles>): Promise<GeoIp> {
  if (files !== undefined) return load(files);
  shared ??= load().catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return shared;
}
