import type { KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { vendorRangeSnapshots } from '../schema.ts';
import { type ParsedCidr, parseCidr } from './ip.ts';
import { publicKeyFromJwk } from './web-bot-auth.ts';

/**
 * The vendor registry (spec D3): who a user agent claims to be and what proves it. The shipped
 * list is `vendors.json` beside this file (built by `scripts/build-vendor-registry.ts`);
 * OBSERVATORY_VENDORS_FILE names a JSON file that replaces it. Both go through the same
 * validation; a bad file throws an Error naming the file and the member. Prefixes and keys are
 * parsed once, here.
 */

export const SHIPPED_VENDORS_FILE = fileURLToPath(new URL('./vendors.json', import.meta.url));

export const VENDOR_CATEGORIES = [
  'ai-crawler',
  'ai-assistant',
  'ai-search',
  'search-crawler',
  'dataset-crawler',
  'archiver',
  'fetcher',
  'link-preview',
] as const;
export type VendorCategory = (typeof VENDOR_CATEGORIES)[number];

const ID_PATTERN = '^[a-z0-9][a-z0-9._-]{0,63}$';

const WebBotAuthKey = Type.Object({ keyid: Type.String({ minLength: 1, maxLength: 200 }), jwk: Type.Unknown() });

/** One vendor as the JSON file states it; members beyond spec D3's four are optional. */
export const VendorEntry = Type.Object({
  id: Type.String({ pattern: ID_PATTERN }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  uaPattern: Type.String({ minLength: 1, maxLength: 1000 }),
  cidrs: Type.Array(Type.String(), { maxItems: 100_000 }),
  category: Type.Optional(Type.Union(VENDOR_CATEGORIES.map((c) => Type.Literal(c)))),
  isAi: Type.Optional(Type.Boolean()),
  operator: Type.Optional(Type.String({ minLength: 1 })),
  sourceUrls: Type.Optional(Type.Array(Type.String())),
  rangesUrls: Type.Optional(Type.Array(Type.String())),
  creationTime: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  webBotAuth: Type.Optional(
    Type.Object({ keys: Type.Array(WebBotAuthKey), signatureAgent: Type.Optional(Type.String({ minLength: 1 })) }),
  ),
  reverseDns: Type.Optional(Type.Array(Type.String({ minLength: 3, maxLength: 253 }), { maxItems: 16 })),
  docsUrl: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  notes: Type.Optional(Type.String()),
  robotsTokens: Type.Optional(Type.Array(Type.String())),
  uaExamples: Type.Optional(Type.Array(Type.String())),
});
export type VendorEntry = Static<typeof VendorEntry>;

export const VendorFile = Type.Object({
  snapshot: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  vendors: Type.Array(VendorEntry),
});
export type VendorFile = Static<typeof VendorFile>;

export interface Vendor {
  id: string;
  name: string;
  uaPattern: string;
  /** `uaPattern` compiled: case-sensitive, searched anywhere in the UA. */
  ua: RegExp;
  cidrs: readonly string[];
  ranges: readonly ParsedCidr[];
  category: VendorCategory;
  isAi: boolean;
  operator: string | null;
  sourceUrls: readonly string[];
  /** JSON range lists in the `{creationTime, prefixes}` format that the refresh job fetches. */
  rangesUrls: readonly string[];
  creationTime: string | null;
  /** Where `cidrs` come from: the registry file, or a refresh stored in vendor_range_snapshots. */
  rangesOrigin: 'registry' | 'refreshed';
  rangesFetchedAt: string | null;
  webBotAuth: { keys: readonly { keyid: string; jwk: unknown }[]; signatureAgent: string | null } | null;
  /** Web Bot Auth keyid to public key. */
  keys: ReadonlyMap<string, KeyObject>;
  /**
   * Domains the vendor's crawler hosts are named under (lower case, no dots at the ends): a
   * forward-confirmed reverse DNS name equal to one, or ending in `.` and one, proves the claim.
   */
  reverseDns: readonly string[];
  docsUrl: string | null;
  notes: string | null;
  robotsTokens: readonly string[];
  uaExamples: readonly string[];
}

export interface VendorRegistry {
  origin: 'shipped' | 'file' | 'inline';
  file: string | null;
  /** Provenance of the shipped data (source, commit, date, licence); null when the file has none. */
  snapshot: Readonly<Record<string, unknown>> | null;
  vendors: readonly Vendor[];
  byId: ReadonlyMap<string, Vendor>;
}

/** The kinds of proof a vendor can publish, as verdicts name them (`<source>:<detail>`). */
export const PROOF_SOURCES = ['ip-range', 'web-bot-auth', 'fcrdns'] as const;
export type ProofSource = (typeof PROOF_SOURCES)[number];

/** The proof sources a vendor publishes, in `PROOF_SOURCES` order; empty when it publishes none. */
export function proofSourcesOf(vendor: Vendor): ProofSource[] {
  const sources: ProofSource[] = [];
  if (vendor.ranges.length > 0) sources.push('ip-range');
  if (vendor.keys.size > 0) sources.push('web-bot-auth');
  if (vendor.reverseDns.length > 0) sources.push('fcrdns');
  return sources;
}

/** A vendor can be verified (and so can be caught lying) only if it publishes a proof. */
export function hasProof(vendor: Vendor): boolean {
  return vendor.ranges.length > 0 || vendor.keys.size > 0 || vendor.reverseDns.length > 0;
}

// LDH labels of 1 to 63 characters, at least two of them: a whole top-level domain is no proof.
const DOMAIN = /^(?=.{3,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

function checkDomain(file: string, member: string, value: string): string {
  if (!DOMAIN.test(value)) {
    throw new VendorRegistryError(file, member, `"${value}" is not a lower-case domain of at least two labels (such as "search.msn.com")`);
  }
  return value;
}

export class VendorRegistryError extends Error {
  constructor(
    readonly file: string,
    readonly member: string,
    problem: string,
  ) {
    super(`Vendor registry ${file}: ${member}: ${problem}`);
    this.name = 'VendorRegistryError';
  }
}

function memberName(entry: unknown, index: number, rest = ''): string {
  const id = (entry as { id?: unknown } | null)?.id;
  return `vendors[${index}]${typeof id === 'string' ? ` (id "${id}")` : ''}${rest}`;
}

/** `/vendors/3/cidrs/2` → `vendors[3] (id "x").cidrs[2]`. */
function pointerToMember(json: unknown, pointer: string): string {
  const parts = pointer.split('/').slice(1);
  if (parts[0] !== 'vendors' || parts[1] === undefined) return parts.join('.') || '(root)';
  const index = Number(parts[1]);
  const entry = (json as { vendors?: unknown[] }).vendors?.[index];
  const rest = parts
    .slice(2)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
    .join('');
  return memberName(entry, index, rest);
}

function checkUrl(file: string, member: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new VendorRegistryError(file, member, `"${value}" is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new VendorRegistryError(file, member, `"${value}" must be an http or https URL`);
  }
}

function compilePattern(file: string, member: string, pattern: string): RegExp {
  let ua: RegExp;
  try {
    ua = new RegExp(pattern);
  } catch (error) {
    throw new VendorRegistryError(file, member, `not a valid regular expression (${(error as Error).message})`);
  }
  if (ua.test('')) throw new VendorRegistryError(file, member, 'matches the empty user agent, so it would claim every request');
  return ua;
}

export function parseRanges(file: string, member: string, cidrs: readonly string[]): ParsedCidr[] {
  return cidrs.map((cidr, i) => {
    const parsed = parseCidr(cidr);
    if (parsed === null) throw new VendorRegistryError(file, `${member}[${i}]`, `"${cidr}" is not an IPv4 or IPv6 prefix`);
    return parsed;
  });
}

function buildVendor(file: string, entry: VendorEntry, index: number): Vendor {
  const at = (rest: string) => memberName(entry, index, rest);
  const ua = compilePattern(file, at('.uaPattern'), entry.uaPattern);
  (entry.uaExamples ?? []).forEach((example, i) => {
    if (!ua.test(example)) throw new VendorRegistryError(file, at(`.uaExamples[${i}]`), 'does not match uaPattern');
  });
  (entry.sourceUrls ?? []).forEach((u, i) => checkUrl(file, at(`.sourceUrls[${i}]`), u));
  (entry.rangesUrls ?? []).forEach((u, i) => checkUrl(file, at(`.rangesUrls[${i}]`), u));
  if (entry.docsUrl) checkUrl(file, at('.docsUrl'), entry.docsUrl);
  const keys = new Map<string, KeyObject>();
  (entry.webBotAuth?.keys ?? []).forEach((k, i) => {
    if (keys.has(k.keyid)) throw new VendorRegistryError(file, at(`.webBotAuth.keys[${i}].keyid`), `"${k.keyid}" is listed twice`);
    try {
      keys.set(k.keyid, publicKeyFromJwk(k.jwk));
    } catch (error) {
      throw new VendorRegistryError(file, at(`.webBotAuth.keys[${i}].jwk`), (error as Error).message);
    }
  });
  const reverseDns = (entry.reverseDns ?? []).map((d, i) => checkDomain(file, at(`.reverseDns[${i}]`), d));
  return {
    id: entry.id,
    name: entry.name,
    uaPattern: entry.uaPattern,
    ua,
    cidrs: [...entry.cidrs],
    ranges: parseRanges(file, at('.cidrs'), entry.cidrs),
    // Spec D3's list is of AI agents: a file that states only the four core members means that.
    category: entry.category ?? 'ai-crawler',
    isAi: entry.isAi ?? true,
    operator: entry.operator ?? null,
    sourceUrls: entry.sourceUrls ?? [],
    rangesUrls: entry.rangesUrls ?? [],
    creationTime: entry.creationTime ?? null,
    rangesOrigin: 'registry',
    rangesFetchedAt: null,
    webBotAuth: entry.webBotAuth
      ? { keys: entry.webBotAuth.keys, signatureAgent: entry.webBotAuth.signatureAgent ?? null }
      : null,
    keys,
    reverseDns,
    docsUrl: entry.docsUrl ?? null,
    notes: entry.notes ?? null,
    robotsTokens: entry.robotsTokens ?? [],
    uaExamples: entry.uaExamples ?? [],
  };
}

function registryOf(origin: VendorRegistry['origin'], file: string | null, snapshot: VendorRegistry['snapshot'], vendors: Vendor[]): VendorRegistry {
  return { origin, file, snapshot, vendors, byId: new Map(vendors.map((v) => [v.id, v])) };
}

/** Validates parsed JSON as a registry; `file` names it in errors. */
export function parseVendorRegistry(json: unknown, file: string, origin: VendorRegistry['origin'] = 'inline'): VendorRegistry {
  if (!Value.Check(VendorFile, json)) {
    const first = Value.Errors(VendorFile, json).First();
    const member = first ? pointerToMember(json, first.path) : '(root)';
    throw new VendorRegistryError(file, member, first?.message ?? 'is not a vendor registry');
  }
  const seen = new Map<string, number>();
  const vendors = json.vendors.map((entry, index) => {
    const earlier = seen.get(entry.id);
    if (earlier !== undefined) {
      throw new VendorRegistryError(file, memberName(entry, index, '.id'), `duplicates vendors[${earlier}]`);
    }
    seen.set(entry.id, index);
    return buildVendor(file, entry, index);
  });
  return registryOf(origin, file, json.snapshot ?? null, vendors);
}

/**
 * The registry in force: the shipped `vendors.json`, or the file OBSERVATORY_VENDORS_FILE names,
 * which replaces it entirely. Throws an Error naming the file and the bad member.
 */
export function loadVendorRegistry(file: string | null): VendorRegistry {
  const path = file ?? SHIPPED_VENDORS_FILE;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new VendorRegistryError(path, '(file)', `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new VendorRegistryError(path, '(file)', `is not JSON (${(error as Error).message})`);
  }
  return parseVendorRegistry(json, path, file === null ? 'shipped' : 'file');
}

export type RangeSnapshotRow = typeof vendorRangeSnapshots.$inferSelect;

/** How the refresh job records a vendor's list of URLs in the one `source_url` column. */
export function rangesSourceKey(vendor: Pick<Vendor, 'rangesUrls'>): string {
  return vendor.rangesUrls.join(' ');
}

/**
 * The registry with ranges the refresh job stored laid over it. A row applies only to a vendor
 * that still lists the same range URLs (so a replaced registry is not overwritten by rows fetched
 * for another one); rows naming unknown vendors or holding a prefix that does not parse are
 * ignored. Returns the same registry when nothing applies.
 */
export function withRefreshedRanges(registry: VendorRegistry, rows: readonly RangeSnapshotRow[]): VendorRegistry {
  let changed = false;
  const byVendor = new Map(rows.map((r) => [r.vendorId, r]));
  const vendors = registry.vendors.map((vendor) => {
    const row = byVendor.get(vendor.id);
    if (!row || vendor.rangesUrls.length === 0 || row.sourceUrl !== rangesSourceKey(vendor) || row.cidrs.length === 0) return vendor;
    let ranges: ParsedCidr[];
    try {
      ranges = parseRanges('vendor_range_snapshots', vendor.id, row.cidrs);
    } catch {
      return vendor;
    }
    changed = true;
    return {
      ...vendor,
      cidrs: [...row.cidrs],
      ranges,
      creationTime: row.creationTime,
      rangesOrigin: 'refreshed' as const,
      rangesFetchedAt: row.fetchedAt.toISOString(),
    };
  });
  return changed ? registryOf(registry.origin, registry.file, registry.snapshot, vendors) : registry;
}

/** A mutable holder for the registry in force; the refresh job swaps `current`. */
export interface RegistryHolder {
  current: VendorRegistry;
}

export function createRegistryHolder(registry: VendorRegistry): RegistryHolder {
  return { current: registry };
}
