import { describe, expect, it } from 'vitest';
import { centsRoundedUp, costNanoCents, DEFAULT_LLM_PRICES, priceOf, spendCents, type ModelUsage } from './prices.ts';

const call = (model: string, promptTokens: number, completionTokens: number): ModelUsage => ({ model, promptTokens, completionTokens });

describe('priceOf', () => {
  it('finds a shipped model by its exact name', () => {
    expect(priceOf('gpt-4o-mini', {})).toEqual({ inputCentsPerMTok: 15, outputCentsPerMTok: 60 });
    expect(priceOf('gpt-4.1-nano', {})).toEqual({ inputCentsPerMTok: 10, outputCentsPerMTok: 40 });
    expect(priceOf('o4-mini', {})).toEqual({ inputCentsPerMTok: 110, outputCentsPerMTok: 440 });
  });

  it('prices the built-in engine at nothing', () => {
    expect(priceOf('builtin', {})).toEqual({ inputCentsPerMTok: 0, outputCentsPerMTok: 0 });
  });

  it('prices an unknown model like gpt-4o, never as free', () => {
    expect(priceOf('llama-3.1-70b-instruct', {})).toEqual(DEFAULT_LLM_PRICES['gpt-4o']);
    expect(priceOf('', {})).toEqual({ inputCentsPerMTok: 250, outputCentsPerMTok: 1000 });
    // Names are exact: a different case is another (unknown) model.
    expect(priceOf('GPT-4O-MINI', {})).toEqual(DEFAULT_LLM_PRICES['*']);
    // Not fooled by names that are properties of every object.
    expect(priceOf('constructor', {})).toEqual(DEFAULT_LLM_PRICES['*']);
    expect(priceOf('__proto__', {})).toEqual(DEFAULT_LLM_PRICES['*']);
  });

  it('prices a dated snapshot like its alias, since servers answer with the snapshot name', () => {
    expect(priceOf('gpt-4o-mini-2024-07-18', {})).toEqual(DEFAULT_LLM_PRICES['gpt-4o-mini']);
    expect(priceOf('o4-mini-2025-04-16', {})).toEqual(DEFAULT_LLM_PRICES['o4-mini']);
    // A snapshot priced on its own wins over its alias.
    expect(priceOf('gpt-4o-mini-2024-07-18', { 'gpt-4o-mini-2024-07-18': { inputCentsPerMTok: 1, outputCentsPerMTok: 2 } })).toEqual({ inputCentsPerMTok: 1, outputCentsPerMTok: 2 });
    // Only a whole date suffix counts.
    expect(priceOf('gpt-4o-mini-preview', {})).toEqual(DEFAULT_LLM_PRICES['*']);
  });

  it('takes an override over the shipped price, the exact name over `*`', () => {
    const overrides = {
      'gpt-4o-mini': { inputCentsPerMTok: 1, outputCentsPerMTok: 2 },
      'my-local-model': { inputCentsPerMTok: 0, outputCentsPerMTok: 0 },
      '*': { inputCentsPerMTok: 500, outputCentsPerMTok: 2000 },
    };
    expect(priceOf('gpt-4o-mini', overrides)).toEqual({ inputCentsPerMTok: 1, outputCentsPerMTok: 2 });
    expect(priceOf('my-local-model', overrides)).toEqual({ inputCentsPerMTok: 0, outputCentsPerMTok: 0 });
    // An overridden `*` prices only what neither table names.
    expect(priceOf('gpt-4.1', overrides)).toEqual(DEFAULT_LLM_PRICES['gpt-4.1']);
    expect(priceOf('unknown', overrides)).toEqual({ inputCentsPerMTok: 500, outputCentsPerMTok: 2000 });
    // The shipped table is not changed by a lookup with overrides.
    expect(priceOf('gpt-4o-mini', {})).toEqual({ inputCentsPerMTok: 15, outputCentsPerMTok: 60 });
  });
});

describe('costNanoCents', () => {
  it('is tokens × price, exactly, in 10⁻⁹ cent', () => {
    expect(costNanoCents(call('gpt-4o-mini', 1, 0), {})).toBe(15_000n); // 15 ¢ / 1e6 tokens
    expect(costNanoCents(call('gpt-4o-mini', 0, 1), {})).toBe(60_000n);
    expect(costNanoCents(call('gpt-4o-mini', 1_000_000, 1_000_000), {})).toBe(75n * 1_000_000_000n);
    expect(costNanoCents(call('gpt-4o', 1234, 567), {})).toBe(1234n * 250_000n + 567n * 1_000_000n);
    expect(costNanoCents(call('builtin', 1_000_000, 1_000_000), {})).toBe(0n);
  });

  it('keeps fractional-cent prices exact', () => {
    const overrides = { cheap: { inputCentsPerMTok: 7.5, outputCentsPerMTok: 0.125 } };
    expect(costNanoCents(call('cheap', 1_000_000, 0), overrides)).toBe(7_500_000_000n);
    expect(costNanoCents(call('cheap', 0, 8_000_000), overrides)).toBe(1_000_000_000n);
    expect(costNanoCents(call('cheap', 3, 3), overrides)).toBe(3n * 7_500n + 3n * 125n);
  });

  it('stays exact beyond 2^53', () => {
    const tokens = Number.MAX_SAFE_INTEGER;
    expect(costNanoCents(call('gpt-4o', tokens, tokens), {})).toBe(BigInt(tokens) * 1_250_000n);
  });

  it('refuses negative or fractional token counts', () => {
    expect(() => costNanoCents(call('gpt-4o', -1, 0), {})).toThrow(RangeError);
    expect(() => costNanoCents(call('gpt-4o', 0, 1.5), {})).toThrow(RangeError);
    expect(() => costNanoCents(call('gpt-4o', Number.NaN, 0), {})).toThrow(RangeError);
  });

  it('refuses a negative or non-finite price', () => {
    expect(() => costNanoCents(call('x', 1, 0), { x: { inputCentsPerMTok: -1, outputCentsPerMTok: 0 } })).toThrow(RangeError);
    expect(() => costNanoCents(call('x', 0, 1), { x: { inputCentsPerMTok: 0, outputCentsPerMTok: Number.POSITIVE_INFINITY } })).toThrow(RangeError);
  });
});

describe('spendCents', () => {
  it('is 0 for no calls, for calls without tokens and for the built-in engine', () => {
    expect(spendCents([], {})).toBe(0);
    expect(spendCents([call('gpt-4o', 0, 0)], {})).toBe(0);
    expect(spendCents([call('builtin', 5_000_000, 5_000_000)], {})).toBe(0);
  });

  it('is exact on whole cents', () => {
    expect(spendCents([call('gpt-4o-mini', 1_000_000, 1_000_000)], {})).toBe(75);
    expect(spendCents([call('gpt-4o', 2_000_000, 0), call('gpt-4.1', 0, 500_000)], {})).toBe(500 + 400);
  });

  it('rounds up once at the end, not per call', () => {
    // One token is 0.000015 ¢: any spend at all is at least a cent.
    expect(spendCents([call('gpt-4o-mini', 1, 0)], {})).toBe(1);
    // A thousand such calls are still 0.015 ¢: one cent, not a thousand.
    expect(spendCents(Array.from({ length: 1000 }, () => call('gpt-4o-mini', 1, 0)), {})).toBe(1);
    // Three calls of 0.4 ¢ are 1.2 ¢: 2 (rounding each up would say 3, each down 0).
    expect(spendCents([call('gpt-4.1-nano', 40_000, 0), call('gpt-4.1-nano', 40_000, 0), call('gpt-4.1-nano', 40_000, 0)], {})).toBe(2);
    // Exactly on a cent stays on it.
    expect(spendCents([call('gpt-4.1-nano', 50_000, 0), call('gpt-4.1-nano', 50_000, 0)], {})).toBe(1);
    expect(spendCents([call('gpt-4.1-nano', 50_000, 0), call('gpt-4.1-nano', 50_001, 0)], {})).toBe(2);
  });

  it('does not drift like floating point would', () => {
    // Floats: ten calls of 0.1 ¢ plus ten of 0.2 ¢ sum to 3.0000000000000013, which rounds up to 4.
    const overrides = { tenth: { inputCentsPerMTok: 0.1, outputCentsPerMTok: 0 }, fifth: { inputCentsPerMTok: 0.2, outputCentsPerMTok: 0 } };
    const usages = Array.from({ length: 10 }, () => [call('tenth', 1_000_000, 0), call('fifth', 1_000_000, 0)]).flat();
    expect(spendCents(usages, overrides)).toBe(3);
  });

  it('prices each model by its own entry, unknown ones by `*`, overrides first', () => {
    const overrides = { 'gpt-4o-mini': { inputCentsPerMTok: 100, outputCentsPerMTok: 0 }, '*': { inputCentsPerMTok: 1, outputCentsPerMTok: 0 } };
    const usages = [call('gpt-4o-mini', 1_000_000, 0), call('mystery', 1_000_000, 0), call('gpt-4o', 1_000_000, 0), call('builtin', 1_000_000, 0)];
    expect(spendCents(usages, overrides)).toBe(100 + 1 + 250 + 0);
    expect(spendCents(usages, {})).toBe(15 + 250 + 250 + 0);
  });

  it('equals the rounded-up sum of the per-call costs', () => {
    const usages = [call('gpt-4o-mini', 12_345, 678), call('gpt-4o', 9_876, 5_432), call('o4-mini-2025-04-16', 1, 1), call('gpt-4o-mini', 3, 0)];
    const total = usages.reduce((sum, usage) => sum + costNanoCents(usage, {}), 0n);
    expect(spendCents(usages, {})).toBe(centsRoundedUp(total));
    expect(centsRoundedUp(total)).toBe(Math.ceil(Number(total) / 1e9));
  });

  it('refuses negative or fractional token counts', () => {
    expect(() => spendCents([call('gpt-4o', -5, 0)], {})).toThrow(RangeError);
    expect(() => spendCents([call('gpt-4o', 0, 0.5)], {})).toThrow(RangeError);
  });
});

describe('centsRoundedUp', () => {
  it('rounds nano-cents up to whole cents', () => {
    expect(centsRoundedUp(0n)).toBe(0);
    expect(centsRoundedUp(1n)).toBe(1);
    expect(centsRoundedUp(1_000_000_000n)).toBe(1);
    expect(centsRoundedUp(1_000_000_001n)).toBe(2);
    expect(() => centsRoundedUp(-1n)).toThrow(RangeError);
  });
});
