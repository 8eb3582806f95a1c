import { describe, expect, it } from 'vitest';
import { checkSignature, parseSignatureHeader, SIGNATURE_WINDOW_SEC, signatureHeader, signPayload } from './signature.ts';

// The edges of the ingest signature rule (spec D3, docs/honeypot/README.md "Ingest"), written so that a
// change to any one of them fails a test (docs/testing.md, "Mutation testing").

const NOW = Date.parse('2026-11-23T10:00:00Z');
const T = NOW / 1000;
const BODY = '{"events":[{"path":"/","ip":"192.0.2.1"}]}';
const HEX_A = 'a'.repeat(64);
const HEX_B = 'b'.repeat(64);

describe('several v1 signatures in one header', () => {
  const secret = 'whsec_current_secret_0123456789';
  const valid = signPayload(secret, T, BODY);
  const check = (header: string, secrets = [secret]) => checkSignature(parseSignatureHeader(header), secrets, BODY, NOW);

  it('checks every v1 value, wherever the one that verifies stands', () => {
    expect(check(`t=${T},v1=${valid}`)).toBe('ok');
    expect(check(`t=${T},v1=${HEX_A},v1=${valid}`)).toBe('ok');
    expect(check(`t=${T},v1=${HEX_A},v1=${HEX_B},v1=${valid}`)).toBe('ok');
    expect(check(`t=${T},v1=${valid},v1=${HEX_A}`)).toBe('ok');
    expect(check(`t=${T},v1=${HEX_A},v1=${HEX_B}`)).toBe('bad-signature');
  });

  it('matches each v1 value against each verifying secret (a sender rolling its secret signs with both)', () => {
    const previous = 'whsec_previous_secret_987654321';
    const underPrevious = signPayload(previous, T, BODY);
    // The header lists the old secret's signature second; the service lists the new secret first.
    expect(check(`t=${T},v1=${HEX_A},v1=${underPrevious}`, [secret, previous])).toBe('ok');
    expect(check(`t=${T},v1=${HEX_A},v1=${underPrevious}`, [secret])).toBe('bad-signature');
    expect(check(`t=${T},v1=${valid},v1=${underPrevious}`, [previous])).toBe('ok');
  });

  it('keeps every v1 value in order when parsing', () => {
    expect(parseSignatureHeader(`t=${T},v1=${HEX_A},v1=${HEX_B},v1=${HEX_A}`)).toEqual({ t: T, v1: [HEX_A, HEX_B, HEX_A] });
  });
});

describe('parseSignatureHeader edges', () => {
  /** A valid header padded with an ignored parameter to exactly `length` characters. */
  const paddedTo = (length: number) => {
    const head = `t=${T},v1=${HEX_A},pad=`;
    return head + 'x'.repeat(length - head.length);
  };

  it('reads a header of up to 1024 characters and refuses a longer one', () => {
    expect(paddedTo(1024)).toHaveLength(1024);
    expect(parseSignatureHeader(paddedTo(1024))).toEqual({ t: T, v1: [HEX_A] });
    expect(parseSignatureHeader(paddedTo(1025))).toBeNull();
  });

  it('ignores parameters it does not know, an empty name included, but refuses a part without "="', () => {
    expect(parseSignatureHeader(`t=${T},v0=${HEX_B},v1=${HEX_A},scheme=x`)).toEqual({ t: T, v1: [HEX_A] });
    expect(parseSignatureHeader(`t=${T},=x,v1=${HEX_A}`)).toEqual({ t: T, v1: [HEX_A] });
    expect(parseSignatureHeader(`t=${T},v1=${HEX_A},junk`)).toBeNull();
    // A v0 value alone is no signature.
    expect(parseSignatureHeader(`t=${T},v0=${HEX_A}`)).toBeNull();
  });

  it('trims spaces around names and values', () => {
    expect(parseSignatureHeader(` t = ${T} , v1 = ${HEX_A} `)).toEqual({ t: T, v1: [HEX_A] });
  });

  it('takes t as 1 to 12 decimal digits and nothing else', () => {
    expect(parseSignatureHeader(`t=1,v1=${HEX_A}`)).toEqual({ t: 1, v1: [HEX_A] });
    expect(parseSignatureHeader(`t=999999999999,v1=${HEX_A}`)?.t).toBe(999_999_999_999);
    for (const t of ['', '1234567890123', `x${T}`, `${T}x`, `-${T}`, `${T}.5`, `1e9`]) {
      expect(parseSignatureHeader(`t=${t},v1=${HEX_A}`), `t=${t}`).toBeNull();
    }
  });

  it('takes v1 as exactly 64 lower-case hex characters and nothing else', () => {
    for (const v1 of ['a'.repeat(63), 'a'.repeat(65), `g${'a'.repeat(63)}`, `${'a'.repeat(63)}g`, `x${HEX_A}`, `${HEX_A}x`, 'A'.repeat(64)]) {
      expect(parseSignatureHeader(`t=${T},v1=${v1}`), `v1=${v1}`).toBeNull();
    }
  });
});

describe('checkSignature edges', () => {
  it('refuses a missing or unreadable header as bad-signature, not stale and without throwing', () => {
    expect(checkSignature(null, ['any-secret'], BODY, NOW)).toBe('bad-signature');
    expect(checkSignature(parseSignatureHeader('garbage'), ['any-secret'], BODY, NOW)).toBe('bad-signature');
  });

  it('is stale only beyond the window, and stale before it checks the signature', () => {
    const secret = 'whsec_window_secret_0123456789';
    const at = (skew: number) => checkSignature(parseSignatureHeader(signatureHeader(secret, T + skew, BODY)), [secret], BODY, NOW);
    expect(at(SIGNATURE_WINDOW_SEC)).toBe('ok');
    expect(at(-SIGNATURE_WINDOW_SEC)).toBe('ok');
    expect(at(SIGNATURE_WINDOW_SEC + 1)).toBe('stale-signature');
    // A stale request is stale whatever its signature.
    expect(checkSignature(parseSignatureHeader(`t=${T - 1000},v1=${HEX_A}`), [secret], BODY, NOW)).toBe('stale-signature');
  });

  it('refuses when no secret verifies now (a tenant with none)', () => {
    const header = signatureHeader('whsec_some_secret_0123456789', T, BODY);
    expect(checkSignature(parseSignatureHeader(header), [], BODY, NOW)).toBe('bad-signature');
  });
});
