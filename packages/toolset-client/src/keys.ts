import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';

/** Raw Ed25519 public keys are the last 32 bytes of their SPKI DER form. */
const RAW_KEY_BYTES = 32;

export interface ToolsetKey {
  privateKey: KeyObject;
  /** Standard padded base64 of the raw 32-byte public key, as the keys endpoint takes it. */
  publicKeyB64: string;
}

export function generateToolsetKey(): ToolsetKey {
  const { privateKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKeyB64: publicKeyB64Of(privateKey) };
}

export function publicKeyB64Of(privateKey: KeyObject): string {
  const der = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return der.subarray(der.length - RAW_KEY_BYTES).toString('base64');
}

/**
 * Writes the private key as PKCS#8 PEM readable by its owner only. An existing file is kept
 * (refused) unless `overwrite`: replacing a registered key by accident would make every event
 * signed afterwards fail verification.
 */
export function writePrivateKey(file: string, privateKey: KeyObject, overwrite = false): void {
  if (!overwrite && existsSync(file)) throw new Error(`${file} exists; remove it first or pass overwrite`);
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' });
  writeFileSync(file, pem, { mode: 0o600 });
  // `mode` applies only when the file is created; an overwritten file keeps its old mode otherwise.
  chmodSync(file, 0o600);
}

export function readPrivateKey(file: string): ToolsetKey {
  const privateKey = createPrivateKey(readFileSync(file));
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`${file} holds a ${privateKey.asymmetricKeyType} key, not Ed25519`);
  return { privateKey, publicKeyB64: publicKeyB64Of(privateKey) };
}

/** Where the id of a registered key is kept, beside its PEM. */
export const keyIdFileOf = (keyFile: string) => `${keyFile}.id`;

export function readKeyId(keyFile: string): string | undefined {
  const file = keyIdFileOf(keyFile);
  if (!existsSync(file)) return undefined;
  const id = readFileSync(file, 'utf8').trim();
  return id === '' ? undefined : id;
}

export function writeKeyId(keyFile: string, keyId: string): void {
  writeFileSync(keyIdFileOf(keyFile), `${keyId}\n`, { mode: 0o600 });
}
