import { createHash, type KeyObject, sign } from 'node:crypto';
import canonicalize from 'canonicalize';

/** What a toolset records: the members of one empire event it chooses. */
export interface ToolsetEvent {
  /** The toolset's own id, unique per toolset (1–128 characters); assigned when absent. */
  id?: string;
  eventType: string;
  /** ISO 8601; set to the time `record` was called when absent. */
  ts?: string;
  tenant?: string;
  /** The `id` of the event of the same toolset that caused this one. */
  causedBy?: string | null;
  payload?: Record<string, unknown>;
}

/** An event as it goes on the wire: every member it is signed with, plus its signature. */
export interface SignedEvent {
  id: string;
  eventType: string;
  ts?: string;
  tenant?: string;
  causedBy?: string | null;
  payload?: Record<string, unknown>;
  keyId?: string;
  signatureB64: string;
}

/**
 * The bytes the service verifies: the RFC 8785 (JCS) form of the toolset and the event's signed
 * members, members not sent left out (`causedBy: null` is sent, so signed as null). `keyId` and
 * the signature itself are not signed.
 */
export function signedBytes(toolset: string, event: Omit<SignedEvent, 'signatureB64' | 'keyId'>): Buffer {
  const { id, eventType, ts, tenant, causedBy, payload } = event;
  const text = canonicalize({ toolset, id, eventType, ts, tenant, causedBy, payload });
  if (text === undefined) throw new Error('the event has no JSON form');
  return Buffer.from(text, 'utf8');
}

/** SHA-256 hex of the signed bytes: the `eventHash` the service attests. */
export function eventHash(toolset: string, event: Omit<SignedEvent, 'signatureB64' | 'keyId'>): string {
  return createHash('sha256').update(signedBytes(toolset, event)).digest('hex');
}

/** Signs one event; `keyId` (the registration's id) makes the service try that key only. */
export function signEvent(toolset: string, event: Omit<SignedEvent, 'signatureB64' | 'keyId'>, privateKey: KeyObject, keyId?: string): SignedEvent {
  const signatureB64 = sign(null, signedBytes(toolset, event), privateKey).toString('base64');
  return { ...stripUndefined(event), ...(keyId === undefined ? {} : { keyId }), signatureB64 };
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
