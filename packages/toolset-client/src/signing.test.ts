import { createHash, generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventHash, signedBytes, signEvent } from './signing.ts';

describe('signedBytes', () => {
  it('is the RFC 8785 form: members sorted by UTF-16 code units, no whitespace, absent members left out', () => {
    const bytes = signedBytes('crawler-lab', { payload: { z: 1, a: [true, null, 'x'], B: { d: 1.5, c: 1e21 } }, eventType: 'crawl.page', id: 'e-1', tenant: 'acme' });
    expect(bytes.toString('utf8')).toBe(
      '{"eventType":"crawl.page","id":"e-1","payload":{"B":{"c":1e+21,"d":1.5},"a":[true,null,"x"],"z":1},"tenant":"acme","toolset":"crawler-lab"}',
    );
  });

  it('signs causedBy null as null, and writes unicode as UTF-8 with only the required escapes', () => {
    const bytes = signedBytes('lab', { id: 'é', eventType: 't', ts: '2026-11-28T12:00:00.000Z', causedBy: null, payload: { '€': 'line\nbreak "q" \u0001 😀', é: 'ü' } });
    expect(bytes.toString('utf8')).toBe(
      '{"causedBy":null,"eventType":"t","id":"é","payload":{"é":"ü","€":"line\\nbreak \\"q\\" \\u0001 😀"},"toolset":"lab","ts":"2026-11-28T12:00:00.000Z"}',
    );
    // é (U+00E9) sorts before € (U+20AC); the bytes are UTF-8, not escapes.
    expect(bytes.includes(Buffer.from('é', 'utf8'))).toBe(true);
  });

  it('sorts keys by UTF-16 code units, not code points: an astral character (surrogate D83D) before U+FB01', () => {
    expect(signedBytes('lab', { id: 'i', eventType: 't', payload: { 'ﬁ': 2, '😀': 1 } }).toString('utf8')).toBe('{"eventType":"t","id":"i","payload":{"😀":1,"ﬁ":2},"toolset":"lab"}');
  });

  it('is what the signature covers and the hash is taken of; keyId and the signature are not signed', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const event = { id: 'e-2', eventType: 'crawl.page', ts: '2026-11-28T12:00:00.000Z', payload: { url: 'https://example.com/' } };
    const signed = signEvent('lab', event, privateKey, '0f3c2b1a-4d5e-4f60-8a7b-9c0d1e2f3a4b');
    expect(signed).toMatchObject({ ...event, keyId: '0f3c2b1a-4d5e-4f60-8a7b-9c0d1e2f3a4b' });
    const signature = Buffer.from(signed.signatureB64, 'base64');
    expect(signature).toHaveLength(64);
    expect(verify(null, signedBytes('lab', signed), publicKey, signature)).toBe(true);
    expect(verify(null, signedBytes('other', signed), publicKey, signature)).toBe(false);
    expect(verify(null, signedBytes('lab', { ...signed, payload: { url: 'https://example.com/x' } }), publicKey, signature)).toBe(false);
    expect(eventHash('lab', event)).toBe(createHash('sha256').update(signedBytes('lab', event)).digest('hex'));
  });

  it('leaves members set to undefined out of the wire form, as of the signed bytes', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const signed = signEvent('lab', { id: 'e', eventType: 't', ts: undefined, tenant: undefined }, privateKey);
    expect(Object.keys(signed).sort()).toEqual(['eventType', 'id', 'signatureB64']);
  });
});
