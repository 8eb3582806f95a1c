import { createHmac } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { safeEqual } from '../crypto.ts';
import { ServiceError } from '../errors.ts';

/**
 * Signed, expiring links (registry auth mode `signed-url`): the link itself is the credential, so
 * a file can be handed to someone (an auditor, a browser download) without a token. The signature
 * is HMAC-SHA256 over `<path>\n<expires>` (the request path without its query, and the expiry in
 * Unix seconds) under a key of the deployment; a link whose path, expiry or signature was changed,
 * or whose expiry has passed, is refused 401 (docs/errors.md).
 *
 * Query: `expires=<unix seconds>&signature=<64 hex>`.
 */

/** What a signed link carries besides its path. */
export interface SignedQuery {
  expires: string;
  signature: string;
}

/** Why a link is refused: `bad-signature` (absent, malformed or not matching) or `expired-url`. */
export type SignedUrlRefusal = 'bad-signature' | 'expired-url';

/** The bytes the signature covers. */
export const signedText = (path: string, expiresUnix: number) => `${path}\n${expiresUnix}`;

export function signPath(key: Buffer, path: string, expiresUnix: number): string {
  return createHmac('sha256', key).update(signedText(path, expiresUnix)).digest('hex');
}

/**
 * Checks a link: the signature first, over the path and expiry as sent (so a changed expiry is a
 * bad signature, not a later one), then the expiry against `nowMs` (a link is good up to and
 * including its expiry second). Null when the link is good.
 */
export function checkSignedPath(key: Buffer, path: string, query: Partial<Record<keyof SignedQuery, unknown>>, nowMs: number): SignedUrlRefusal | null {
  const { expires, signature } = query;
  if (typeof expires !== 'string' || !/^[0-9]{1,12}$/.test(expires)) return 'bad-signature';
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) return 'bad-signature';
  const expiresUnix = Number(expires);
  if (!safeEqual(signPath(key, path, expiresUnix), signature)) return 'bad-signature';
  return expiresUnix * 1000 < nowMs ? 'expired-url' : null;
}

export interface UrlSigner {
  /** The link's query for `path`, good for the signer's time to live from now, and when it expires. */
  sign(path: string): { query: SignedQuery; expiresAt: Date };
  /** The `verifyCaller` of a `signed-url` endpoint: refuses the request 401 unless its link is good. */
  verifyCaller(request: FastifyRequest): Promise<void>;
}

/** `ttlSec`: how long a link stays good. */
export function createUrlSigner(options: { key: Buffer; clock: Clock; ttlSec: number }): UrlSigner {
  const { key, clock, ttlSec } = options;
  return {
    sign(path) {
      const expiresUnix = Math.floor(clock.now().getTime() / 1000) + ttlSec;
      return { query: { expires: String(expiresUnix), signature: signPath(key, path, expiresUnix) }, expiresAt: new Date(expiresUnix * 1000) };
    },
    async verifyCaller(request) {
      const refusal = checkSignedPath(key, requestPath(request), (request.query ?? {}) as Record<string, unknown>, clock.now().getTime());
      if (refusal === 'bad-signature') {
        throw new ServiceError(401, 'bad-signature', 'The link\'s signature does not match its path and expiry: it was changed or is incomplete. Ask for a new link.');
      }
      if (refusal === 'expired-url') throw new ServiceError(401, 'expired-url', 'The link has expired. Ask for a new link.');
    },
  };
}

/** The path the client asked for, percent-decoded, without its query. */
function requestPath(request: FastifyRequest): string {
  const raw = request.url.split('?')[0] ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
