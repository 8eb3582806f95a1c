import ipaddr from 'ipaddr.js';
import { dottedQuadOctets } from '../enrichment/ip.ts';

/**
 * IP addresses and CIDR prefixes as 32-bit words, parsed once with ipaddr.js, so a membership
 * test is a handful of integer operations: one word for IPv4, four for IPv6.
 */

export interface ParsedIp {
  family: 4 | 6;
  words: readonly number[];
}

export interface ParsedCidr extends ParsedIp {
  /** The prefix exactly as the registry wrote it; it is what a proof names. */
  cidr: string;
  masks: readonly number[];
}

function wordsOf(bytes: number[]): number[] {
  const words: number[] = [];
  for (let i = 0; i < bytes.length; i += 4) {
    words.push(((bytes[i]! << 24) | (bytes[i + 1]! << 16) | (bytes[i + 2]! << 8) | bytes[i + 3]!) >>> 0);
  }
  return words;
}

function masksOf(bits: number, wordCount: number): number[] {
  const masks: number[] = [];
  for (let i = 0; i < wordCount; i++) {
    const inWord = Math.max(0, Math.min(32, bits - i * 32));
    masks.push(inWord === 0 ? 0 : (0xffffffff << (32 - inWord)) >>> 0);
  }
  return masks;
}

/**
 * A client address as ingest receives it: dotted-quad IPv4 or IPv6 text (an IPv4-mapped IPv6
 * address counts as its IPv4 address). Anything else, including the short and hexadecimal IPv4
 * forms ipaddr.js would accept, is null.
 */
export function parseIp(text: string): ParsedIp | null {
  if (typeof text !== 'string' || text.length > 64) return null;
  const value = text.trim();
  // The common case, decoded without ipaddr.js's general parser (it costs more than the lookup).
  const octets = dottedQuadOctets(value);
  if (octets !== null) return { family: 4, words: wordsOf(octets) };
  if (!value.includes(':') || !ipaddr.IPv6.isValid(value)) return null;
  const words = ipv6Words(value);
  if (words === null) return null;
  // ::ffff:a.b.c.d (IPv4-mapped) is the IPv4 client a dual-stack socket reports.
  if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) return { family: 4, words: [words[3]!] };
  return { family: 6, words };
}

/**
 * The four words of an IPv6 text. A trailing dotted quad is decoded here rather than by
 * ipaddr.js, which rewrites every `::a.b.c.d` into the IPv4-mapped `::ffff:a.b.c.d`.
 */
function ipv6Words(value: string): number[] | null {
  const text = value.replace(/%.*$/, '');
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (!tail.includes('.')) return wordsOf(ipaddr.IPv6.parse(text).toByteArray());
  if (!ipaddr.IPv4.isValidFourPartDecimal(tail)) return null;
  const head = `${text.slice(0, lastColon + 1)}0:0`;
  if (!ipaddr.IPv6.isValid(head)) return null;
  const words = wordsOf(ipaddr.IPv6.parse(head).toByteArray());
  words[3] = wordsOf(ipaddr.IPv4.parse(tail).toByteArray())[0]!;
  return words;
}

/** A prefix such as `52.230.152.0/24` or `2001:4860:4801:10::/64`; null when it is not one. */
export function parseCidr(text: string): ParsedCidr | null {
  if (typeof text !== 'string') return null;
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const address = text.slice(0, slash);
  const isV4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (!isV4 && !(address.includes(':') && ipaddr.IPv6.isValid(address))) return null;
  if (!/^\d{1,3}$/.test(text.slice(slash + 1))) return null;
  let parsed: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    parsed = ipaddr.parseCIDR(text);
  } catch {
    return null;
  }
  const [addr, bits] = parsed;
  const words = wordsOf(addr.toByteArray());
  const masks = masksOf(bits, words.length);
  return { cidr: text, family: isV4 ? 4 : 6, masks, words: words.map((w, i) => (w & masks[i]!) >>> 0) };
}

export function cidrContains(range: ParsedCidr, ip: ParsedIp): boolean {
  if (range.family !== ip.family) return false;
  for (let i = 0; i < range.words.length; i++) {
    if (((ip.words[i]! & range.masks[i]!) >>> 0) !== range.words[i]) return false;
  }
  return true;
}

/** The first prefix of a list that holds the address, or null. */
export function firstContaining(ranges: readonly ParsedCidr[], ip: ParsedIp): ParsedCidr | null {
  for (const range of ranges) if (cidrContains(range, ip)) return range;
  return null;
}

/** A prefix of one of several lists, for `PrefixIndex`. */
interface IndexedPrefix {
  list: number;
  position: number;
  range: ParsedCidr;
}

/** Prefixes at least this long are filed under their first 16 (IPv4) or 32 (IPv6) bits; shorter ones are always checked. */
const BUCKET_BITS = { 4: 16, 6: 32 } as const;

/**
 * Several prefix lists (one per vendor) indexed for membership tests: every prefix is filed under
 * the top bits of the addresses it covers, so one address is compared only with the prefixes of
 * its bucket (a handful) instead of every prefix of every list. `firstOfEach` answers exactly what
 * `firstContaining` answers for each list.
 */
export class PrefixIndex {
  /** By family, the bucket (top bits of the address) → its prefixes. Number keys: no text is built per lookup. */
  private readonly buckets = { 4: new Map<number, IndexedPrefix[]>(), 6: new Map<number, IndexedPrefix[]>() };
  private readonly wide: IndexedPrefix[] = [];

  constructor(lists: readonly (readonly ParsedCidr[])[]) {
    lists.forEach((ranges, list) =>
      ranges.forEach((range, position) => {
        const entry = { list, position, range };
        const bits = BUCKET_BITS[range.family];
        const length = prefixLength(range);
        // A prefix a little shorter than the bucket is filed under each bucket it spans (at most 256).
        if (length < bits - 8) {
          this.wide.push(entry);
          return;
        }
        const first = range.words[0]! >>> (32 - bits);
        const span = length >= bits ? 1 : 2 ** (bits - length);
        for (let i = 0; i < span; i++) this.file(this.buckets[range.family], (first + i) >>> 0, entry);
      }),
    );
  }

  private file(buckets: Map<number, IndexedPrefix[]>, key: number, entry: IndexedPrefix): void {
    const bucket = buckets.get(key);
    if (bucket) bucket.push(entry);
    else buckets.set(key, [entry]);
  }

  /**
   * For each list holding the address, its first prefix (in list order) that does. Called for
   * every ingested event: no closure or text is made per call (under tsx every closure made
   * costs a property definition for its name).
   */
  firstOfEach(ip: ParsedIp): Map<number, ParsedCidr> {
    const found = new Map<number, ParsedCidr>();
    const positions = new Map<number, number>();
    const bucket = this.buckets[ip.family].get(ip.words[0]! >>> (32 - BUCKET_BITS[ip.family]));
    if (bucket !== undefined) keepFirstContaining(bucket, ip, found, positions);
    keepFirstContaining(this.wide, ip, found, positions);
    return found;
  }
}

/** Adds to `found` each entry holding `ip` that comes before its list's current one (`positions`). */
function keepFirstContaining(entries: readonly IndexedPrefix[], ip: ParsedIp, found: Map<number, ParsedCidr>, positions: Map<number, number>): void {
  for (const entry of entries) {
    if (!cidrContains(entry.range, ip)) continue;
    const current = positions.get(entry.list);
    if (current === undefined || entry.position < current) {
      positions.set(entry.list, entry.position);
      found.set(entry.list, entry.range);
    }
  }
}

function prefixLength(range: ParsedCidr): number {
  let bits = 0;
  for (const mask of range.masks) for (let w = mask >>> 0; w !== 0; w = (w << 1) >>> 0) bits += 1;
  return bits;
}
