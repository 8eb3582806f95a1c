import ipaddr from 'ipaddr.js';
import type { Vendor } from './registry.ts';

/**
 * Forward-confirmed reverse DNS as a proof source (docs/honeypot/vendors.md, "What counts as
 * proof"): the rules over a lookup's answer, pure. The lookups themselves are fcrdns-lookup.ts.
 */

/** At most this many PTR names of one address are looked at, and forward-resolved when they match a vendor. */
export const MAX_PTR_NAMES = 4;

/**
 * What the verifier knew of the client address's reverse DNS when it judged, stored in the
 * evidence as `rdns`:
 * - `pending`: the lookup was started and had not answered; the event is judged again when it does;
 * - `answered`: `ptr` are the PTR names (at most four), `names` those of them under some vendor's
 *   domain whose forward lookup holds the address;
 * - `failed`: the lookup could not be made (timeout, SERVFAIL, refused); it neither proves nor refutes;
 * - `skipped`: no lookup was made (`off`: lookups are turned off; `busy`: the queue of lookups was full).
 */
export type RdnsFact =
  | { status: 'pending' }
  | { status: 'answered'; ptr: string[]; names: string[] }
  | { status: 'failed'; error: string }
  | { status: 'skipped'; why: 'off' | 'busy' };

/**
 * The name a reverse lookup asks for (`4.3.2.1.in-addr.arpa`, or the address's 32 nibbles under
 * `ip6.arpa`); an IPv4-mapped IPv6 address is looked up as its IPv4 address. Null for a non-address.
 */
export function arpaName(ip: string): string | null {
  if (!ipaddr.isValid(ip)) return null;
  const parsed = ipaddr.process(ip);
  if (parsed.kind() === 'ipv4') return `${parsed.toByteArray().reverse().join('.')}.in-addr.arpa`;
  const nibbles = parsed.toByteArray().flatMap((b) => [(b >> 4).toString(16), (b & 15).toString(16)]);
  return `${nibbles.reverse().join('.')}.ip6.arpa`;
}

/** A DNS name as compared: lower case, without the root's trailing dot. */
export function dnsName(name: string): string {
  return name.toLowerCase().replace(/\.+$/, '');
}

/** True when `name` is `domain` or a name under it (`crawl-1.googlebot.com` under `googlebot.com`, never `evilgooglebot.com`). */
export function isUnder(name: string, domain: string): boolean {
  const n = dnsName(name);
  return n === domain || n.endsWith(`.${domain}`);
}

export type RdnsStatus = { status: 'in'; name: string } | { status: 'out' | 'unknown' | 'none' };

/** What a reverse DNS fact says of one vendor: `none` when the vendor publishes no domain. */
export function rdnsStatus(vendor: Pick<Vendor, 'reverseDns'>, fact: RdnsFact | null): RdnsStatus {
  if (vendor.reverseDns.length === 0) return { status: 'none' };
  if (fact === null || fact.status !== 'answered') return { status: 'unknown' };
  const name = fact.names.find((n) => vendor.reverseDns.some((domain) => isUnder(n, domain)));
  return name === undefined ? { status: 'out' } : { status: 'in', name };
}

const strings = (value: unknown, max: number): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string').slice(0, max) : [];

/** The `rdns` of a stored evidence; anything missing or malformed reads as not consulted (null). */
export function rdnsFactFrom(raw: unknown): RdnsFact | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  switch (r.status) {
    case 'pending':
      return { status: 'pending' };
    case 'answered':
      return { status: 'answered', ptr: strings(r.ptr, MAX_PTR_NAMES), names: strings(r.names, MAX_PTR_NAMES) };
    case 'failed':
      return { status: 'failed', error: typeof r.error === 'string' ? r.error : 'unknown' };
    case 'skipped':
      return { status: 'skipped', why: r.why === 'busy' ? 'busy' : 'off' };
    default:
      return null;
  }
}
