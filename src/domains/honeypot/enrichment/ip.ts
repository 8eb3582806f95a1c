import ipaddr from 'ipaddr.js';

/** The longest textual IP accepted; the longest valid form (IPv6 with an embedded IPv4) is 45. */
const MAX_IP_TEXT = 64;
const DOTTED_QUAD = /^(?:0|[1-9]\d{0,2})(?:\.(?:0|[1-9]\d{0,2})){3}$/;

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
  if (typeof ip !== 'string') return null;
  // Ingest asks about one event's address several times in a row (bounds, classification, GeoIP,
  // hashing): the last answer is kept. Parsed addresses are never modified by their readers.
  if (ip === lastText) return lastParsed;
  const parsed = parseIpText(ip);
  lastText = ip;
  lastParsed = parsed;
  return parsed;
}
let lastText: string | null = null;
let lastParsed: ParsedIp | null = null;

/** Four decimal parts without leading zeros, each at most 255, as octets; null otherwise. */
export function dottedQuadOctets(ip: string): number[] | null {
  if (!DOTTED_QUAD.test(ip)) return null;
  const octets = ip.split('.').map(Number);
  return octets.every((o) => o <= 255) ? octets : null;
}

function parseIpText(ip: string): ParsedIp | null {
  if (ip.length === 0 || ip.length > MAX_IP_TEXT) return null;
  try {
    if (DOTTED_QUAD.test(ip)) {
      const octets = dottedQuadOctets(ip);
      return octets === null ? null : new ipaddr.IPv4(octets);
    }
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
  const parsed = parseIp(ip);
  if (parsed === null) return null;
  return parsed.kind() === 'ipv4' ? parsed.toString() : (parsed as ipaddr.IPv6).toRFC5952String();
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
