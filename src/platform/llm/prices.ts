/**
 * What model calls cost (spec D8; the monthly model budget): a shipped price table, the operator's
 * overrides from OBSERVATORY_LLM_PRICES merged over it (config.llm.prices), and exact arithmetic
 * from token counts to whole US cents.
 *
 * Prices are US cents per million tokens, as providers publish them (gpt-4o-mini: 15 ¢ input,
 * 60 ¢ output). Some are fractions of a cent (7.5 ¢), so every price is first scaled to whole
 * thousandths of a cent per million tokens ("milli-cents per MTok", rounded to the nearest one;
 * no published price is finer). Then `tokens × milli-cents per MTok` is an integer count of
 * nano-cents (10⁻⁹ ¢): the cost of any number of calls is an exact integer sum, kept in a bigint
 * because a month of tokens times a large price passes 2⁵³. Only the final total is turned into
 * cents, rounding up once, so a budget is never under-counted by rounding each call down and a
 * thousand tiny calls are not each charged a whole cent by rounding each one up.
 */

export interface ModelPrice {
  inputCentsPerMTok: number;
  outputCentsPerMTok: number;
}

/** The tokens one model call used, as ModelAnswer (or ModelError.usage) reports them. */
export interface ModelUsage {
  model: string;
  promptTokens: number;
  completionTokens: number;
}

/**
 * The shipped prices (list prices, US cents per million tokens). `builtin` is the engine without a
 * model and costs nothing. `*` prices every model not listed, like gpt-4o, one of the dearer
 * common models: an unknown model (a new release, a self-hosted one, a typo) is never silently
 * free, so the budget still stops a run-away spend; an operator whose model is cheaper (or free,
 * a local server) says so in OBSERVATORY_LLM_PRICES.
 */
export const DEFAULT_LLM_PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  'gpt-4o-mini': { inputCentsPerMTok: 15, outputCentsPerMTok: 60 },
  'gpt-4o': { inputCentsPerMTok: 250, outputCentsPerMTok: 1000 },
  'gpt-4.1': { inputCentsPerMTok: 200, outputCentsPerMTok: 800 },
  'gpt-4.1-mini': { inputCentsPerMTok: 40, outputCentsPerMTok: 160 },
  'gpt-4.1-nano': { inputCentsPerMTok: 10, outputCentsPerMTok: 40 },
  'o4-mini': { inputCentsPerMTok: 110, outputCentsPerMTok: 440 },
  builtin: { inputCentsPerMTok: 0, outputCentsPerMTok: 0 },
  '*': { inputCentsPerMTok: 250, outputCentsPerMTok: 1000 },
});

/**
 * A dated snapshot name (`gpt-4o-mini-2024-07-18`): an operator may configure a snapshot rather
 * than its alias, so the alias's price covers its snapshots, or every such call would be priced by
 * `*`, sixteen times too high. (Runs are priced by the configured model, never by the name the
 * server reports: see openai-engine.ts.)
 */
const DATED_SNAPSHOT = /^(.+)-\d{4}-\d{2}-\d{2}$/;

/**
 * The price of `model`: the overrides merged over the shipped table, then the first of: the exact
 * name; the name without a dated-snapshot suffix; `*`. An override replaces a whole entry, and an
 * override of `*` only prices models neither table names (it does not reprice gpt-4o-mini).
 */
export function priceOf(model: string, overrides: Readonly<Record<string, ModelPrice>>): ModelPrice {
  const table: Record<string, ModelPrice> = { ...DEFAULT_LLM_PRICES, ...overrides };
  const own = (name: string) => (Object.hasOwn(table, name) ? table[name] : undefined);
  const alias = DATED_SNAPSHOT.exec(model)?.[1];
  // `*` is always present: the shipped table has it and an override can only replace it.
  return own(model) ?? (alias === undefined ? undefined : own(alias)) ?? table['*']!;
}

/** Nano-cents (10⁻⁹ ¢) in one cent. */
const NANO_CENTS_PER_CENT = 1_000_000_000n;

/** A price in whole milli-cents per million tokens (see the top of the file). */
function milliCentsPerMTok(cents: number, what: string): bigint {
  if (!Number.isFinite(cents) || cents < 0) throw new RangeError(`${what} must be a finite price of 0 or more, not ${cents}`);
  return BigInt(Math.round(cents * 1000));
}

function tokenCount(tokens: number, what: string): bigint {
  if (!Number.isSafeInteger(tokens) || tokens < 0) throw new RangeError(`${what} must be a whole number of tokens, 0 or more, not ${tokens}`);
  return BigInt(tokens);
}

/**
 * The exact cost of one call, or of any number of calls of one model (their token counts
 * summed), in nano-cents (10⁻⁹ US cent). Pure and exact: sum these, then round once
 * (`spendCents`). Throws a RangeError for a negative or fractional token count.
 */
export function costNanoCents(usage: ModelUsage, overrides: Readonly<Record<string, ModelPrice>>): bigint {
  return priced(usage.model, tokenCount(usage.promptTokens, 'promptTokens'), tokenCount(usage.completionTokens, 'completionTokens'), overrides);
}

function priced(model: string, promptTokens: bigint, completionTokens: bigint, overrides: Readonly<Record<string, ModelPrice>>): bigint {
  const price = priceOf(model, overrides);
  return (
    promptTokens * milliCentsPerMTok(price.inputCentsPerMTok, `the input price of ${model}`) +
    completionTokens * milliCentsPerMTok(price.outputCentsPerMTok, `the output price of ${model}`)
  );
}

/**
 * What these calls cost together, in whole US cents rounded up once at the end: the tokens are
 * summed per model, priced exactly, summed, and only then ceil-divided into cents. Any spend above
 * zero is at least 1 cent; no spend is 0.
 */
export function spendCents(usages: readonly ModelUsage[], overrides: Readonly<Record<string, ModelPrice>>): number {
  const perModel = new Map<string, { prompt: bigint; completion: bigint }>();
  for (const usage of usages) {
    const sum = perModel.get(usage.model) ?? { prompt: 0n, completion: 0n };
    sum.prompt += tokenCount(usage.promptTokens, 'promptTokens');
    sum.completion += tokenCount(usage.completionTokens, 'completionTokens');
    perModel.set(usage.model, sum);
  }
  let total = 0n;
  for (const [model, sum] of perModel) total += priced(model, sum.prompt, sum.completion, overrides);
  return centsRoundedUp(total);
}

/** Nano-cents as whole cents, rounded up (for a caller that summed `costNanoCents` itself). */
export function centsRoundedUp(nanoCents: bigint): number {
  if (nanoCents < 0n) throw new RangeError(`a cost cannot be negative, not ${nanoCents}`);
  return Number((nanoCents + NANO_CENTS_PER_CENT - 1n) / NANO_CENTS_PER_CENT);
}
