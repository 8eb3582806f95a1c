import ipaddr from 'ipaddr.js';
import { createRecentMap } from '../../../platform/memo.ts';

/** The longest textual IP accepted; the longest valid form (IPv6 with an embedded IPv4) is 45. */
const MAX_IP_TEXT = 64;

export type ParsedIp = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Parses the textual IP a sender reports, strictly:
 * - IPv4 only as four decimal parts without leading zeros (`8.8.8.8`); the inet_aton forms
 *   ipaddr.js would also take (`8.8`, `0x8.8.8.8`, `010.0.0.1`) are refused because they read
 *   differently in different programs;
 * - IPv6 in any RFC 4291 text form, case-insensitive, an embedded IPv4 part again as a dotted
 *   quad; a zone index (`fe80::1%eth0`) is refused (it names an interface of the sender's host);
 * - no surrounding whitespace.
 * An IPv4-mapped IPv6 address (`::ffff:8.8.8.8`) comes back as the IPv4 address it carries; so
 * does the deprecated IPv4-compatible text form `::8.8.8.8`, which ipaddr.js reads as mapped.
 * Returns null for anything else; never throws.
 */
export function parseIp(ip: unknown): ParsedIp | null {
  return typeof ip === 'string' ? knownAddress(ip).parsed : null;
}

/** A text's parse and, for an address, its one text form (`normaliseIp`), made on first use. */
interface KnownAddress {
  parsed: ParsedIp | null;
  normalised: string | null | undefined;
}

/**
 * Ingest asks about each event's address several times (bounds, GeoIP, hashing), a batch's
 * bounds all before its first derivation: the answers for the last few hundred texts are kept
 * (platform `createRecentMap`), so a batch of up to 500 events parses each address once. Parsed
 * addresses are never modified by their readers.
 */
export const RECENT_ADDRESSES = 512;
const addresses = createRecentMap<string, KnownAddress>(RECENT_ADDRESSES);
/** How many texts are remembered now: at most twice RECENT_ADDRESSES (for the test of the bound). */
export const rememberedAddressCount = (): number => addresses.size;
function knownAddress(ip: string): KnownAddress {
  let known = addresses.get(ip);
  if (known === undefined) addresses.set(ip, (known = { parsed: parseIpText(ip), normalised: undefined }));
  return known;
}

const DIGIT_0 = 48;
const DOT = 46;

/**
 * Four decimal parts without leading zeros, each at most 255, as octets; null otherwise. Read
 * character by character: every event's address passes here, and a regular expression, a split
 * and a map cost more than the lookups the address is parsed for.
 */
export function dottedQuadOctets(ip: string): number[] | null {
  if (ip.length < 7 || ip.length > 15) return null;
  const octets: number[] = [];
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= ip.length; i++) {
    const code = i === ip.length ? DOT : ip.charCodeAt(i);
    if (code === DOT) {
      if (digits === 0 || octets.length === 4) return null;
      octets.push(value);
      value = 0;
      digits = 0;
      continue;
    }
    const digit = code - DIGIT_0;
    if (digit < 0 || digit > 9) return null;
    // A leading zero ("010") reads as octal in some programs and decimal in others.
    if (digits === 1 && value === 0) return null;
    value = value * 10 + digit;
    digits += 1;
    if (value > 255) return null;
  }
  return octets.length === 4 ? octets : null;
}

function parseIpText(ip: string): ParsedIp | null {
  if (ip.length === 0 || ip.length > MAX_IP_TEXT) return null;
  try {
    const octets = dottedQuadOctets(ip);
    if (octets !== null) return new ipaddr.IPv4(octets);
    if (!ip.includes(':') || ip.includes('%')) return null;
    if (ip.includes('.')) {
      const tail = ip.slice(ip.lastIndexOf(':') + 1);
      if (dottedQuadOctets(tail) === null) return null;
    }
    if (!ipaddr.IPv6.isValid(ip)) return null;
    const v6 = ipaddr.IPv6.parse(ip);
    return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
  } catch {
    return null;
  }
}

/** True when `ip` is an IPv4 or IPv6 address in the text forms `parseIp` accepts. */
export function isValidIp(ip: string): boolean {
  return parseIp(ip) !== null;
}

/**
 * The one text form of an address: IPv4 as a dotted quad, an IPv4-mapped IPv6 address as the
 * IPv4 address it carries, any other IPv6 address in RFC 5952 form (lower case, leading zeros
 * dropped, the longest run of zero groups compressed to `::`). Null when the text is not a
 * valid address.
 */
export function normaliseIp(ip: string): string | null {
  const known = knownAddress(ip);
  if (known.normalised === undefined) known.normalised = normalForm(ip, known.parsed);
  return known.normalised;
}

function normalForm(text: string, parsed: ParsedIp | null): string | null {
  if (parsed === null) return null;
  if (parsed.kind() === 'ipv6') return (parsed as ipaddr.IPv6).toRFC5952String();
  // An IPv4 address without a colon was read as a strict dotted quad, already the one form; with
  // one it was IPv4-mapped IPv6 text.
  return text.includes(':') ? parsed.toString() : text;
}

/**
 * True when the address is ordinary public unicast in ipaddr.js's table of special ranges:
 * private (RFC 1918), loopback, link-local, carrier-grade NAT, multicast, broadcast,
 * documentation, benchmarking, reserved, unique-local, 6to4, Teredo, NAT64 (RFC 6052/6145),
 * AS112, AMT and the like are not. Only such addresses are looked up in the GeoIP data.
 */
export function isPublicUnicast(ip: ParsedIp): boolean {
  return ip.range() === 'unicast';
}
