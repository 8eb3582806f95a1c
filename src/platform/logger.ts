import { Writable } from 'node:stream';
import { type DestinationStream, type Logger, pino, stdSerializers } from 'pino';
import pretty from 'pino-pretty';
import type { LogFormat, LogLevel } from './config.ts';

/**
 * The service's pino logger. Credentials never reach a log line: the headers that carry them and
 * the fields that hold secrets are redacted wherever a request, a response or a body is logged,
 * and database errors lose the bound values of the failed statement (Drizzle puts them in
 * `params` and in the message; PostgreSQL puts row values in `detail`), which may hold token
 * hashes, signatures or operator input. The test suite checks every line it logs for the secrets
 * it created (test/global-setup.ts, docs/testing.md).
 */

const SECRET_HEADERS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-observatory-signature',
  'x-observatory-bridge',
];

/**
 * Fields that hold a secret when a record or a body is logged: token and agent key plaintexts,
 * tenant and webhook signing secrets, chat webhook URLs (their path is the credential), the IP
 * hash key. `key` is too common a name to hide everywhere; it is hidden in a logged `body`, where
 * the agent key create response carries it. These paths are top-level on purpose: a leading `*.`
 * path makes pino walk every key of every line (it tripled the cost of a request's log lines), so
 * only the credential headers, which request and response objects nest, are looked for a level
 * down. Log a body as `body`, a destination as `destination`, never inside another object.
 */
const SECRET_FIELDS = ['token', 'signingSecret', 'previousSecret', 'secret', 'webhookUrl', 'ipHashKey'];

export const REDACT_PATHS = [
  ...SECRET_HEADERS.flatMap((h) => [`headers["${h}"]`, `*.headers["${h}"]`]),
  ...SECRET_FIELDS,
  ...[...SECRET_FIELDS, 'key'].map((f) => `body.${f}`),
  // Outbound destinations: a URL's path and a webhook's secret are credentials (docs/platform/outbound.md).
  ...['destination', 'destinations[*]'].flatMap((d) => [`${d}.url`, `${d}.secret`]),
];

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

export interface LoggerOutput {
  /** `json` (the default) or `pretty` (config.logFormat). */
  format?: LogFormat;
  /** Where lines go; standard output unless given (tests pass a sink). */
  destination?: DestinationStream;
  /** Colours in pretty lines; unset, when the destination is standard output and supports them. */
  colorize?: boolean;
}

/**
 * The service logger: JSON lines, or (`format: 'pretty'`) readable lines for a terminal. Pretty
 * lines go through pino-pretty as a synchronous stream in this thread, not a worker transport:
 * pino redacts and serializes each record before the stream sees it, so the same secrets are
 * hidden in both formats, and nothing is lost when the process exits right after a line.
 * The second argument may also be a bare destination stream (JSON lines to it).
 */
export function createLogger(level: LogLevel, output: LoggerOutput | DestinationStream = {}): Logger {
  const { format = 'json', destination, colorize } = isDestination(output) ? { destination: output } : output;
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, serializers: { err: scrubError } };
  if (format === 'pretty') {
    const stream = pretty({
      sync: true,
      colorize: colorize ?? (destination === undefined && pretty.isColorSupported),
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      ...(destination ? { destination: asWritable(destination) } : {}),
    });
    return pino(options, stream);
  }
  return destination ? pino(options, destination) : pino(options);
}

/** pino-pretty pipes into its destination, which must then be a real stream; a bare `{ write }` sink is wrapped. */
function asWritable(destination: DestinationStream): Writable {
  if (destination instanceof Writable) return destination;
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      destination.write(chunk.toString());
      callback();
    },
  });
}

function isDestination(output: LoggerOutput | DestinationStream): output is DestinationStream {
  return typeof (output as DestinationStream).write === 'function';
}
