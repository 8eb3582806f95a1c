import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * One outbound POST to a URL someone else chose (a rule's webhook, a chat webhook under test),
 * guarded against server-side request forgery:
 *
 * - only `http:` and `https:` URLs without user-info are sent, and only to a port of the
 *   allow-list (`OBSERVATORY_OUTBOUND_ALLOWED_PORTS`, default 80 and 443), so a webhook cannot be
 *   aimed at a database, SMTP or admin port of a host it may otherwise reach;
 * - the host is resolved once (`dns.lookup` with `all: true`) and the request is refused when ANY
 *   of its addresses is not global unicast (loopback, RFC 1918, link-local and the metadata
 *   address 169.254.169.254, carrier-grade NAT, unique-local, multicast, unspecified, reserved,
 *   IPv4-mapped/NAT64/6to4/Teredo forms, …), unless `allowPrivate`. The refusal does not say which
 *   address the name resolved to: it reaches API callers (the chat webhook test) and listings
 *   (`last_error`), and naming it would let them map internal DNS;
 * - the connection is pinned to the address that was checked: `http.request` gets a `lookup`
 *   function that answers with that address and never asks DNS again, so a rebinding DNS server
 *   cannot hand out a public address to the check and a private one to the connect. The hostname
 *   itself is kept for the Host header, TLS SNI and certificate verification;
 * - redirects are never followed (a 3xx is reported as a failed delivery with its status);
 * - the whole exchange, DNS included, is bounded by `timeoutMs` (`AbortSignal.timeout`).
 *
 * Why `node:http` with `lookup` and not `fetch` with an undici Agent: Node 20's global fetch is
 * the undici bundled inside Node, and an Agent from the npm `undici` package (a different major)
 * is not guaranteed to interoperate with it as a dispatcher; pulling in npm undici just for this
 * would also mean a second HTTP stack. `http.request`'s `lookup` option is a stable public API of
 * `net.connect` since Node 0.x, works the same for `https`, and its only subtlety (Node ≥ 20 calls
 * it with `{ all: true }` for happy-eyeballs) is handled below.
 */

/** The URL or its address is not allowed; nothing was sent. */
export class OutboundRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'OutboundRefused';
  }
}

/** The request could not be completed (DNS failure, connection error, timeout); it may have been sent. */
export class OutboundFailed extends Error {
  constructor(
    message: string,
    options?: { cause?: unknown },
    /** What went wrong: the time ran out, the answer was larger than allowed, or the network failed. */
    readonly kind: 'timeout' | 'too-large' | 'network' = 'network',
  ) {
    super(message, options);
    this.name = 'OutboundFailed';
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to every address it has; `dns.lookup(host, { all: true })` by default. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** What outbound calls may reach (config.outbound). */
export interface OutboundPolicy {
  /** Allow loopback, private and other non-public addresses (tests, lab setups). */
  allowPrivate: boolean;
  /** TCP ports calls may go to; applies whatever `allowPrivate` says. */
  allowedPorts: readonly number[];
}

export interface SafePostOptions extends OutboundPolicy {
  /**
   * The HTTP method: `POST` (default, with the body) or `GET` (no body is sent; a bridge read of a
   * peer deployment). Every guard below applies to both.
   */
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  timeoutMs: number;
  /** Replaces DNS resolution (tests); the result is checked and pinned like a real answer. */
  resolve?: Resolver;
  /**
   * Read the answer's body, at most this many bytes (a longer one is an OutboundFailed), within
   * the same deadline. Without it the body is not read.
   */
  readBodyBytes?: number;
}

export interface SafePostResult {
  /** The HTTP status; a 3xx is reported as it is, never followed. */
  status: number;
  /** True for 2xx only. */
  ok: boolean;
  /** The answer's body, when `readBodyBytes` asked for it. */
  body?: Buffer;
}

const USER_AGENT = 'Observatory-Outbound/1';

/** IPv6 global unicast (2000::/3); everything outside it is refused. */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * What kind of non-public address this is ("loopback", "IPv4-mapped private", …), or null when it
 * is a public unicast address. Allow-list: anything ipaddr.js does not classify as `unicast` is
 * refused, so a newly reserved range is refused as soon as the library knows it, and IPv6 space
 * outside 2000::/3 is refused outright.
 */
export function nonPublicKind(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return 'unparseable';
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.zoneId !== undefined) return 'zoned IPv6';
    if (v6.isIPv4MappedAddress()) {
      const range = v6.toIPv4Address().range();
      return range === 'unicast' ? null : `IPv4-mapped ${describe(range)}`;
    }
    const range = v6.range();
    if (range !== 'unicast') return describe(range);
    return v6.match(GLOBAL_UNICAST_V6) ? null : 'non-global IPv6';
  }
  const range = (parsed as ipaddr.IPv4).range();
  return range === 'unicast' ? null : describe(range);
}

/** Why an address may not be contacted, or null when it may. */
export function addressRefusal(address: string): string | null {
  const kind = nonPublicKind(address);
  return kind === null ? null : `${address} is not a public address (${kind}; ${PRIVATE_OUTBOUND_HINT})`;
}

const RANGE_WORDS: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  reserved: 'reserved',
  uniqueLocal: 'unique-local',
  ipv4Mapped: 'IPv4-mapped',
  rfc6145: 'IPv4-translated',
  rfc6052: 'NAT64',
  '6to4': '6to4',
  teredo: 'Teredo',
  benchmarking: 'benchmarking',
  deprecatedSiteLocal: 'site-local',
};

function describe(range: string): string {
  return RANGE_WORDS[range] ?? `special-purpose (${range})`;
}

/** `localhost` and `*.localhost` always mean loopback (RFC 6761), whatever DNS says. */
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** The port a URL connects to: its explicit port, else its scheme's default. */
function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** Why a URL's port may not be used, or null when it may. */
function portRefusal(url: URL, allowedPorts: readonly number[]): string | null {
  const port = effectivePort(url);
  if (allowedPorts.includes(port)) return null;
  return `port ${port} is not an allowed outbound port (allowed: ${allowedPorts.join(', ')}; set OBSERVATORY_OUTBOUND_ALLOWED_PORTS)`;
}

/**
 * What every refusal of a non-public address or name ends with: the setting that lifts the check,
 * as a port refusal names OBSERVATORY_OUTBOUND_ALLOWED_PORTS, so whoever meets it in a lab knows
 * where to turn (and whoever meets it in production knows it is policy, not a fault).
 */
export const PRIVATE_OUTBOUND_HINT = 'set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 to allow non-public addresses';

/** The refusal for a name that resolves to a non-public address; deliberately without the address. */
function resolvedRefusal(host: string): string {
  return `${host} resolves to an address outbound calls may not reach (${PRIVATE_OUTBOUND_HINT})`;
}

/** The host part of a URL without IPv6 brackets. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * The checks that need no DNS: scheme, user-info, literal-IP hosts, `localhost` names and the
 * port. Returns the parsed URL or throws OutboundRefused. Used by `safePost` and, synchronously,
 * by `validateDestinations` so a rule with an unusable URL is refused at creation.
 */
export function checkOutboundUrl(raw: string, policy: OutboundPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused('the URL is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundRefused(`only http and https URLs are allowed, not ${url.protocol.replace(/:$/, '')}`);
  }
  if (url.username !== '' || url.password !== '') throw new OutboundRefused('the URL must not carry a user name or password');
  const host = bareHost(url);
  if (host === '') throw new OutboundRefused('the URL has no host');
  if (!policy.allowPrivate) {
    if (isLocalhostName(host)) throw new OutboundRefused(`${host} is a loopback name (${PRIVATE_OUTBOUND_HINT})`);
    if (isIP(host) !== 0) {
      const refusal = addressRefusal(host);
      if (refusal !== null) throw new OutboundRefused(refusal);
    }
  }
  const badPort = portRefusal(url, policy.allowedPorts);
  if (badPort !== null) throw new OutboundRefused(badPort);
  return url;
}

/** Rejects when `signal` aborts first; the losing promise is left to settle on its own. */
function raceSignal<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * A `lookup` for `net.connect` that answers with the addresses already checked and never asks DNS
 * again. Node ≥ 20 asks for every address (`all: true`) and tries them in turn (happy eyeballs);
 * every one of them passed the check.
 */
export function pinnedLookup(checked: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const first = checked[0];
    if (first === undefined) {
      callback(Object.assign(new Error('no checked address'), { code: 'ENOTFOUND' }), '', 4);
    } else if (options.all) {
      (callback as (err: null, addresses: ResolvedAddress[]) => void)(null, [...checked]);
    } else {
      callback(null, first.address, first.family);
    }
  };
}

function describeNetworkError(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(error);
  return typeof e.code === 'string' && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}

/** GETs `rawUrl` once, with every guard of `safePost` (the method option of the one implementation). */
export function safeGet(rawUrl: string, options: Omit<SafePostOptions, 'method'>): Promise<SafePostResult> {
  return safePost(rawUrl, '', { ...options, method: 'GET' });
}

/**
 * POSTs `body` to `rawUrl` once (or GETs it, without a body, with `method: 'GET'`). Throws OutboundRefused when the URL or any address of its host is
 * not allowed (nothing is sent), OutboundFailed on DNS, connection or timeout failures; otherwise
 * returns the status (2xx is `ok`). The response body is not read.
 */
export async function safePost(rawUrl: string, body: string, options: SafePostOptions): Promise<SafePostResult> {
  const url = checkOutboundUrl(rawUrl, options);
  const host = bareHost(url);
  const signal = AbortSignal.timeout(options.timeoutMs);
  const timedOut = () => new OutboundFailed(`timed out after ${options.timeoutMs} ms`, undefined, 'timeout');

  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await raceSignal((options.resolve ?? systemResolver)(host), signal);
    } catch (error) {
      if (signal.aborted) throw timedOut();
      throw new OutboundFailed(`could not resolve ${host}: ${describeNetworkError(error)}`, { cause: error });
    }
    if (addresses.length === 0) throw new OutboundFailed(`could not resolve ${host}: no addresses`);
  }
  if (!options.allowPrivate) {
    // A literal address was already refused by checkOutboundUrl; only DNS answers are left.
    if (addresses.some(({ address }) => nonPublicKind(address) !== null)) throw new OutboundRefused(resolvedRefusal(host));
  }
  const method = options.method ?? 'POST';
  const payload = method === 'GET' ? null : Buffer.from(body, 'utf8');
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<SafePostResult>((resolve, reject) => {
    let settled = false;
    const request = transport.request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method,
        // A fresh connection per delivery: no pooled socket can outlive the address check.
        agent: false,
        lookup: pinnedLookup(addresses),
        signal,
        headers:
          payload === null
            ? { 'user-agent': USER_AGENT, ...options.headers }
            : { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...options.headers, 'content-length': String(payload.length) },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        const limit = options.readBodyBytes;
        if (limit === undefined) {
          settled = true;
          // Only the status matters; do not let a large or endless body hold the socket.
          response.destroy();
          resolve({ status, ok });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > limit) {
            fail(new OutboundFailed(`HTTP ${status}: the answer is larger than ${limit} bytes`, undefined, 'too-large'));
            response.destroy();
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', fail);
        // A deadline or a peer that hangs up mid-answer may end the stream without an 'error'.
        response.on('close', () => {
          if (!response.complete) fail(new Error('the connection closed before the answer ended'));
        });
        response.on('end', () => {
          if (settled) return;
          settled = true;
          resolve({ status, ok, body: Buffer.concat(chunks) });
        });
      },
    );
    function fail(error: unknown): void {
      if (settled) return;
      settled = true;
      reject(
        error instanceof OutboundFailed ? error : signal.aborted ? timedOut() : new OutboundFailed(describeNetworkError(error), { cause: error }),
      );
    }
    request.on('error', fail);
    if (payload === null) request.end();
    else request.end(payload);
  });
}
