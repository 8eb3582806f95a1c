import AjvCompiler from '@fastify/ajv-compiler';

/**
 * Request validation for the server (docs/errors.md): bodies are JSON and checked without type
 * coercion; path and query values are text, converted to their declared types and then held to
 * plain, finite decimal numbers.
 */

/**
 * Ajv options shared by both validators: Fastify's defaults (formats from ajv-formats, defaults
 * applied, first error only — `allErrors` is a DoS risk) except that unknown properties are
 * reported rather than silently removed, and a body's numbers must be finite (JSON `1e309`
 * parses to Infinity).
 */
const AJV_SHARED = { removeAdditional: false, useDefaults: true, allErrors: false, strictNumbers: true } as const;

/**
 * Two Ajv instances, chosen per part of the request. Bodies are JSON and already typed: a wrong
 * type is a 400 `invalid-body`, never coerced (`"scopes": "read:x"` is not `["read:x"]`). Path
 * and query values arrive as text, so they are converted to the declared number, integer or
 * boolean, and a single query value to a declared array (repeated keys give the array); such a
 * converted number is then checked by `strictNumericText`.
 */
export function buildValidatorFactory(): AjvCompiler.ValidatorFactory {
  const pool = AjvCompiler();
  return ((externalSchemas: unknown, ajvServerOptions: unknown) => {
    const plugins = (ajvServerOptions as { plugins?: unknown[] } | undefined)?.plugins ?? [];
    const strict = pool(externalSchemas as never, { customOptions: { ...AJV_SHARED, coerceTypes: false }, plugins } as never) as unknown as BuildValidator;
    const coercing = pool(externalSchemas as never, { customOptions: { ...AJV_SHARED, coerceTypes: 'array' }, plugins } as never) as unknown as BuildValidator;
    const build: BuildValidator = (route) => (route.httpPart === 'querystring' || route.httpPart === 'params' ? strictNumericText(coercing(route)) : strict(route));
    return build;
  }) as unknown as AjvCompiler.ValidatorFactory;
}

interface RouteSchemaDefinition {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
}

type BuildValidator = (route: RouteSchemaDefinition) => CompiledValidator;

interface ValidationError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message: string;
}

type CompiledValidator = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown[] | null; schemaEnv?: unknown };

/** A plain decimal number, as a client writes one: no hex, blanks, `Infinity` or `NaN`. */
const NUMERIC_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Ajv converts any text JavaScript reads as a number (`1e309` → Infinity, `0x10`, ` `) and does
 * not apply `minimum`/`maximum` to Infinity. After a path or query object has validated, every
 * value it converted to a number must have been plain decimal text for a finite number, and an
 * integer must be a safe one (within ±2^53 − 1, so it reaches SQL exactly); otherwise the
 * request is refused naming the field, as any other failed check is.
 */
function strictNumericText(validate: CompiledValidator): CompiledValidator {
  const checked: CompiledValidator = (data, context) => {
    const before = data !== null && typeof data === 'object' ? snapshot(data as Record<string, unknown>) : null;
    const valid = context === undefined ? validate(data) : validate(data, context);
    if (valid !== true || before === null) {
      checked.errors = validate.errors ?? null;
      return valid;
    }
    for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
      const original = before.get(key);
      const values = Array.isArray(value) ? value.map((v, i) => [v, Array.isArray(original) ? original[i] : original, `/${key}/${i}`] as const) : [[value, original, `/${key}`] as const];
      for (const [converted, text, instancePath] of values) {
        if (typeof converted !== 'number' || typeof text !== 'string') continue;
        const finite = NUMERIC_TEXT.test(text) && Number.isFinite(converted);
        if (finite && (!Number.isInteger(converted) || Number.isSafeInteger(converted))) continue;
        checked.errors = [{
          instancePath,
          schemaPath: '#/strictNumericText',
          keyword: 'finite',
          params: {},
          message: finite ? `must be an integer between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}` : 'must be a finite decimal number',
        } satisfies ValidationError];
        return false;
      }
    }
    checked.errors = null;
    return true;
  };
  // Fastify passes the parent (so Ajv may replace the root) only to a function that has this.
  if (validate.schemaEnv !== undefined) checked.schemaEnv = validate.schemaEnv;
  return checked;
}

function snapshot(data: Record<string, unknown>): Map<string, unknown> {
  const copy = new Map<string, unknown>();
  for (const [key, value] of Object.entries(data)) copy.set(key, Array.isArray(value) ? [...value] : value);
  return copy;
}
