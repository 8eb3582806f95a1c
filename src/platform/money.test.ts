import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ServiceError } from './errors.ts';
import { decimalTextToMicro, formatMicro, MICRO, microToNumber, numberToMicro, parseMicro, sumMicro } from './money.ts';

// Exact money (docs/cost/README.md, "Exact money"): request numbers read from their decimal text into
// integer millionths, sums in bigint, answers formatted from the exact decimal text.

const WIDE = { min: -(10n ** 15n - 1n), max: 10n ** 15n - 1n };

describe('numberToMicro', () => {
  it('reads the decimal text, not the double', () => {
    expect(numberToMicro(0.1)).toBe(100_000n);
    expect(numberToMicro(19.99)).toBe(19_990_000n);
    expect(numberToMicro(0.000001)).toBe(1n);
    expect(numberToMicro(1.005)).toBe(1_005_000n);
    expect(numberToMicro(12.345678)).toBe(12_345_678n);
    expect(numberToMicro(999_999_999.999999)).toBe(999_999_999_999_999n);
    expect(numberToMicro(3)).toBe(3_000_000n);
    expect(numberToMicro(0)).toBe(0n);
    expect(numberToMicro(-0)).toBe(0n);
    expect(numberToMicro(-5.25)).toBe(-5_250_000n);
  });

  it('refuses more than 6 decimal places, including what float arithmetic leaves behind', () => {
    expect(numberToMicro(0.1 + 0.2)).toBe('too-many-decimals');
    expect(numberToMicro(1.0000001)).toBe('too-many-decimals');
    // String(1e-7) is "1e-7": an exponent below 1 means more than 6 decimals.
    expect(numberToMicro(1e-7)).toBe('too-many-decimals');
    expect(numberToMicro(-5e-324)).toBe('too-many-decimals');
  });

  it('refuses more than 15 significant digits and exponent forms of large numbers', () => {
    expect(numberToMicro(1234567890123.1234)).toBe('too-many-digits');
    expect(numberToMicro(1e21)).toBe('too-many-digits');
    expect(numberToMicro(Number.MAX_SAFE_INTEGER)).toBe('too-many-digits');
    expect(numberToMicro(123456789012345)).toBe(123456789012345n * MICRO);
  });

  it('refuses NaN and infinities', () => {
    expect(numberToMicro(Number.NaN)).toBe('not-finite');
    expect(numberToMicro(Number.POSITIVE_INFINITY)).toBe('not-finite');
    expect(numberToMicro(Number.NEGATIVE_INFINITY)).toBe('not-finite');
  });
});

describe('decimalTextToMicro', () => {
  it('takes plain decimal text only', () => {
    expect(decimalTextToMicro('-0.5')).toBe(-500_000n);
    expect(decimalTextToMicro('007.250')).toBe(7_250_000n);
    expect(decimalTextToMicro('1e3')).toBe('not-decimal');
    expect(decimalTextToMicro('+1')).toBe('not-decimal');
    expect(decimalTextToMicro('.5')).toBe('not-decimal');
    expect(decimalTextToMicro(' 1')).toBe('not-decimal');
    expect(decimalTextToMicro('1.2345678')).toBe('too-many-decimals');
    // Leading zeros are not significant; trailing ones of the fraction are.
    expect(decimalTextToMicro('0.000123')).toBe(123n);
    expect(decimalTextToMicro('1234567890.12345')).toBe(1_234_567_890_123_450n);
    expect(decimalTextToMicro('1234567890.123456')).toBe('too-many-digits');
  });
});

describe('parseMicro', () => {
  const bounds = { min: 0n, max: 100n * MICRO };
  const refusal = (value: number) => {
    try {
      parseMicro(value, 'body.records[2].units', bounds);
    } catch (error) {
      return error as ServiceError;
    }
    throw new Error('expected a refusal');
  };

  it('answers 400 invalid-amount naming the field and what to send', () => {
    const e = refusal(1.0000001);
    expect(e).toBeInstanceOf(ServiceError);
    expect(e).toMatchObject({ status: 400, reason: 'invalid-amount', details: { field: 'body.records[2].units' } });
    expect(e.human).toBe('body.records[2].units has more than 6 decimal places; round it to 6 (got 1.0000001).');
    expect(refusal(-0.5).human).toBe('body.records[2].units is below the least accepted value, 0 (got -0.5).');
    expect(refusal(100.000001).human).toBe('body.records[2].units is above the largest accepted value, 100 (got 100.000001).');
    expect(refusal(Number.NaN).human).toContain('must be a finite number');
  });

  it('takes the bounds inclusively', () => {
    expect(parseMicro(0, 'f', bounds)).toBe(0n);
    expect(parseMicro(100, 'f', bounds)).toBe(100n * MICRO);
  });
});

describe('formatMicro and microToNumber', () => {
  it('writes the shortest exact decimal', () => {
    expect(formatMicro(0n)).toBe('0');
    expect(formatMicro(1n)).toBe('0.000001');
    expect(formatMicro(-1n)).toBe('-0.000001');
    expect(formatMicro(-5_250_000n)).toBe('-5.25');
    expect(formatMicro(3_000_000n)).toBe('3');
    expect(formatMicro(123_456_789_012_345_678_901n)).toBe('123456789012345.678901');
    expect(microToNumber(100_000n)).toBe(0.1);
    expect(microToNumber(300_000n)).toBe(0.3);
    expect(microToNumber(-999_999_999_999_999n)).toBe(-999999999.999999);
  });
});

/** A micro amount within ±(10^15 − 1), as a client would write it: its exact decimal text. */
const microAmount = fc.bigInt({ min: -(10n ** 15n - 1n), max: 10n ** 15n - 1n });

/**
 * The reference: decimal strings added column by column as a person does on paper, never through
 * bigint millionths or doubles: an independent check of parse, sum and format together.
 */
function paperSum(texts: readonly string[]): string {
  // Split each into sign, whole and a 6-digit fraction; add the positive and negative ones apart.
  const add = (a: string, b: string) => {
    let out = '';
    let carry = 0;
    const width = Math.max(a.length, b.length);
    const [x, y] = [a.padStart(width, '0'), b.padStart(width, '0')];
    for (let i = width - 1; i >= 0; i--) {
      const d = Number(x[i]) + Number(y[i]) + carry;
      out = String(d % 10) + out;
      carry = d >= 10 ? 1 : 0;
    }
    return (carry ? '1' : '') + out;
  };
  const sub = (a: string, b: string) => {
    // a >= b, both digit strings of any width.
    const width = Math.max(a.length, b.length);
    const [x, y] = [a.padStart(width, '0'), b.padStart(width, '0')];
    let out = '';
    let borrow = 0;
    for (let i = width - 1; i >= 0; i--) {
      let d = Number(x[i]) - Number(y[i]) - borrow;
      borrow = d < 0 ? 1 : 0;
      if (d < 0) d += 10;
      out = String(d) + out;
    }
    return out;
  };
  const greaterOrEqual = (a: string, b: string) => {
    const width = Math.max(a.length, b.length);
    return a.padStart(width, '0') >= b.padStart(width, '0');
  };
  let positive = '0';
  let negative = '0';
  for (const text of texts) {
    const negativeText = text.startsWith('-');
    const [whole, fraction = ''] = (negativeText ? text.slice(1) : text).split('.');
    const digits = whole + fraction.padEnd(6, '0');
    if (negativeText) negative = add(negative, digits);
    else positive = add(positive, digits);
  }
  const sign = greaterOrEqual(positive, negative) ? '' : '-';
  const magnitude = (sign ? sub(negative, positive) : sub(positive, negative)).replace(/^0+/, '').padStart(7, '0');
  const whole = magnitude.slice(0, -6).replace(/^0+(?=\d)/, '');
  const fraction = magnitude.slice(-6).replace(/0+$/, '');
  const text = `${whole}${fraction ? `.${fraction}` : ''}`;
  return text === '0' ? '0' : `${sign}${text}`;
}

describe('exact sums (property)', () => {
  it('reads back every amount a client can write exactly: micro → text → JSON number → micro', () => {
    fc.assert(
      fc.property(microAmount, (micro) => {
        const sent = JSON.parse(JSON.stringify(Number(formatMicro(micro)))) as number;
        expect(parseMicro(sent, 'amountUsd', WIDE)).toBe(micro);
      }),
      { numRuns: 5000 },
    );
  });

  it('sums thousands of amounts to exactly the paper sum of their decimal texts', () => {
    fc.assert(
      fc.property(fc.array(microAmount, { minLength: 1000, maxLength: 4000 }), (micros) => {
        const texts = micros.map((m) => String(Number(formatMicro(m))));
        const total = sumMicro(texts.map((t) => parseMicro(Number(t), 'amountUsd', WIDE)));
        expect(formatMicro(total)).toBe(paperSum(texts));
      }),
      { numRuns: 40 },
    );
  });

  it('is exact to the cent where a float sum is not', () => {
    const cents = Array.from({ length: 10_000 }, () => 0.1);
    expect(formatMicro(sumMicro(cents.map((c) => parseMicro(c, 'amountUsd', WIDE))))).toBe('1000');
    // The plain float sum drifts: what these records would show if added as numbers.
    expect(cents.reduce((a, b) => a + b, 0)).not.toBe(1000);
  });

  it('the paper reference itself adds as expected', () => {
    expect(paperSum(['0.1', '0.2'])).toBe('0.3');
    expect(paperSum(['-0.000001', '0.000001'])).toBe('0');
    expect(paperSum(['-5', '1.25'])).toBe('-3.75');
    expect(paperSum(['999999999.999999', '0.000001'])).toBe('1000000000');
  });
});
