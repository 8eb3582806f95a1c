import { describe, expect, it } from 'vitest';
import { normaliseIp, parseIp, RECENT_ADDRESSES, rememberedAddressCount } from './ip.ts';

// The parses ingest remembers (ip.ts, `knownAddress`): shared across a batch, bounded whatever
// the senders send.

describe('remembered addresses', () => {
  it('answers a text asked again from memory, across a batch of 500', () => {
    const batch = Array.from({ length: 500 }, (_, i) => `198.51.${Math.floor(i / 250)}.${i % 250}`);
    const first = batch.map((ip) => parseIp(ip));
    expect(batch.map((ip) => parseIp(ip)).every((parsed, i) => parsed === first[i])).toBe(true);
  });

  it('keeps at most twice RECENT_ADDRESSES texts, however many distinct ones arrive', () => {
    for (let i = 0; i < 20 * RECENT_ADDRESSES; i++) normaliseIp(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    expect(rememberedAddressCount()).toBeLessThanOrEqual(2 * RECENT_ADDRESSES);
  });

  it('gives the one text form of a dotted quad, mapped IPv6 and IPv6', () => {
    expect(normaliseIp('203.0.113.7')).toBe('203.0.113.7');
    expect(normaliseIp('::FFFF:203.0.113.7')).toBe('203.0.113.7');
    expect(normaliseIp('::ffff:cb00:7107')).toBe('203.0.113.7');
    expect(normaliseIp('2001:0DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(normaliseIp('203.0.113.07')).toBeNull();
  });
});
