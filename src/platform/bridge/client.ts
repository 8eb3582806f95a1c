import { BRIDGE_HEADER } from '../http/auth.ts';
import { OutboundFailed, OutboundRefused, type OutboundPolicy, type Resolver, safePost } from '../outbound/safe-fetch.ts';

/**
 * One bridge call to a peer deployment (spec D7): a JSON POST (or a GET, `bridgeGet`) carrying the shared bridge
 * token in `X-Observatory-Bridge`, whose answer is read back (at most MAX_ANSWER_BYTES).
 *
 * It is `safePost` of platform/outbound/safe-fetch.ts, with every guard that has:
 * http(s) only, no user-info, allowed ports only, every resolved address public unless
 * OBSERVATORY_ALLOW_PRIVATE_OUTBOUND, the connection pinned to the checked address, no redirects
 * (a 3xx is an answer like any other status, so the token never follows one), and one deadline
 * over DNS, connect and the whole answer. Nothing here throws: a failure is a `BridgeAnswer` whose
 * `failure` names its kind, with the details (for the log only) in `detail`.
 */

export const MAX_ANSWER_BYTES = 64 * 1024;
const USER_AGENT = 'Observatory-Bridge/1';

export type BridgeFailure = 'outbound-refused' | 'timeout' | 'unreachable' | 'bad-answer';

export type BridgeAnswer =
  | { ok: true; status: number; /** The parsed body; null when it is not JSON. */ json: unknown }
  | { ok: false; failure: BridgeFailure; detail: string };

export interface BridgeCallOptions extends OutboundPolicy {
  token: string;
  timeoutMs: number;
  resolve?: Resolver;
}

export async function bridgePost(rawUrl: string, body: unknown, options: BridgeCallOptions): Promise<BridgeAnswer> {
  return bridgeCall(rawUrl, JSON.stringify(body), 'POST', options);
}

/**
 * One bridge read of a peer deployment (the federation fan-out, platform/bridge/fanout.ts): the
 * same guards and answer as `bridgePost`, as a GET without a body. `maxAnswerBytes` raises the
 * answer limit for reads whose answer grows with the data (the overview: one row per toolset).
 */
export async function bridgeGet(rawUrl: string, options: BridgeCallOptions & { maxAnswerBytes?: number }): Promise<BridgeAnswer> {
  return bridgeCall(rawUrl, '', 'GET', options);
}

async function bridgeCall(rawUrl: string, body: string, method: 'GET' | 'POST', options: BridgeCallOptions & { maxAnswerBytes?: number }): Promise<BridgeAnswer> {
  let reply;
  try {
    reply = await safePost(rawUrl, body, {
      method,
      allowPrivate: options.allowPrivate,
      allowedPorts: options.allowedPorts,
      timeoutMs: options.timeoutMs,
      headers: { accept: 'application/json', 'user-agent': USER_AGENT, [BRIDGE_HEADER]: options.token },
      readBodyBytes: options.maxAnswerBytes ?? MAX_ANSWER_BYTES,
      ...(options.resolve ? { resolve: options.resolve } : {}),
    });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    if (error instanceof OutboundRefused) return { ok: false, failure: 'outbound-refused', detail };
    if (error instanceof OutboundFailed && error.kind === 'timeout') return { ok: false, failure: 'timeout', detail };
    if (error instanceof OutboundFailed && error.kind === 'too-large') return { ok: false, failure: 'bad-answer', detail };
    return { ok: false, failure: 'unreachable', detail };
  }
  let json: unknown = null;
  try {
    json = JSON.parse((reply.body ?? Buffer.alloc(0)).toString('utf8')) as unknown;
  } catch {
    json = null;
  }
  return { ok: true, status: reply.status, json };
}
