/** What run.ts and the scenarios read from the environment, checked the same way. */

/** An error whose message says it all: printed without a stack. */
export class BenchError extends Error {}

/** A whole number from `name` within [min, max], or `fallback` when unset. */
export function intFromEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new BenchError(`${name} must be a whole number between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

/** One of `choices` from `name`, or the first choice when unset. */
export function choiceFromEnv<T extends string>(name: string, choices: readonly [T, ...T[]]): T {
  const raw = process.env[name]?.trim();
  if (!raw) return choices[0];
  if (!(choices as readonly string[]).includes(raw)) throw new BenchError(`${name} must be one of ${choices.join(', ')}, got "${raw}"`);
  return raw as T;
}
