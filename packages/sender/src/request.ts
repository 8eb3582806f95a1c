import type { IncomingHttpHeaders } from 'node:http';
import ipaddr from 'ipaddr.js';
import type { HoneypotEvent } from './types.ts';
import { clientKey } from './verdicts.ts';

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

export type TrustedRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** The rules from a site's options, with header names lower-cased and the proxies parsed once. */
export function clientRulesOf(options: { trustedProxies?: readonly string[]; clientIpHeader?: string; ja4Header?: string | null }): { rules: ClientRules; trusted: TrustedRange[] } {
  const rules: ClientRules = {
    trustedProxies: options.trustedProxies ?? [],
    clientIpHeader: (options.clientIpHeader ?? 'x-forwarded-for').toLowerCase(),
    ja4Header: options.ja4Header?.toLowerCase() ?? null,
  };
  return { rules, trusted: parseTrusted(rules.trustedProxies) };
}

/** Parses trusted proxy entries (addresses or CIDRs); throws on one that is neither. */
export function parseTrusted(entries: readonly string[]): TrustedRange[] {
  return entries.map((entry) => {
    const text = entry.trim();
    if (text.includes('/')) return ipaddr.parseCIDR(text);
    const address = ipaddr.process(text);
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  });
}

/** The address in its plain form: IPv4-mapped IPv6 (`::ffff:192.0.2.1`) as IPv4. */
export function plainAddress(text: string): string | null {
  if (text === lastPlain.text) return lastPlain.plain;
  const plain = plainAddressOf(text);
  lastPlain = { text, plain };
  return plain;
}

/** The last address read (a busy site reads the same peers again and again). */
let lastPlain: { text: string; plain: string | null } = { text: '', plain: null };

function plainAddressOf(text: string): string | null {
  // The common cases without parsing: a socket's IPv4 peer as Node gives it, and IPv4-mapped.
  if (DOTTED_QUAD.test(text)) return text;
  if (text.startsWith('::ffff:') && DOTTED_QUAD.test(text.slice(7))) return text.slice(7);
  if (!ipaddr.isValid(text)) return null;
  return ipaddr.process(text).toString();
}

const DOTTED_QUAD = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

const inAny = (address: string, ranges: readonly TrustedRange[]) => {
  const parsed = ipaddr.process(address);
  return ranges.some(([range, bits]) => parsed.kind() === range.kind() && parsed.match(range as never, bits));
};

export interface ClientFacts {
  ip: string;
  ja4: string | undefined;
  /** Whether the socket's peer is a trusted proxy. */
  viaProxy: boolean;
}

export function clientOf(peer: string | undefined, headers: IncomingHttpHeaders, rules: ClientRules, trusted: readonly TrustedRange[]): ClientFacts {
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
  // Most text has no U+0000 and fits: then it is returned as it is, without a regular expression.
  const kept = text.includes('\u0000') ? text.replace(/\u0000/g, '') : text;
  return kept.length > max ? kept.slice(0, max) : kept;
}

const methodOf = (method: string | undefined) => (method === 'GET' || method === 'HEAD' || method === 'POST' ? method : method !== undefined && /^[A-Za-z]{1,16}$/.test(method) ? method : 'GET');

/** What a site knows of one request, from whatever server it runs on. */
export interface SeenRequest {
  method: string | undefined;
  /** The request target: path and query string (`/q/a?b=c`); an absolute URL is read as its path. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The socket's peer address. */
  peer: string | undefined;
  /** The JA4 the site computed itself from the client's ClientHello (it terminates TLS); wins over a proxy's header. */
  ja4?: string | undefined;
}

export interface RecordedRequest {
  event: HoneypotEvent;
  client: ClientFacts;
  /** The path without its query, as recorded. */
  path: string;
  /** The key the site remembers this client's verdict by (`clientKey`). */
  key: string;
}

/**
 * The ingest event for one request: its time, method, path and query, User-Agent, referer, the
 * client's address and JA4 (its own ClientHello's, or from a trusted proxy only) and the headers in RECORDED_HEADERS, each
 * cut to what the ingest takes.
 */
export function requestEvent(seen: SeenRequest, rules: ClientRules, trusted: readonly TrustedRange[], nowMs: number): RecordedRequest {
  let target = seen.url || '/';
  if (!target.startsWith('/')) {
    try {
      const absolute = new URL(target);
      target = `${absolute.pathname}${absolute.search}`;
    } catch {
      target = `/${target}`;
    }
  }
  const mark = target.indexOf('?');
  const path = clean(mark < 0 ? target : target.slice(0, mark), 2048) || '/';
  const query = mark < 0 ? undefined : clean(target.slice(mark + 1), 4096);
  const proxied = clientOf(seen.peer, seen.headers, rules, trusted);
  const client = seen.ja4 === undefined ? proxied : { ...proxied, ja4: seen.ja4 };
  const ua = clean(headerText(seen.headers['user-agent']) ?? '', 2048);
  const referer = headerText(seen.headers.referer);
  const headers = recordedHeaders(seen.headers);
  // Fields set one by one in this order (the event's JSON keeps it): no object spread per request.
  const event: HoneypotEvent = { ts: isoTime(nowMs), method: methodOf(seen.method), path } as HoneypotEvent;
  if (query !== undefined) event.query = query;
  event.ua = ua;
  event.ip = client.ip;
  if (client.ja4 !== undefined) event.ja4 = client.ja4;
  if (referer !== undefined) event.referer = clean(referer, 2048);
  if (headers !== undefined) event.headers = headers;
  return { event, client, path, key: keyOf(client.ip, ua, client.ja4) };
}

// A busy site sees many requests per millisecond and runs of them from one client: the last time
// written and the last client's key are kept, so such a run makes each once. (The same key string
// also spares the verdict cache hashing a new one per request.)
let lastMs = Number.NaN;
let lastIso = '';
const isoTime = (ms: number) => {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
};
let lastClient = { ip: '', ua: '', ja4: undefined as string | undefined, key: clientKey('', '', undefined) };
const keyOf = (ip: string, ua: string, ja4: string | undefined) => {
  if (ip !== lastClient.ip || ua !== lastClient.ua || ja4 !== lastClient.ja4) lastClient = { ip, ua, ja4, key: clientKey(ip, ua, ja4) };
  return lastClient.key;
};
