/**
 * Budget percentages in exact integers (amounts are micro-USD bigints; src/platform/money.ts converts them
 * to and from the API's numbers). A threshold is judged by `reaches`, never by comparing the shown
 * percentage, and the shown percentage is cut so that both always agree.
 */

/**
 * ⌊a / b⌋ for b > 0 (bigint division truncates towards zero). For b > 0 the remainder takes the
 * sign of a, so it is below 0 exactly when a < 0 and b does not divide a: the quotient was
 * truncated upwards.
 */
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b < 0n ? q - 1n : q;
}

/**
 * `observed` as a percentage of `budget` (> 0), cut (floored, not rounded) to two decimals, so a
 * threshold `t` (a whole percentage) is crossed exactly when the shown percentage is ≥ t:
 * 799999 of 1000000 is 79.99, never 80.
 */
export function percentOf(observed: bigint, budget: bigint): number {
  if (budget <= 0n) throw new Error(`a budget must be above 0 (got ${budget})`);
  return Number(floorDiv(observed * 10_000n, budget)) / 100;
}

/** Whether `observed` reaches `thresholdPct` percent of `budget`: observed × 100 ≥ threshold × budget. */
export function reaches(observed: bigint, budget: bigint, thresholdPct: number): boolean {
  return observed * 100n >= BigInt(thresholdPct) * budget;
}
