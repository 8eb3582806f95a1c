import type { FastifyRequest } from 'fastify';
import { forbidden, unauthorized } from '../errors.ts';
import { safeEqual } from '../crypto.ts';
import type { BridgeTokens } from '../faults/index.ts';
import { CHECKED_BY_ENDPOINT, type Endpoint, type Principal } from './registry.ts';

export const SESSION_COOKIE = 'obs_session';

/**
 * Turns credentials into a Principal. The identity domain implements it; the platform only knows
 * the interface, so it imports no domain.
 */
export interface CredentialResolver {
  fromBearer(token: string): Promise<Principal | null>;
  fromSession(sessionSecret: string): Promise<Principal | null>;
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? (match[1] ?? null) : null;
}

/** The header a peer deployment presents OBSERVATORY_BRIDGE_TOKEN in (spec D7). */
export const BRIDGE_HEADER = 'x-observatory-bridge';

/**
 * The bridge credential, on an endpoint that opted in (registry `bridge`): the header must equal
 * the configured token or the staged next one (constant-time, faults/bridge-tokens.ts); a wrong
 * one, or any when no token is configured, is 401.
 * The caller is the operator `bridge` holding only the endpoint's own scope. Null when the request
 * carries no bridge header (the endpoint's other credentials apply).
 */
function bridgePrincipal(endpoint: Endpoint, request: FastifyRequest, bridgeTokens: BridgeTokens | null): Principal | null {
  const header = request.headers[BRIDGE_HEADER];
  if (!endpoint.bridge || header === undefined) return null;
  // With no current token nothing is accepted (faults/bridge-tokens.ts), so outgoing() is null exactly then.
  if (bridgeTokens === null || bridgeTokens.outgoing() === null) throw unauthorized('Bridge calls are refused: this deployment has no OBSERVATORY_BRIDGE_TOKEN.');
  if (typeof header !== 'string' || !bridgeTokens.accepts(header)) throw unauthorized('The bridge token is not valid.');
  return { userId: 'bridge', username: 'bridge', scopes: new Set([endpoint.scope!]), toolsets: null, via: 'bridge', tokenId: null, sessionId: null };
}

/**
 * Resolves and checks the caller for one endpoint: 401 when no valid credential is presented,
 * 403 when the credential lacks the endpoint's scope. A bearer token wins over a session cookie;
 * on an endpoint that opted in, a bridge header wins over both (and is no credential elsewhere).
 */
export async function authenticate(
  endpoint: Endpoint,
  request: FastifyRequest,
  credentials: CredentialResolver,
  metricsToken: string | null,
  bridgeTokens: BridgeTokens | null = null,
): Promise<Principal | null> {
  // Signed endpoints, signed links and the public agent API check their caller once the body is read (the route's verifyCaller).
  if (endpoint.auth === 'none' || CHECKED_BY_ENDPOINT.has(endpoint.auth)) return null;
  const bridge = bridgePrincipal(endpoint, request, bridgeTokens);
  if (bridge !== null) return bridge;
  const token = bearerToken(request);
  if (endpoint.auth === 'metrics' && token !== null && metricsToken !== null && safeEqual(token, metricsToken)) {
    return { userId: 'metrics', username: 'metrics', scopes: new Set(), toolsets: null, via: 'metrics-token', tokenId: null, sessionId: null };
  }
  let principal: Principal | null = null;
  if (token !== null) {
    principal = await credentials.fromBearer(token);
  } else {
    const cookie = request.cookies?.[SESSION_COOKIE];
    if (cookie) principal = await credentials.fromSession(cookie);
  }
  if (!principal) throw unauthorized();
  const scope = endpoint.auth === 'metrics' ? 'read:dashboard' : endpoint.scope;
  if (scope !== null && !principal.scopes.has(scope)) {
    throw forbidden(`This call needs the scope ${scope}, which the credential does not carry.`);
  }
  if (endpoint.spansEveryToolset !== null) assertSpansNoToolset(principal, endpoint.spansEveryToolset);
  return principal;
}

/*
 * Toolset binding (docs/operations.md, "Security model", "Toolset binding"). A credential bound to
 * toolsets (a token created with `toolsets`) reaches those toolsets only, for reads as for writes:
 *
 * 1. a request naming a toolset outside the binding is 403 naming it (assertToolsetInReach);
 * 2. one record of another toolset answers as if it did not exist (inToolsetReach, then the
 *    caller's own 404);
 * 3. lists and aggregates narrow silently to the binding (toolsetReach, platform/db/reach.ts);
 * 4. a read or action that spans every toolset is 403 (assertSpansNoToolset; declared per endpoint
 *    with `spansEveryToolset` in the registry and checked by `authenticate`);
 * 5. facts of no toolset follow scopes alone.
 *
 * An unbound token, a session, or an internal caller (null) reaches every toolset.
 */

/**
 * Who asks, as far as toolset binding goes: a credential (bound or not), or null for the service
 * itself (a job, another domain), which reaches every toolset. Reads take it as a required
 * argument, so a caller that forgets it fails to compile rather than reading the whole fleet.
 */
export type ToolsetCaller = Pick<Principal, 'toolsets'> | null;

/** The toolsets a credential reaches, sorted: null for every toolset (not bound, or an internal caller). */
export function toolsetReach(principal: ToolsetCaller): readonly string[] | null {
  return principal === null || principal.toolsets === null ? null : [...principal.toolsets].sort();
}

/** Whether the credential reaches `toolset` (rule 2: a record of another toolset is answered as unknown). */
export function inToolsetReach(principal: ToolsetCaller, toolset: string): boolean {
  return principal === null || principal.toolsets === null || principal.toolsets.has(toolset);
}

/**
 * Rule 1: a request that names a toolset outside the binding (a path `{toolset}`, a `toolset` filter
 * or body member) is 403 naming it; the caller named it, so naming it back tells nothing.
 */
export function assertToolsetInReach(principal: ToolsetCaller, toolset: string, action: string): void {
  if (inToolsetReach(principal, toolset)) return;
  throw forbidden(`This token is bound to other toolsets and may not ${action} toolset ${toolset}.`);
}

/**
 * Rule 4: what spans every toolset and cannot be narrowed without lying (the audit chain, the
 * operator audit log, fleet-wide runs) is refused to a bound credential. `what` completes
 * "This token is bound to toolsets; … spans every toolset."
 */
export function assertSpansNoToolset(principal: ToolsetCaller, what: string): void {
  if (principal === null || principal.toolsets === null) return;
  throw forbidden(`This token is bound to toolsets; ${what} spans every toolset.`);
}
