import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../platform/crypto.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import { assertToolsetInReach } from '../../../platform/http/auth.ts';
import { MAX_PAYLOAD_DEPTH, payloadProblem } from './event-checks.ts';

/** The checks alone; the attacks through the API are in ingest-security.test.ts. */

/** JSON values as JSON.parse yields them: any Unicode (surrogate pairs included), doubles, nesting. */
const jsonPayload = fc.dictionary(fc.string({ unit: 'grapheme' }), fc.jsonValue({ maxDepth: 6 }), { maxKeys: 8 });

describe('payloadProblem', () => {
  it('counts exactly the bytes canonicalisation writes: a payload fits a bound of its canonical length and not one byte less', () => {
    fc.assert(
      fc.property(jsonPayload, (payload) => {
        const bytes = Buffer.byteLength(canonicalJson(payload));
        expect(payloadProblem(payload, bytes)).toBeNull();
        expect(payloadProblem(payload, bytes - 1)).toBe('too-large');
      }),
      { numRuns: 300 },
    );
  });

  it('counts escapes, -0, exponents and empty containers as RFC 8785 writes them', () => {
    for (const payload of [{ s: '"\\\u0000\u001f\u2028é😀' }, { n: [-0, 1e21, 1e-7, 5e-324, 0.1] }, { a: [], o: {}, t: true, f: false, z: null }, {}]) {
      const bytes = Buffer.byteLength(canonicalJson(payload));
      expect(payloadProblem(payload, bytes), JSON.stringify(payload)).toBeNull();
      expect(payloadProblem(payload, bytes - 1), JSON.stringify(payload)).toBe('too-large');
    }
  });

  it('bounds the depth without recursion, the payload object being level 1', () => {
    const nest = (levels: number) => {
      let value: unknown = 1;
      for (let i = 1; i < levels; i++) value = i % 2 === 0 ? [value] : { a: value };
      return { top: value };
    };
    expect(payloadProblem(nest(MAX_PAYLOAD_DEPTH))).toBeNull();
    expect(payloadProblem(nest(MAX_PAYLOAD_DEPTH + 1))).toBe('too-deep');
    // Far deeper than a recursive walk survives.
    expect(payloadProblem(nest(1_000_000))).toBe('too-deep');
  });

  it('finds non-finite numbers and lone surrogates anywhere, in values and keys', () => {
    expect(payloadProblem({ a: [1, { b: Infinity }] })).toBe('not-finite');
    expect(payloadProblem({ a: -Infinity })).toBe('not-finite');
    expect(payloadProblem({ a: NaN })).toBe('not-finite');
    expect(payloadProblem({ a: ['\ud800'] })).toBe('lone-surrogate');
    expect(payloadProblem({ a: { ['x\udfff']: 1 } })).toBe('lone-surrogate');
    expect(payloadProblem({ a: '\udc00\ud800' })).toBe('lone-surrogate');
    expect(payloadProblem({ a: '\ud83d\ude00' })).toBeNull();
  });
});

describe('assertToolsetInReach', () => {
  const principal = (toolsets: string[] | null): Principal => ({
    userId: 'u',
    username: 'alice',
    scopes: new Set(['write:events']),
    toolsets: toolsets === null ? null : new Set(toolsets),
    via: 'bearer',
    tokenId: 't',
    sessionId: null,
  });

  it('lets unbound credentials and internal callers write any toolset, and bound tokens only theirs', () => {
    expect(() => assertToolsetInReach(null, 'any-lab', 'write events for')).not.toThrow();
    expect(() => assertToolsetInReach(principal(null), 'any-lab', 'write events for')).not.toThrow();
    expect(() => assertToolsetInReach(principal(['own-lab']), 'own-lab', 'write events for')).not.toThrow();
    expect(() => assertToolsetInReach(principal(['own-lab']), 'other-lab', 'write events for')).toThrow(expect.objectContaining({ status: 403, reason: 'forbidden' }));
    // Bound to nothing: writes nothing.
    expect(() => assertToolsetInReach(principal([]), 'own-lab', 'write events for')).toThrow(expect.objectContaining({ status: 403 }));
  });
});
