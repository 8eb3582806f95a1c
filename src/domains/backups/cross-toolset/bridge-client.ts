import { BRIDGE_HEADER } from '../../../platform/http/auth.ts';
import { OutboundFailed, OutboundRefused, type OutboundPolicy, type Resolver, safePost } from '../../../platform/outbound/safe-fetch.ts';

/**
 * One bridge call to a peer's verify endpoint (spec D7): a JSON POST carrying the shared bridge
 * token in `X-Observatory-Bridge`, whose JSON answer is read back (at most MAX_ANSWER_BYTES).
 *
 * It is `safePost` of platform/outbound/safe-fetch.ts, with every guard that has:
 * http(s) only, no user-info, allowed ports only, every resolved address public unless
 * OBSERVATORY_ALLOW_PRIVATE_OUTBOUND, the connection pinned to the checked address, no redirects,
 * and one deadline over DNS, connect and the whole answer. Nothing here throws: every failure is a
 * `BridgeAnswer` with `error` set, so a fan-out lists it instead of failing.
 */

export const MAX_ANSWER_BYTES = 64 * 1024;
const USER_AGENT = 'Observatory-Bridge/1';

export type BridgeAnswer = { ok: true; status: number; json: unknown } | { ok: false; error: string };

export interface BridgeCallOptions extends OutboundPolicy {
  token: string;
  timeoutMs: number;
  resolve?: Resolver;
}

export async function bridgePost(rawUrl: string, body: unknown, options: BridgeCallOptions): Promise<BridgeAnswer> {
  let reply;
  try {
    reply = await safePost(rawUrl, JSON.stringify(body), {
      allowPrivate: options.allowPrivate,
      allowedPorts: options.allowedPorts,
      timeoutMs: options.timeoutMs,
      headers: { accept: 'application/json', 'user-agent': USER_AGENT, [BRIDGE_HEADER]: options.token },
      readBodyBytes: MAX_ANSWER_BYTES,
      ...(options.resolve ? { resolve: options.resolve } : {}),
    });
  } catch (error) {
    if (error instanceof OutboundRefused) return { ok: false, error: `refused: ${error.message}` };
    if (error instanceof OutboundFailed) return { ok: false, error: error.message };
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  try {
    return { ok: true, status: reply.status, json: JSON.parse((reply.body ?? Buffer.alloc(0)).toString('utf8')) as unknown };
  } catch {
    return { ok: false, error: `HTTP ${reply.status}: the answer is not JSON` };
  }
}
