import { type DestinationStream, type Logger, pino, stdSerializers } from 'pino';
import type { LogLevel } from './config.ts';

/**
 * The service's pino logger. Credentials never reach a log line: the headers that carry them are
 * redacted wherever a request or response is logged, and database errors lose the bound values of
 * the failed statement (Drizzle puts them in `params` and in the message; PostgreSQL puts row
 * values in `detail`), which may hold token hashes, signatures or operator input.
 */

const SECRET_HEADERS = ['authorization', 'cookie', 'x-api-key', 'x-observatory-signature', 'x-observatory-bridge', 'set-cookie'];

export const REDACT_PATHS = SECRET_HEADERS.flatMap((h) => [`headers["${h}"]`, `*.headers["${h}"]`]);

/** Keys of an error object that hold a statement's values rather than its text. */
const ERROR_VALUE_KEYS = ['params', 'parameters', 'detail'];

/** `\nparams: …` up to the end of its line, as Drizzle's "Failed query" message and stack carry it. */
const PARAMS_LINE = /(\nparams: )[^\n]*/g;

export function scrubError(err: unknown): unknown {
  const serialized = stdSerializers.err(err as Error) as unknown;
  if (serialized === null || typeof serialized !== 'object') return serialized;
  const out = serialized as Record<string, unknown>;
  for (const key of ERROR_VALUE_KEYS) if (key in out) out[key] = '[redacted]';
  for (const key of ['message', 'stack'] as const) {
    if (typeof out[key] === 'string') out[key] = (out[key] as string).replace(PARAMS_LINE, '$1[redacted]');
  }
  return out;
}

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, serializers: { err: scrubError } };
  return destination ? pino(options, destination) : pino(options);
}
