import type { FastifyRequest } from 'fastify';
import { forbidden, unauthorized } from '../errors.ts';
import { safeEqual } from '../crypto.ts';
import type { Endpoint, Principal } from './registry.ts';

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
 * the configured token (constant-time); a wrong one, or any when no token is configured, is 401.
 * The caller is the operator `bridge` holding only the endpoint's own scope. Null when the request
 * carries no bridge header (the endpoint's other credentials apply).
 */
function bridgePrincipal(endpoint: Endpoint, request: FastifyRequest, bridgeToken: string | null): Principal | null {
  const header = request.headers[BRIDGE_HEADER];
  if (!endpoint.bridge || header === undefined) return null;
  if (bridgeToken === null || bridgeToken === '') throw unauthorized('Bridge calls are refused: this deployment has no OBSERVATORY_BRIDGE_TOKEN.');
  if (typeof header !== 'string' || !safeEqual(header, bridgeToken)) throw unauthorized('The bridge token is not valid.');
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
  bridgeToken: string | null = null,
): Promise<Principal | null> {
  // Signed endpoints and the public agent API check their caller once the body is read (the route's verifyCaller).
  if (endpoint.auth === 'none' || endpoint.auth === 'tenant-signature' || endpoint.auth === 'agent-key') return null;
  const bridge = bridgePrincipal(endpoint, request, bridgeToken);
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
  return principal;
}

/**
 * A credential bound to toolsets (a token created with `toolsets`) acts on those toolsets only:
 * writing their events, their signing keys and policy, their alert rules. Anything else is 403
 * naming the toolset. An unbound token, a session, or an internal caller (null) reaches every toolset.
 */
export function assertToolsetInReach(principal: Principal | null, toolset: string, action: string): void {
  if (principal === null || principal.toolsets === null || principal.toolsets.has(toolset)) return;
  throw forbidden(`This token is bound to other toolsets and may not ${action} toolset ${toolset}.`);
}
