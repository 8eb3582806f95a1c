import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { EMPIRE_INGEST_PATH } from '../../src/domains/empire/ingest/endpoints.ts';
import { type EmpireEvent, signedBytesOf } from '../../src/domains/empire/ingest/service.ts';
import { type Scope, V1 } from '../../src/platform/http/registry.ts';
import type { TestApp } from './app.ts';

export const EMPIRE_INGEST = EMPIRE_INGEST_PATH;

/** An Ed25519 key pair made with node:crypto, its public key as the raw 32 bytes in base64. */
export function nodeKeyPair(): { privateKey: KeyObject; publicKeyB64: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x as string;
  return { privateKey, publicKeyB64: Buffer.from(x, 'base64url').toString('base64') };
}

/** The event with `signatureB64` over its canonical bytes, signed with node:crypto. */
export function signWithNode(toolset: string, event: EmpireEvent, privateKey: KeyObject): EmpireEvent {
  return { ...event, signatureB64: sign(null, signedBytesOf(toolset, event), privateKey).toString('base64') };
}

/** Registers a public key for a toolset through the API; returns the key's id. */
export async function registerKey(t: TestApp, toolset: string, publicKeyB64: string): Promise<string> {
  const res = await t.call({ method: 'POST', url: `${V1}/provenance/keys`, payload: { toolset, publicKeyB64 } });
  if (res.statusCode !== 200) throw new Error(`key register failed: ${res.statusCode} ${res.body}`);
  return res.json<{ key: { id: string } }>().key.id;
}

export function ingestEmpire(t: TestApp, toolset: string, events: EmpireEvent[], token?: string | null) {
  return t.call({ method: 'POST', url: EMPIRE_INGEST, payload: { toolset, events }, ...(token !== undefined ? { token } : {}) });
}

/** Sends `body` as it is (raw JSON text: what JSON.stringify cannot write, such as 1e999 or a lone surrogate escape). */
export function ingestRaw(t: TestApp, body: string, token?: string | null) {
  return t.call({ method: 'POST', url: EMPIRE_INGEST, payload: body, headers: { 'content-type': 'application/json' }, ...(token !== undefined ? { token } : {}) });
}

/** A bearer token with these scopes, bound to these toolsets (through the token API); returns its plaintext. */
export async function tokenBoundTo(t: TestApp, scopes: Scope[], toolsets: string[]): Promise<string> {
  const res = await t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name: `bound-to-${toolsets.length}`, scopes, toolsets } });
  if (res.statusCode !== 200) throw new Error(`token create failed: ${res.statusCode} ${res.body}`);
  const created = res.json<{ token: string; toolsets: string[] | null }>();
  if (JSON.stringify([...(created.toolsets ?? [])].sort()) !== JSON.stringify([...toolsets].sort())) throw new Error(`token bound to ${JSON.stringify(created.toolsets)}`);
  return created.token;
}
