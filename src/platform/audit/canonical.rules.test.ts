import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../crypto.ts';
import { canonicalJsonFast } from './canonical.ts';

/** The fast writer must give the bytes the `canonicalize` package gives, or old entry hashes would change. */
function same(value: unknown) {
  let expected: string | Error;
  try {
    expected = canonicalJson(value);
  } catch (error) {
    expected = error as Error;
  }
  if (expected instanceof Error) expect(() => canonicalJsonFast(value)).toThrow();
  else expect(canonicalJsonFast(value)).toBe(expected);
}

describe('canonical JSON (RFC 8785), fast form', () => {
  it('writes what the canonicalize package writes for any JSON value (fast-check, any UTF-16 text)', () => {
    fc.assert(fc.property(fc.jsonValue({ stringUnit: 'binary' }), same), { numRuns: 2000 });
    fc.assert(fc.property(fc.jsonValue({ stringUnit: 'grapheme' }), same), { numRuns: 1000 });
    fc.assert(fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.oneof(fc.double(), fc.integer(), fc.string({ unit: 'binary' }))), same), { numRuns: 1000 });
  });

  it('agrees on the edge cases of RFC 8785: numbers, key order, escapes, lone surrogates', () => {
    for (const value of [
      { b: 1, a: 2, A: 3, '': 4, é: 5, '\u{1F600}': 6, '\uFFFF': 7 },
      [1e21, 1e-7, -0, 0.1 + 0.2, 5e-324, 1.7976931348623157e308, 123456789012345680000],
      ['\u2028\u2029', '\u0000\u001f"\\/', '\uD83D\uDE00', '\uD83D', 'x\uDE00'],
      { k: [undefined, () => 1], u: undefined },
      { d: new Date('2026-01-01T00:00:00Z') },
      Object.create(null),
      [NaN],
      { deep: [[[[{ a: [null, true, false] }]]]] },
    ]) {
      same(value);
    }
  });
});
