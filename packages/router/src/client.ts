import ipaddr from 'ipaddr.js';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * Who sent a request, as the router records it. Behind a reverse proxy the socket's peer is the
 * proxy: only when that peer is one of `trustedProxies` are its headers believed (the client's
 * address, the JA4 it computed); from anyone else they are what a client chose to send, and
 * ignored.
 */
export interface ClientRules {
  /** CIDRs or addresses of the proxies in front of the router. */
  trustedProxies: readonly string[];
  /** The header a trusted proxy puts the client's address in (`x-forwarded-for` by default). */
  clientIpHeader: string;
  /** The header a trusted proxy puts the TLS ClientHello's JA4 in, if it computes one. */
  ja4Header: string | null;
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

export function parseTrusted(entries: readonly string[]): Range[] {
  return entries.map((entry) => {
    const text = entry.trim();
    if (text.includes('/')) return ipaddr.parseCIDR(text);
    const address = ipaddr.process(text);
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  });
}

/** The address in its plain form: IPv4-mapped IPv6 (`::ffff:192.0.2.1`) as IPv4. */
export function plainAddress(text: string): string | null {
  if (!ipaddr.isValid(text)) return null;
  return ipaddr.process(text).toString();
}

const inAny = (address: string, ranges: readonly Range[]) => {
  const parsed = ipaddr.process(address);
  return ranges.some(([range, bits]) => parsed.kind() === range.kind() && parsed.match(range as never, bits));
};

export interface ClientFacts {
  ip: string;
  ja4: string | undefined;
  /** Whether the socket's peer is a trusted proxy. */
  viaProxy: boolean;
}

export function clientOf(peer: string | undefined, headers: IncomingHttpHeaders, rules: ClientRules, trusted: readonly Range[]): ClientFacts {
  const socketIp = plainAddress(peer ?? '') ?? '0.0.0.0';
  if (trusted.length === 0 || !inAny(socketIp, trusted)) return { ip: socketIp, ja4: undefined, viaProxy: false };
  const ja4Value = rules.ja4Header === null ? undefined : headerText(headers[rules.ja4Header]);
  const ja4 = ja4Value !== undefined && /^[A-Za-z0-9_]{1,64}$/.test(ja4Value) ? ja4Value : undefined;
  // X-Forwarded-For lists the client first and each proxy after: the client is the right-most
  // address that is not one of ours (anything left of it was written by the client itself).
  const listed = (headerText(headers[rules.clientIpHeader]) ?? '')
    .split(',')
    .map((part) => plainAddress(part.trim()))
    .filter((address): address is string => address !== null);
  for (let i = listed.length - 1; i >= 0; i -= 1) {
    const address = listed[i] as string;
    if (!inAny(address, trusted)) return { ip: address, ja4, viaProxy: true };
  }
  return { ip: listed[0] ?? socketIp, ja4, viaProxy: true };
}

export function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The request headers kept with each event (besides the User-Agent and Referer, which have their
 * own fields): what tells clients apart and Web Bot Auth's signature headers, which the service
 * verifies. Values are cut to 4,096 characters (the service takes 8,192).
 */
export const RECORDED_HEADERS = [
  'accept',
  'accept-encoding',
  'accept-language',
  'from',
  'signature',
  'signature-input',
  'signature-agent',
  'sec-ch-ua',
  'sec-ch-ua-platform',
  'sec-fetch-mode',
  'sec-fetch-site',
  'upgrade-insecure-requests',
  'via',
] as const;

export function recordedHeaders(headers: IncomingHttpHeaders): Record<string, string> | undefined {
  let kept: Record<string, string> | undefined;
  for (const name of RECORDED_HEADERS) {
    const value = headerText(headers[name]);
    if (value === undefined) continue;
    kept ??= {};
    kept[name] = clean(value, 4096);
  }
  return kept;
}

/** Text the service can store: no U+0000 (PostgreSQL refuses it), at most `max` characters. */
export function clean(text: string, max: number): string {
  return text.replace(/\u0000/g, '').slice(0, max);
}
