import type { FastifyBaseLogger } from 'fastify';
import { checkOutboundUrl, OutboundRefused, type OutboundPolicy, type Resolver } from '../outbound/safe-fetch.ts';
import { type BridgeAnswer, bridgeGet } from './client.ts';

/**
 * The bridge fan-out (spec D7; docs/federation/README.md, "Bridge"): one read asked of many peer
 * deployments in parallel, at most `concurrency` at a time, each call bounded by `timeoutMs`,
 * never retried. It never throws: a peer that cannot be asked, does not answer in time, refuses
 * the token or answers something unreadable is a `failed` entry {region, reason} whose reason is a
 * word of FANOUT_REASONS. What the peer said (a status text, a connection error naming addresses,
 * its body) goes to the log only: a peer chooses which reason it earns, never the words a caller reads.
 *
 * Where the token may go: only to the peer's registered origin (its `baseUrl`, an origin without
 * path, query or fragment), only at the path the caller names (a federation bridge route), only
 * to a host listed in OBSERVATORY_BRIDGE_PEER_HOSTS, only over https unless
 * OBSERVATORY_ALLOW_PRIVATE_OUTBOUND, and through every guard of platform/outbound/safe-fetch.ts
 * (allowed ports, public addresses, the connection pinned to the checked address, no redirects).
 */

export const FANOUT_REASONS = {
  'bridge-token-not-set': 'OBSERVATORY_BRIDGE_TOKEN is not set on this deployment, so no peer was asked.',
  'bad-base-url': 'Not asked: the region\'s baseUrl is not an origin (scheme, host and port only).',
  'host-not-allowed': 'Not asked: the region\'s host is not in OBSERVATORY_BRIDGE_PEER_HOSTS, the hosts the bridge token may be sent to.',
  'not-https': 'Not asked: the bridge token is only sent over https (http is allowed with OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1).',
  'outbound-refused': 'Not asked: the outbound policy refuses the region\'s URL or the address its host resolves to.',
  unreachable: 'The region could not be reached (name resolution, connection refused or reset, or the connection closed early).',
  timeout: 'The region did not answer within OBSERVATORY_FEDERATION_TIMEOUT_MS.',
  'bridge-token-refused': 'The region refused this deployment\'s bridge token (HTTP 401 or 403).',
  'unexpected-status': 'The region answered with an HTTP status other than 200.',
  'bad-answer': 'The region\'s answer is not the expected answer (not JSON, too large, or without the expected fields).',
} as const;

export type FanOutReason = keyof typeof FANOUT_REASONS;
export const FANOUT_REASON_NAMES = Object.keys(FANOUT_REASONS) as FanOutReason[];

/** A peer to ask: its region key and registered origin. */
export interface BridgePeer {
  region: string;
  baseUrl: string;
}

/** What the fan-out may do (the bridge tokens, config.crossToolset.peerHosts, config.federation, config.outbound). */
export interface FanOutPolicy extends OutboundPolicy {
  /**
   * The bridge token to send, read at each fan-out (BridgeTokens.outgoing: OBSERVATORY_BRIDGE_TOKEN,
   * or the staged one during a rotation rehearsal); null: nobody is asked, every peer fails `bridge-token-not-set`.
   */
  token: () => string | null;
  /** OBSERVATORY_BRIDGE_PEER_HOSTS (lower-case host names or addresses, IPv6 in brackets). */
  peerHosts: readonly string[];
  /** OBSERVATORY_FEDERATION_TIMEOUT_MS: the deadline of each call (DNS, connect and the whole answer). */
  timeoutMs: number;
  /** OBSERVATORY_FEDERATION_CONCURRENCY: calls in flight at once. */
  concurrency: number;
  /** Replaces DNS (tests). */
  resolve?: Resolver;
}

export interface FailedPeer {
  region: string;
  reason: FanOutReason;
}

export interface FanOutResult<T> {
  /** The peers that answered, in the order they were given. */
  answered: { region: string; value: T }[];
  /** The peers that did not, in the order they were given. */
  failed: FailedPeer[];
}

/** Why `baseUrl` may not be an origin the token goes to; null when it may. Checked again at every call. */
export function peerOriginProblem(baseUrl: string, policy: Pick<FanOutPolicy, 'peerHosts' | 'allowPrivate' | 'allowedPorts'>): FanOutReason | null {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return 'bad-base-url';
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    return 'bad-base-url';
  }
  if (!policy.peerHosts.includes(url.hostname.toLowerCase())) return 'host-not-allowed';
  if (url.protocol !== 'https:' && !policy.allowPrivate) return 'not-https';
  try {
    checkOutboundUrl(url.toString(), policy);
  } catch (error) {
    if (error instanceof OutboundRefused) return 'outbound-refused';
    throw error;
  }
  return null;
}

/**
 * Resolves once the event loop has turned twice: the fan-out's first calls have connected (on
 * loopback and nearby peers) and written their requests. A caller that computes its own answer in
 * this thread while the peers compute theirs (the embedded database runs its queries on this
 * thread) awaits it first, so the peers start at once rather than after that work.
 */
export function afterDispatch(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** The reason a bridge answer earns when it is not a readable 200; null when it is one. */
export function answerProblem(reply: BridgeAnswer): FanOutReason | null {
  if (!reply.ok) return reply.failure === 'outbound-refused' ? 'outbound-refused' : reply.failure;
  if (reply.status === 401 || reply.status === 403) return 'bridge-token-refused';
  if (reply.status !== 200) return 'unexpected-status';
  return null;
}

/**
 * Asks every peer `GET <origin><path>` with the bridge token and reads each 200 answer with
 * `read` (null: `bad-answer`). Never throws, never retries.
 */
export async function fanOut<T>(
  peers: readonly BridgePeer[],
  options: {
    path: string;
    policy: FanOutPolicy;
    /** Reads a 200 answer of `peer`; null (or a throw): `bad-answer`. */
    read: (json: unknown, peer: BridgePeer) => T | null;
    log: Pick<FastifyBaseLogger, 'warn'>;
    /** The answer limit of each call (default: the bridge client's). */
    maxAnswerBytes?: number;
    /** Names the read in log lines. */
    what: string;
  },
): Promise<FanOutResult<T>> {
  const { policy, log } = options;
  // One token for the whole fan-out: a rehearsal switching mid-way does not mix the two.
  const token = policy.token();
  const outcomes: ({ ok: true; value: T } | { ok: false; reason: FanOutReason })[] = new Array(peers.length);
  const fail = (peer: BridgePeer, reason: FanOutReason, detail: unknown) => {
    log.warn({ region: peer.region, reason, detail, read: options.what }, 'federation fan-out: the region did not answer');
    return { ok: false as const, reason };
  };
  const askOne = async (peer: BridgePeer): Promise<(typeof outcomes)[number]> => {
    if (token === null || token === '') return { ok: false, reason: 'bridge-token-not-set' };
    const problem = peerOriginProblem(peer.baseUrl, policy);
    if (problem !== null) return fail(peer, problem, null);
    const url = `${new URL(peer.baseUrl).origin}${options.path}`;
    let reply: BridgeAnswer;
    try {
      reply = await bridgeGet(url, {
        allowPrivate: policy.allowPrivate,
        allowedPorts: policy.allowedPorts,
        token,
        timeoutMs: policy.timeoutMs,
        ...(options.maxAnswerBytes !== undefined ? { maxAnswerBytes: options.maxAnswerBytes } : {}),
        ...(policy.resolve ? { resolve: policy.resolve } : {}),
      });
    } catch (error) {
      return fail(peer, 'unreachable', error instanceof Error ? error.message : String(error));
    }
    const wrong = answerProblem(reply);
    if (wrong !== null) return fail(peer, wrong, reply.ok ? { status: reply.status } : reply.detail);
    let value: T | null = null;
    try {
      value = options.read(reply.ok ? reply.json : null, peer);
    } catch {
      value = null;
    }
    if (value === null) return fail(peer, 'bad-answer', 'the answer does not have the expected shape');
    return { ok: true, value };
  };
  let next = 0;
  const worker = async () => {
    while (next < peers.length) {
      const index = next++;
      outcomes[index] = await askOne(peers[index]!);
    }
  };
  const width = Math.max(1, Math.min(policy.concurrency, peers.length));
  await Promise.all(Array.from({ length: width }, worker));
  const result: FanOutResult<T> = { answered: [], failed: [] };
  peers.forEach((peer, i) => {
    const outcome = outcomes[i]!;
    if (outcome.ok) result.answered.push({ region: peer.region, value: outcome.value });
    else result.failed.push({ region: peer.region, reason: outcome.reason });
  });
  return result;
}
