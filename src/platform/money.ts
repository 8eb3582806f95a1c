import { badRequest } from './errors.ts';

/**
 * Exact money (docs/cost/README.md, "Exact money"). Amounts and quantities are integers of millionths
 * (micro-dollars, micro-units) held as bigint, stored in `bigint` columns and summed by PostgreSQL
 * as `numeric`: nothing is ever added in floating point.
 *
 * The API carries them as JSON numbers. A number arriving in a request is read from its shortest
 * decimal text (`String(n)`, the text JavaScript prints and that parses back to the same double),
 * never by multiplying the double: `0.1` is 100000 micro, `19.99` is 19990000 micro, exactly. That
 * text is the client's own text whenever the client's number has at most 15 significant digits (a
 * double keeps 15 decimal digits through a round trip), so a value is refused when its text shows
 * more than 6 decimal places (`0.1 + 0.2` arrives as `0.30000000000000004`) or more than 15
 * significant digits (it may already have been rounded by the JSON parser). Answers format the
 * exact decimal text of the micro integer and hand it to `Number()`: exact up to 15 significant
 * digits (any total under 10^9 USD), the nearest double beyond.
 */

/** Millionths in one dollar or unit. */
export const MICRO = 1_000_000n;
/** Decimal places a request value may carry. */
export const MAX_DECIMALS = 6;
/** Significant digits a double carries exactly through a decimal round trip (DBL_DIG). */
export const MAX_SIGNIFICANT_DIGITS = 15;

export type MoneyProblem = 'not-finite' | 'too-many-decimals' | 'too-many-digits' | 'below-minimum' | 'above-maximum' | 'not-decimal';

/** A plain decimal text: optional minus, digits, optional fraction. No exponent, no plus sign, no blanks. */
const DECIMAL_TEXT = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * Pure: a plain decimal text (`-12.5`, `0.000001`) → its exact value in millionths, or why not.
 * At most 6 decimal places and 15 significant digits.
 */
export function decimalTextToMicro(text: string): bigint | MoneyProblem {
  const match = DECIMAL_TEXT.exec(text);
  if (!match) return 'not-decimal';
  const [, sign, whole, fraction = ''] = match as unknown as [string, string, string, string | undefined];
  if (fraction.length > MAX_DECIMALS) return 'too-many-decimals';
  const digits = (whole + fraction).replace(/^0+/, '');
  if (digits.length > MAX_SIGNIFICANT_DIGITS) return 'too-many-digits';
  const micro = BigInt(whole) * MICRO + BigInt(fraction.padEnd(MAX_DECIMALS, '0'));
  return sign === '-' ? -micro : micro;
}

/**
 * Pure: a JSON number → its exact value in millionths, read from `String(value)`, or why not.
 * `String` writes an exponent only below 10^-6 (more than 6 decimals) and from 10^21 (too many
 * digits), so an exponent form is refused as one of those.
 */
export function numberToMicro(value: number): bigint | MoneyProblem {
  if (!Number.isFinite(value)) return 'not-finite';
  const text = String(value);
  if (/e/i.test(text)) return Math.abs(value) < 1 ? 'too-many-decimals' : 'too-many-digits';
  // -0 prints as "0".
  return decimalTextToMicro(text);
}

export interface MicroBounds {
  /** Smallest accepted value, in millionths (inclusive). */
  min: bigint;
  /** Largest accepted value, in millionths (inclusive). */
  max: bigint;
}

/**
 * A request value → millionths, or 400 `invalid-amount` naming `field` and saying what to send.
 */
export function parseMicro(value: number, field: string, bounds: MicroBounds): bigint {
  const micro = numberToMicro(value);
  const problem = typeof micro === 'bigint' ? (micro < bounds.min ? 'below-minimum' : micro > bounds.max ? 'above-maximum' : null) : micro;
  if (problem === null) return micro as bigint;
  const shown = Number.isFinite(value) ? String(value) : JSON.stringify(String(value));
  const why: Record<MoneyProblem, string> = {
    'not-finite': 'must be a finite number',
    'not-decimal': 'must be a plain decimal number',
    'too-many-decimals': `has more than ${MAX_DECIMALS} decimal places; round it to ${MAX_DECIMALS}`,
    'too-many-digits': `has more than ${MAX_SIGNIFICANT_DIGITS} significant digits, more than a JSON number carries exactly`,
    'below-minimum': `is below the least accepted value, ${formatMicro(bounds.min)}`,
    'above-maximum': `is above the largest accepted value, ${formatMicro(bounds.max)}`,
  };
  throw badRequest('invalid-amount', `${field} ${why[problem]} (got ${shown.slice(0, 40)}).`, { field });
}

/** Pure: millionths → the shortest exact decimal text (`-12.5`, `0.000001`, `3`). */
export function formatMicro(micro: bigint): string {
  const negative = micro < 0n;
  const magnitude = negative ? -micro : micro;
  const whole = magnitude / MICRO;
  const fraction = (magnitude % MICRO).toString().padStart(MAX_DECIMALS, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Millionths → a JSON number: exact up to 15 significant digits, the nearest double beyond. */
export function microToNumber(micro: bigint): number {
  return Number(formatMicro(micro));
}

/** The exact sum of millionths. */
export function sumMicro(values: Iterable<bigint>): bigint {
  let total = 0n;
  for (const v of values) total += v;
  return total;
}
