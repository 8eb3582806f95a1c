import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hmacSha256Hex, keyedHmacSha256Hex, sha256Hex } from './crypto.ts';

describe('keyedHmacSha256Hex', () => {
  it('is HMAC-SHA256: the RFC 4231 test case 2 vector', () => {
    expect(keyedHmacSha256Hex('Jefe')('what do ya want for nothing?')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });

  it('answers as hmacSha256Hex for any key and input, short or long, repeated calls included', () => {
    const key = fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 80 }), fc.uint8Array({ maxLength: 150 }).map((b) => Buffer.from(b)));
    const input = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 300 }), fc.string({ minLength: 250, maxLength: 600 }));
    fc.assert(
      fc.property(key, fc.array(input, { minLength: 1, maxLength: 5 }), (secret, inputs) => {
        const keyed = keyedHmacSha256Hex(secret);
        for (const text of inputs) expect(keyed(text)).toBe(hmacSha256Hex(secret, text));
      }),
      { numRuns: 300 },
    );
  });
});

describe('sha256Hex', () => {
  it('is SHA-256 in hex: the FIPS 180-2 "abc" vector, and UTF-8 text hashes as its bytes', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('é')).toBe(sha256Hex(Buffer.from([0xc3, 0xa9])));
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});
