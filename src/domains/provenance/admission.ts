/**
 * The admission rule of signed toolset events (spec D4 and A, "Events signed by a retired key"),
 * as pure functions of the event, the toolset's keys and which of them the signature verifies under.
 */

export type RejectionReason = 'unsigned' | 'bad-signature' | 'key-retired-before-event';

export interface VerifyingKey {
  id: string;
  publicKeyB64: string;
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
 * The keys a signed event is tried against, in order: the named key (`keyId`) alone, else every
 * key of the toolset, active ones first and the newest first among them (the newest active key
 * wins). An unsigned event has none.
 */
export function candidateKeys(event: { keyId?: string | undefined; signatureB64?: string | undefined }, keys: readonly VerifyingKey[]): VerifyingKey[] {
  if (event.signatureB64 === undefined) return [];
  return (event.keyId === undefined ? [...keys] : keys.filter((k) => k.id === event.keyId)).sort(
    (a, b) => Number(a.retiredAt !== null) - Number(b.retiredAt !== null) || b.createdAt.getTime() - a.createdAt.getTime(),
  );
}

/**
 * `verified[i]` says whether the signature verifies under `candidates[i]`.
 * - no signature: admitted in compatibility mode, or rejected `unsigned` when signatures are required;
 * - a key verifies an event whose `ts` is at or before its `retiredAt`; a signature that verifies
 *   only under keys retired before the event is rejected `key-retired-before-event`;
 * - a signature that verifies under no candidate is `bad-signature`.
 */
export function decideAdmission(
  event: { ts: Date; signatureB64?: string | undefined },
  candidates: readonly VerifyingKey[],
  verified: readonly boolean[],
  requireSigned: boolean,
): Decision {
  if (event.signatureB64 === undefined) {
    return requireSigned
      ? { admitted: false, compatMode: false, keyId: null, rejectionReason: 'unsigned' }
      : { admitted: true, compatMode: true, keyId: null, rejectionReason: null };
  }
  let retiredSigner: string | null = null;
  for (const [i, candidate] of candidates.entries()) {
    if (!verified[i]) continue;
    if (candidate.retiredAt === null || event.ts.getTime() <= candidate.retiredAt.getTime()) {
      return { admitted: true, compatMode: false, keyId: candidate.id, rejectionReason: null };
    }
    retiredSigner ??= candidate.id;
  }
  return retiredSigner !== null
    ? { admitted: false, compatMode: false, keyId: retiredSigner, rejectionReason: 'key-retired-before-event' }
    : { admitted: false, compatMode: false, keyId: null, rejectionReason: 'bad-signature' };
}
