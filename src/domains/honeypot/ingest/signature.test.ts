import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkSignature, derivedEventId, parseSignatureHeader, replayKeyOf, signatureHeader, signPayload } from './signature.ts';

const SECRET = 'whsec_test_secret_value_0123456789';
const NOW = Date.parse('2026-11-23T10:00:00Z');
const T = NOW / 1000;

describe('parseSignatureHeader', () => {
  it('reads t and one or more v1 values', () => {
    const hex = 'a'.repeat(64);
    expect(parseSignatureHeader(`t=${T},v1=${hex}`)).toEqual({ t: T, v1: [hex] });
    expect(parseSignatureHeader(`t=${T}, v1=${hex}, v1=${'b'.repeat(64)}`)?.v1).toHaveLength(2);
  });

  it.each([
    undefined,
    '',
    'v1=' + 'a'.repeat(64),
    `t=${T}`,
    `t=abc,v1=${'a'.repeat(64)}`,
    `t=${T},v1=${'A'.repeat(64)}`,
    `t=${T},v1=short`,
    `t=${T},t=${T},v1=${'a'.repeat(64)}`,
    'garbage',
  ])('refuses %s', (header) => {
    expect(parseSignatureHeader(header)).toBeNull();
  });

  it('never throws on arbitrary input', () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (s) => {
      const parsed = parseSignatureHeader(s);
      expect(parsed === null || (Number.isInteger(parsed.t) && parsed.v1.length > 0)).toBe(true);
    }));
  });
});

describe('checkSignature', () => {
  const body = '{"events":[{"path":"/","ip":"1.2.3.4"}]}';
  const header = signatureHeader(SECRET, T, body);

  it('accepts the right secret, refuses a wrong one or a changed body', () => {
    expect(checkSignature(parseSignatureHeader(header), [SECRET], body, NOW)).toBe('ok');
    expect(checkSignature(parseSignatureHeader(header), ['other-secret-value-xxxxxxxx'], body, NOW)).toBe('bad-signature');
    expect(checkSignature(parseSignatureHeader(header), [SECRET], `${body} `, NOW)).toBe('bad-signature');
  });

  it('accepts any of several verifying secrets (rotation overlap)', () => {
    expect(checkSignature(parseSignatureHeader(header), ['new-secret-value-xxxxxxxxxx', SECRET], body, NOW)).toBe('ok');
  });

  it('refuses a timestamp more than 300 seconds away, either side', () => {
    for (const skew of [-301, 301]) {
      const h = signatureHeader(SECRET, T + skew, body);
      expect(checkSignature(parseSignatureHeader(h), [SECRET], body, NOW)).toBe('stale-signature');
    }
    for (const skew of [-300, 300]) {
      const h = signatureHeader(SECRET, T + skew, body);
      expect(checkSignature(parseSignatureHeader(h), [SECRET], body, NOW)).toBe('ok');
    }
  });

  it('is HMAC-SHA256 of "<t>.<body>" in lower-case hex', () => {
    // Known answer, computed independently: python3 hmac.new(b'key', b'1.x', sha256).hexdigest()
    expect(signPayload('key', 1, 'x')).toBe('fc4913c41a7bf793267e2a384f3261c9436ec2cd097bd745e7b0d99113f510ec');
  });

  it('accepts exactly the signatures made with the secret (property)', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), fc.string({ minLength: 1, maxLength: 40 }), (raw, secret) => {
      const h = parseSignatureHeader(signatureHeader(secret, T, raw));
      expect(checkSignature(h, [secret], raw, NOW)).toBe('ok');
      expect(checkSignature(h, [`${secret}x`], raw, NOW)).toBe('bad-signature');
    }));
  });
});

describe('replay keys and derived ids', () => {
  it('derive sig- + 32 hex per (signed message, position), the same every time', () => {
    const key = replayKeyOf(T, '{"events":[{"path":"/","ip":"192.0.2.1"}]}');
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(replayKeyOf(T, '{"events":[{"path":"/","ip":"192.0.2.1"}]}')).toBe(key);
    const ids = [0, 1, 2].map((i) => derivedEventId(key, i));
    for (const id of ids) expect(id).toMatch(/^sig-[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(3);
    expect(derivedEventId(key, 1)).toBe(ids[1]);
  });

  it('change with t and with any byte of the body', () => {
    const body = '{"events":[{"path":"/","ip":"192.0.2.1"}]}';
    const key = replayKeyOf(T, body);
    expect(replayKeyOf(T + 1, body)).not.toBe(key);
    expect(replayKeyOf(T, `${body} `)).not.toBe(key);
  });
});
