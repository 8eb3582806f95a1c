import type { KeyObject } from 'node:crypto';
import { verifySignature } from './ed25519.ts';

/**
 * The admission rule of signed toolset events (spec D4 and A, "Events signed by a retired key"),
 * as a pure function of the event, its signed bytes and the toolset's keys.
 */

export type RejectionReason = 'unsigned' | 'bad-signature' | 'key-retired-before-event';

export interface VerifyingKey {
  id: string;
  key: KeyObject;
  createdAt: Date;
  /** null while active. */
  retiredAt: Date | null;
}

export interface Decision {
  admitted: boolean;
  compatMode: boolean;
  /** The key whose signature verified (admitted or retired-before-event); null otherwise. */
  keyId: string | null;
  rejectionReason: RejectionReason | null;
}

/**
 * - no signature: admitted in compatibility mode, or rejected `unsigned` when signatures are required;
 * - a signature is tried against the named key (`keyId`), else against every key of the toolset,
 *   active ones first and newest first among them (the newest active key wins);
 * - a key verifies an event whose `ts` is at or before its `retiredAt`; a signature that verifies
 *   only under keys retired before the event is rejected `key-retired-before-event`;
 * - a signature that verifies under no key (or names a key the toolset does not have) is `bad-signature`.
 */
export function decideAdmission(
  event: { ts: Date; keyId?: string | undefined; signatureB64?: string | undefined },
  signedBytes: Buffer,
  keys: readonly VerifyingKey[],
  requireSigned: boolean,
): Decision {
  if (event.signatureB64 === undefined) {
    return requireSigned
      ? { admitted: false, compatMode: false, keyId: null, rejectionReason: 'unsigned' }
      : { admitted: true, compatMode: true, keyId: null, rejectionReason: null };
  }
  const candidates = (event.keyId === undefined ? [...keys] : keys.filter((k) => k.id === event.keyId)).sort(
    (a, b) => Number(a.retiredAt !== null) - Number(b.retiredAt !== null) || b.createdAt.getTime() - a.createdAt.getTime(),
  );
  let retiredSigner: string | null = null;
  for (const candidate of candidates) {
    if (!verifySignature(candidate.key, signedBytes, event.signatureB64)) continue;
    if (candidate.retiredAt === null || event.ts.getTime() <= candidate.retiredAt.getTime()) {
      return { admitted: true, compatMode: false, keyId: candidate.id, rejectionReason: null };
    }
    retiredSigner ??= candidate.id;
  }
  return retiredSigner !== null
    ? { admitted: false, compatMode: false, keyId: retiredSigner, rejectionReason: 'key-retired-before-event' }
    : { admitted: false, compatMode: false, keyId: null, rejectionReason: 'bad-signature' };
}
