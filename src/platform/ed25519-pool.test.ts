import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEd25519Verifier, type SignatureCheck } from './ed25519-pool.ts';

function checks(): { list: SignatureCheck[]; expected: boolean[] } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const other = generateKeyPairSync('ed25519');
  const publicKeyB64 = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url').toString('base64');
  const message = Buffer.from('{"id":"e1","toolset":"lab"}');
  const good = sign(null, message, privateKey).toString('base64');
  const list: SignatureCheck[] = [
    { publicKeyB64, message, signatureB64: good },
    { publicKeyB64, message: Buffer.from('{"id":"e2","toolset":"lab"}'), signatureB64: good },
    { publicKeyB64, message, signatureB64: sign(null, message, other.privateKey).toString('base64') },
    { publicKeyB64, message, signatureB64: good.replace('=', '') },
    { publicKeyB64, message, signatureB64: 'AAAA' },
    { publicKeyB64: 'bm90IGEga2V5', message, signatureB64: good },
  ];
  return { list, expected: [true, false, false, false, false, false] };
}

describe('Ed25519 verifier', () => {
  it('gives the same answers inline and on worker threads, and never throws on bad input', async () => {
    const { list, expected } = checks();
    const inline = createEd25519Verifier({ threads: 0 });
    expect(await inline.verifyMany(list)).toEqual(expected);
    const pooled = createEd25519Verifier({ threads: 2 });
    try {
      const answers = await Promise.all([pooled.verifyMany(list), pooled.verifyMany(list), pooled.verifyMany([])]);
      expect(answers).toEqual([expected, expected, []]);
    } finally {
      await pooled.close();
    }
  });

  it('answers checks in flight and later ones inline when its workers stop', async () => {
    const { list, expected } = checks();
    const pooled = createEd25519Verifier({ threads: 1 });
    const inFlight = pooled.verifyMany(list);
    await pooled.close();
    expect(await inFlight).toEqual(expected);
    expect(await pooled.verifyMany(list)).toEqual(expected);
  });
});
