import { describe, expect, it } from 'vitest';
import { fingerprintOf, fingerprintSource, hashIp, type SourceFacts } from '../enrichment/fingerprint.ts';
import { decideTarpit, isVerifiedClass, TARPIT_DELAY_MS, TARPIT_WINDOW_MS, tarpitAnswer, tarpitExpiresAt } from './tarpit.ts';
import { UA_CLASS_VALUES } from '../vendors/classify.ts';

// The tarpit rule (spec A, docs/honeypot/README.md "Tarpit"). That a tarpit ends once expired is shown
// against the database in ingest.rules.test.ts.

describe('decideTarpit', () => {
  it('triggers from the threshold on, not below it', () => {
    expect(decideTarpit(4, 5).trigger).toBe(false);
    expect(decideTarpit(5, 5).trigger).toBe(true);
    expect(decideTarpit(6, 5).trigger).toBe(true);
    expect(decideTarpit(1, 1).trigger).toBe(true);
    expect(decideTarpit(0, 1).trigger).toBe(false);
  });

  it('gives the reason liar-flood:<count>/10min', () => {
    expect(decideTarpit(5, 5)).toEqual({ trigger: true, reason: 'liar-flood:5/10min' });
    expect(decideTarpit(3, 5).reason).toBe('liar-flood:3/10min');
  });

  it('uses a 10-minute window and an 8-second delay', () => {
    expect(TARPIT_WINDOW_MS).toBe(600_000);
    expect(TARPIT_DELAY_MS).toBe(8000);
  });
});

describe('tarpitExpiresAt', () => {
  it('ends a tarpit its TTL in minutes after it opened', () => {
    const opened = new Date('2026-11-23T10:00:00.000Z');
    expect(tarpitExpiresAt(opened, 60)).toEqual(new Date('2026-11-23T11:00:00.000Z'));
    expect(tarpitExpiresAt(opened, 1)).toEqual(new Date('2026-11-23T10:01:00.000Z'));
    expect(opened.toISOString()).toBe('2026-11-23T10:00:00.000Z');
  });
});

describe('tarpitAnswer', () => {
  const inForce = { delayMs: 8000 };

  it('never delays a verified event, whatever its fingerprint\'s state', () => {
    for (const uaClass of ['KNOWN_LLM_AGENT', 'VERIFIED_CRAWLER']) {
      expect(tarpitAnswer(uaClass, inForce)).toEqual({ active: false, delayMs: 0 });
      expect(tarpitAnswer(uaClass, undefined)).toEqual({ active: false, delayMs: 0 });
    }
  });

  it('delays every other event by its fingerprint\'s tarpit in force, and only then', () => {
    for (const uaClass of UA_CLASS_VALUES.filter((c) => !isVerifiedClass(c))) {
      expect(tarpitAnswer(uaClass, inForce)).toEqual({ active: true, delayMs: 8000 });
      expect(tarpitAnswer(uaClass, { delayMs: 1234 })).toEqual({ active: true, delayMs: 1234 });
      expect(tarpitAnswer(uaClass, undefined)).toEqual({ active: false, delayMs: 0 });
    }
  });

  it('counts exactly KNOWN_LLM_AGENT and VERIFIED_CRAWLER as verified', () => {
    expect(UA_CLASS_VALUES.filter(isVerifiedClass)).toEqual(['KNOWN_LLM_AGENT', 'VERIFIED_CRAWLER']);
  });
});

// The keying that keeps a verified agent's fingerprint apart from its impostors' (docs/honeypot/enrichment.md, "Fingerprint").
describe('fingerprintSource', () => {
  const ipHash = hashIp('key', '52.230.153.9');
  const facts = (over: Partial<SourceFacts> = {}): SourceFacts => ({ verifiedVendorId: null, asn: 8075, ipHash, ...over });
  const JA4 = 't13d1516h2_8daaf6152771_02713d6af862';

  it('keys a verified event by its vendor, with or without JA4, whatever its network', () => {
    expect(fingerprintSource(null, facts({ verifiedVendorId: 'openai-gptbot' }))).toBe('vendor:openai-gptbot');
    expect(fingerprintSource(JA4, facts({ verifiedVendorId: 'openai-gptbot', asn: null }))).toBe('vendor:openai-gptbot');
  });

  it('keys an unverified event without JA4 by its AS number, else by its keyed address', () => {
    expect(fingerprintSource(null, facts())).toBe('asn:8075');
    expect(fingerprintSource(null, facts({ asn: 0 }))).toBe('asn:0');
    expect(fingerprintSource(null, facts({ asn: null }))).toBe(`ip:${ipHash}`);
  });

  it('gives an unverified event with a JA4 no source part (its TLS stack tells it apart)', () => {
    expect(fingerprintSource(JA4, facts())).toBeNull();
    expect(fingerprintSource(JA4, facts({ asn: null }))).toBeNull();
  });

  it('never lets an unverified event share a verified agent\'s fingerprint, nor networks collide without JA4', () => {
    const ua = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
    const fp = (ja4: string | null, over: Partial<SourceFacts>) => fingerprintOf({ ja4, ua, source: facts(over) }).fingerprintId;
    const real = fp(null, { verifiedVendorId: 'openai-gptbot' });
    // The same AS, the same address, the same JA4: still apart.
    expect(fp(null, {})).not.toBe(real);
    expect(fp(null, { asn: null })).not.toBe(real);
    expect(fp(JA4, {})).not.toBe(fp(JA4, { verifiedVendorId: 'openai-gptbot' }));
    // A User-Agent that spells a source part cannot reach it either.
    expect(fingerprintOf({ ja4: JA4, ua: `${ua}\nvendor:openai-gptbot`, source: facts() }).fingerprintId).not.toBe(fp(JA4, { verifiedVendorId: 'openai-gptbot' }));
    // Without JA4, different networks are different fingerprints; one network is one.
    expect(fp(null, { asn: 8075 })).not.toBe(fp(null, { asn: 63949 }));
    expect(fp(null, { asn: null, ipHash: hashIp('key', '203.0.113.50') })).not.toBe(fp(null, { asn: null, ipHash: hashIp('key', '198.51.100.200') }));
    expect(fp(null, { asn: 8075, ipHash: hashIp('key', '20.42.10.5') })).toBe(fp(null, { asn: 8075 }));
    // Two verified vendors with one User-Agent (one naming both) stay apart too.
    expect(fp(null, { verifiedVendorId: 'a' })).not.toBe(fp(null, { verifiedVendorId: 'b' }));
  });
});
