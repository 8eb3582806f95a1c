import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import {
  bareHost,
  checkOutboundUrl,
  nonPublicKind,
  type OutboundPolicy,
  pinnedLookup,
  type ResolvedAddress,
  type Resolver,
  systemResolver,
} from '../../../platform/outbound/safe-fetch.ts';

/**
 * One bridge call to a peer's verify endpoint (spec D7): a JSON POST carrying the shared bridge
 * token in `X-Observatory-Bridge`, whose JSON answer is read back (at most MAX_ANSWER_BYTES).
 *
 * It keeps every guard of platform/outbound/safe-fetch.ts, whose URL and address checks it reuses:
 * http(s) only, no user-info, allowed ports only, every resolved address public unless
 * OBSERVATORY_ALLOW_PRIVATE_OUTBOUND, the connection pinned to the checked address, no redirects,
 * and one deadline over DNS, connect and the whole answer. It exists beside `safePost` because
 * that one never reads the answer. Nothing here throws: every failure is a `BridgeAnswer` with
 * `error` set, so a fan-out lists it instead of failing.
 */

export const MAX_ANSWER_BYTES = 64 * 1024;
export const BRIDGE_HEADER = 'x-observatory-bridge';
const USER_AGENT = 'Observatory-Bridge/1';

export type BridgeAnswer = { ok: true; status: number; json: unknown } | { ok: false; error: string };

export interface BridgeCallOptions extends OutboundPolicy {
  token: string;
  timeoutMs: number;
  resolve?: Resolver;
}

function describeNetworkError(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(error);
  return typeof e.code === 'string' && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}

export async function bridgePost(rawUrl: string, body: unknown, options: BridgeCallOptions): Promise<BridgeAnswer> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const timedOut: BridgeAnswer = { ok: false, error: `timed out after ${options.timeoutMs} ms` };
  let url: URL;
  try {
    url = checkOutboundUrl(rawUrl, options);
  } catch (error) {
    return { ok: false, error: `refused: ${describeNetworkError(error)}` };
  }
  const host = bareHost(url);
  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await Promise.race([
        (options.resolve ?? systemResolver)(host),
        new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
      ]);
    } catch (error) {
      if (signal.aborted) return timedOut;
      return { ok: false, error: `could not resolve ${host}: ${describeNetworkError(error)}` };
    }
    if (addresses.length === 0) return { ok: false, error: `could not resolve ${host}: no addresses` };
    if (!options.allowPrivate && addresses.some(({ address }) => nonPublicKind(address) !== null)) {
      return { ok: false, error: `refused: ${host} resolves to an address outbound calls may not reach` };
    }
  }
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<BridgeAnswer>((resolve) => {
    let settled = false;
    const settle = (answer: BridgeAnswer) => {
      if (settled) return;
      settled = true;
      resolve(answer);
    };
    const request = transport.request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        agent: false,
        lookup: pinnedLookup(addresses),
        signal,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'user-agent': USER_AGENT,
          [BRIDGE_HEADER]: options.token,
          'content-length': String(payload.length),
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            settle({ ok: false, error: `HTTP ${status}: the answer is larger than ${MAX_ANSWER_BYTES} bytes` });
            response.destroy();
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', (error) => settle(signal.aborted ? timedOut : { ok: false, error: describeNetworkError(error) }));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            settle({ ok: false, error: `HTTP ${status}: the answer is not JSON` });
            return;
          }
          settle({ ok: true, status, json });
        });
      },
    );
    request.on('error', (error) => settle(signal.aborted ? timedOut : { ok: false, error: describeNetworkError(error) }));
    request.end(payload);
  });
}
