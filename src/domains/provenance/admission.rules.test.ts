import { describe, expect, it } from 'vitest';
import { candidateKeys, decideAdmission, type VerifyingKey } from './admission.ts';

// The admission rule of signed toolset events (spec D4 and A, "Events signed by a retired key";
// docs/empire/README.md), as pure functions: which keys are tried, in which order, and what a signature
// that verifies under them comes to.

const at = (iso: string) => new Date(iso);
const key = (id: string, createdAt: string, retiredAt: string | null = null): VerifyingKey => ({
  id,
  publicKeyB64: `pk-${id}`,
  createdAt: at(createdAt),
  retiredAt: retiredAt === null ? null : at(retiredAt),
});

const oldActive = key('old-active', '2026-01-01T00:00:00Z');
const newActive = key('new-active', '2026-03-01T00:00:00Z');
const oldRetired = key('old-retired', '2025-06-01T00:00:00Z', '2026-02-01T00:00:00Z');
const newRetired = key('new-retired', '2025-09-01T00:00:00Z', '2026-02-15T00:00:00Z');
const KEYS = [oldRetired, oldActive, newRetired, newActive];

const signed = { signatureB64: 'c2lnbmF0dXJl' };
const ids = (keys: readonly VerifyingKey[]) => keys.map((k) => k.id);

describe('candidateKeys', () => {
  it('tries no key for an unsigned event, even one naming a key', () => {
    expect(candidateKeys({}, KEYS)).toEqual([]);
    expect(candidateKeys({ keyId: 'new-active' }, KEYS)).toEqual([]);
  });

  it('tries the named key alone, retired or not, and none when the toolset has no such key', () => {
    expect(ids(candidateKeys({ ...signed, keyId: 'old-retired' }, KEYS))).toEqual(['old-retired']);
    expect(ids(candidateKeys({ ...signed, keyId: 'new-active' }, KEYS))).toEqual(['new-active']);
    expect(candidateKeys({ ...signed, keyId: 'nobody' }, KEYS)).toEqual([]);
  });

  it('tries every key otherwise: active ones first, newest first within each group', () => {
    expect(ids(candidateKeys(signed, KEYS))).toEqual(['new-active', 'old-active', 'new-retired', 'old-retired']);
    expect(ids(candidateKeys(signed, [...KEYS].reverse()))).toEqual(['new-active', 'old-active', 'new-retired', 'old-retired']);
  });

  it('does not reorder the caller\'s list', () => {
    const keys = [oldRetired, oldActive];
    candidateKeys(signed, keys);
    expect(ids(keys)).toEqual(['old-retired', 'old-active']);
  });
});

describe('decideAdmission', () => {
  const ts = at('2026-02-10T00:00:00Z');

  it('admits an unsigned event in compatibility mode, or rejects it unsigned when signatures are required', () => {
    expect(decideAdmission({ ts }, [], [], false)).toEqual({ admitted: true, compatMode: true, keyId: null, rejectionReason: null });
    expect(decideAdmission({ ts }, [], [], true)).toEqual({ admitted: false, compatMode: false, keyId: null, rejectionReason: 'unsigned' });
  });

  it('admits under the first candidate that verifies, an active key or one retired after the event', () => {
    expect(decideAdmission({ ts, ...signed }, [newActive, oldActive], [false, true], true)).toEqual({
      admitted: true,
      compatMode: false,
      keyId: 'old-active',
      rejectionReason: null,
    });
    expect(decideAdmission({ ts, ...signed }, [newActive, oldActive], [true, true], false).keyId).toBe('new-active');
    // Retired 2026-02-15, the event is of 2026-02-10: still good.
    expect(decideAdmission({ ts, ...signed }, [newRetired], [true], true)).toMatchObject({ admitted: true, keyId: 'new-retired' });
  });

  it('admits an event stamped at the very instant its key was retired, and rejects one a millisecond later', () => {
    const retiredAt = newRetired.retiredAt!;
    expect(decideAdmission({ ts: retiredAt, ...signed }, [newRetired], [true], true).admitted).toBe(true);
    expect(decideAdmission({ ts: new Date(retiredAt.getTime() + 1), ...signed }, [newRetired], [true], true)).toEqual({
      admitted: false,
      compatMode: false,
      keyId: 'new-retired',
      rejectionReason: 'key-retired-before-event',
    });
  });

  it('names the first retired key that verified when every verifying key was retired before the event', () => {
    const late = at('2026-06-01T00:00:00Z');
    expect(decideAdmission({ ts: late, ...signed }, [newRetired, oldRetired], [true, true], false)).toMatchObject({
      admitted: false,
      keyId: 'new-retired',
      rejectionReason: 'key-retired-before-event',
    });
    expect(decideAdmission({ ts: late, ...signed }, [newRetired, oldRetired], [false, true], false).keyId).toBe('old-retired');
  });

  it('prefers a key that admits over a retired one that verified before it', () => {
    const late = at('2026-06-01T00:00:00Z');
    expect(decideAdmission({ ts: late, ...signed }, [oldRetired, newActive], [true, true], true)).toMatchObject({ admitted: true, keyId: 'new-active' });
  });

  it('rejects bad-signature when no candidate verifies, or there is none; compatibility mode does not admit it', () => {
    const bad = { admitted: false, compatMode: false, keyId: null, rejectionReason: 'bad-signature' };
    expect(decideAdmission({ ts, ...signed }, [newActive, oldActive], [false, false], false)).toEqual(bad);
    expect(decideAdmission({ ts, ...signed }, [], [], false)).toEqual(bad);
  });
});
