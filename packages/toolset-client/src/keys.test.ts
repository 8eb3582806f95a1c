import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateToolsetKey, readKeyId, readPrivateKey, writeKeyId, writePrivateKey } from './keys.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'toolset-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('toolset keys', () => {
  it('writes the private key as PEM readable by its owner only, and reads back the same public key', () => {
    const file = path.join(dir, 'a.pem');
    const key = generateToolsetKey();
    writePrivateKey(file, key.privateKey);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(readPrivateKey(file).publicKeyB64).toBe(key.publicKeyB64);
    // Raw 32 bytes, canonical padded base64 (re-encodes to itself).
    const raw = Buffer.from(key.publicKeyB64, 'base64');
    expect(raw).toHaveLength(32);
    expect(raw.toString('base64')).toBe(key.publicKeyB64);
  });

  it('refuses to replace a key unless asked, and tightens the mode of a file it replaces', () => {
    const file = path.join(dir, 'b.pem');
    writeFileSync(file, 'old', { mode: 0o644 });
    expect(() => writePrivateKey(file, generateToolsetKey().privateKey)).toThrow(/exists/);
    writePrivateKey(file, generateToolsetKey().privateKey, true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a key that is not Ed25519', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const file = path.join(dir, 'ec.pem');
    writeFileSync(file, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }));
    expect(() => readPrivateKey(file)).toThrow(/not Ed25519/);
  });

  it('keeps the registration id beside the key', () => {
    const file = path.join(dir, 'c.pem');
    expect(readKeyId(file)).toBeUndefined();
    writeKeyId(file, '0f3c2b1a-4d5e-4f60-8a7b-9c0d1e2f3a4b');
    expect(readKeyId(file)).toBe('0f3c2b1a-4d5e-4f60-8a7b-9c0d1e2f3a4b');
  });
});
