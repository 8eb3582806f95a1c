import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRecentMap, memoizeByText } from './memo.ts';

describe('createRecentMap', () => {
  it('holds at most two generations, whatever the keys', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 16 }), fc.array(fc.integer({ min: 0, max: 64 }), { maxLength: 400 }), (generation, keys) => {
        const map = createRecentMap<number, number>(generation);
        for (const key of keys) {
          if (map.get(key) === undefined) map.set(key, key * 2);
          expect(map.size).toBeLessThanOrEqual(2 * generation);
        }
      }),
    );
  });

  it('keeps an entry that is read again while new keys keep arriving', () => {
    const map = createRecentMap<string, number>(4);
    map.set('kept', 1);
    for (let i = 0; i < 100; i++) {
      map.set(`new-${i}`, i);
      expect(map.get('kept')).toBe(1);
    }
  });

  it('forgets an entry once two generations of other keys came after it', () => {
    const map = createRecentMap<string, number>(4);
    map.set('old', 1);
    for (let i = 0; i < 8; i++) map.set(`new-${i}`, i);
    expect(map.get('old')).toBeUndefined();
  });

  it('refuses a generation that is not a positive whole number', () => {
    expect(() => createRecentMap(0)).toThrow(/positive integer/);
    expect(() => createRecentMap(1.5)).toThrow(/positive integer/);
  });
});

describe('memoizeByText', () => {
  it('computes each text once while it is remembered, and within its bound', () => {
    let calls = 0;
    const upper = memoizeByText((text) => {
      calls += 1;
      return text.toUpperCase();
    }, 10);
    expect(upper('a')).toBe('A');
    expect(upper('a')).toBe('A');
    expect(calls).toBe(1);
    for (let i = 0; i < 1000; i++) upper(`t${i}`);
    expect(calls).toBe(1001);
    // 'a' was pushed out by a thousand other texts: computed again.
    expect(upper('a')).toBe('A');
    expect(calls).toBe(1002);
  });
});
