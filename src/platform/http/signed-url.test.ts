import { createHmac } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.ts';
import { ServiceError } from '../errors.ts';
import { derivedKey } from '../crypto.ts';
import { checkSignedPath, createUrlSigner, signPath } from './signed-url.ts';

const key = derivedKey('a-deployment-secret-of-at-least-32-chars', 'test links');
const path = '/api/observatory/v1/compliance/evidence/3f1d2c4b-5a69-4e7f-8a9b-0c1d2e3f4a5b/soc2-summary.pdf';
const expires = 1_795_000_000;
const nowMs = (expires - 60) * 1000;

describe('signed links', () => {
  it('sign HMAC-SHA256 over "<path>\\n<expires>" as hex', () => {
    expect(signPath(key, path, expires)).toBe(createHmac('sha256', key).update(`${path}\n${expires}`).digest('hex'));
  });

  it('accept the link as signed, up to and including its expiry second', () => {
    const signature = signPath(key, path, expires);
    expect(checkSignedPath(key, path, { expires: String(expires), signature }, nowMs)).toBeNull();
    expect(checkSignedPath(key, path, { expires: String(expires), signature }, expires * 1000)).toBeNull();
    expect(checkSignedPath(key, path, { expires: String(expires), signature }, expires * 1000 + 1)).toBe('expired-url');
  });

  it('refuse a changed path, expiry or signature, a missing part and another key, as a bad signature', () => {
    const signature = signPath(key, path, expires);
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
    const cases: [string, Record<string, unknown>][] = [
      [path.replace('summary.pdf', 'controls.csv'), { expires: String(expires), signature }],
      [path.replace('3f1d2c4b', '3f1d2c4c'), { expires: String(expires), signature }],
      [path, { expires: String(expires + 3600), signature }],
      // An earlier expiry is a change too, though it would shorten the link.
      [path, { expires: String(expires - 1), signature }],
      [path, { expires: String(expires), signature: flipped }],
      [path, { expires: String(expires), signature: signature.toUpperCase() }],
      [path, { expires: String(expires) }],
      [path, { signature }],
      [path, { expires: ` ${expires}`, signature }],
      [path, { expires: [String(expires)], signature }],
      [path, { expires: String(expires), signature: signPath(derivedKey('a-deployment-secret-of-at-least-32-chars', 'other purpose'), path, expires) }],
    ];
    for (const [p, query] of cases) expect(checkSignedPath(key, p, query, nowMs), JSON.stringify([p, query])).toBe('bad-signature');
    // A changed expiry is a bad signature even once both times have passed.
    expect(checkSignedPath(key, path, { expires: String(expires + 1), signature }, (expires + 10) * 1000)).toBe('bad-signature');
  });

  it('derive one key per purpose, each 32 bytes, the same from the same secret', () => {
    expect(derivedKey('s'.repeat(32), 'a')).toHaveLength(32);
    expect(derivedKey('s'.repeat(32), 'a').equals(derivedKey('s'.repeat(32), 'a'))).toBe(true);
    expect(derivedKey('s'.repeat(32), 'a').equals(derivedKey('s'.repeat(32), 'b'))).toBe(false);
    expect(derivedKey('s'.repeat(32), 'a').equals(derivedKey('t'.repeat(32), 'a'))).toBe(false);
  });
});

describe('the signer', () => {
  const clock = new ManualClock('2026-11-24T09:30:00.000Z');
  const signer = createUrlSigner({ key, clock, ttlSec: 900 });
  const request = (url: string, query: object) => ({ url, query }) as unknown as FastifyRequest;
  const refusal = async (promise: Promise<void>) => {
    try {
      await promise;
      return null;
    } catch (error) {
      return error instanceof ServiceError ? { status: error.status, reason: error.reason } : error;
    }
  };

  it('makes links good for its time to live, and its check refuses them 401 after', async () => {
    const { query, expiresAt } = signer.sign(path);
    expect(expiresAt.toISOString()).toBe('2026-11-24T09:45:00.000Z');
    expect(query.expires).toBe(String(Date.parse('2026-11-24T09:45:00.000Z') / 1000));
    const url = `${path}?expires=${query.expires}&signature=${query.signature}`;
    expect(await refusal(signer.verifyCaller(request(url, query)))).toBeNull();
    clock.advance(15 * 60_000);
    expect(await refusal(signer.verifyCaller(request(url, query)))).toBeNull();
    clock.advance(1000);
    expect(await refusal(signer.verifyCaller(request(url, query)))).toEqual({ status: 401, reason: 'expired-url' });
    expect(await refusal(signer.verifyCaller(request(url.replace('summary.pdf', 'snapshot.json'), query)))).toEqual({ status: 401, reason: 'bad-signature' });
  });

  it('checks the path as the client sent it, percent-decoded', async () => {
    clock.set('2026-11-24T09:30:00.000Z');
    const { query } = signer.sign(path);
    const encoded = path.replace('summary.pdf', 'summary%2Epdf');
    expect(await refusal(signer.verifyCaller(request(`${encoded}?x=1`, query)))).toBeNull();
    expect(await refusal(signer.verifyCaller(request('/api/%E0%A4%A', query)))).toEqual({ status: 401, reason: 'bad-signature' });
  });
});
