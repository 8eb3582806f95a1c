import type { FastifyError } from 'fastify';
import { ServiceError } from '../errors.ts';
import { isDatabaseUnavailable, isReadOnlyRefusal } from '../db/transaction.ts';

/** Retry-After of a write refused during a read-only window: the window lasts seconds (docs/chaos/README.md). */
export const READ_ONLY_RETRY_AFTER_SEC = 5;

export interface ErrorBody {
  schema: 'svc-error.v1';
  reason: string;
  human: string;
  [extra: string]: unknown;
}

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

const VALIDATION_REASON: Record<string, string> = {
  body: 'invalid-body',
  querystring: 'invalid-query',
  params: 'invalid-params',
  headers: 'invalid-headers',
};

const LOCATION: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

/** `body` + `/events/0/ts` → `body.events[0].ts`; a missing property is named too. */
function fieldName(context: string, issue: ValidationIssue): string {
  const segments = (issue.instancePath ?? '').split('/').filter(Boolean);
  const missing = issue.params?.missingProperty;
  if (typeof missing === 'string') segments.push(missing);
  const additional = issue.params?.additionalProperty;
  if (typeof additional === 'string') segments.push(additional);
  let name = LOCATION[context] ?? context;
  for (const segment of segments) name += /^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`;
  return name;
}

function describeValidation(context: string, issue: ValidationIssue): string {
  const field = fieldName(context, issue);
  const params = issue.params ?? {};
  if (typeof params.missingProperty === 'string') return `${field} is required.`;
  if (typeof params.additionalProperty === 'string') return `${field} is not a known field.`;
  if (Array.isArray(params.allowedValues)) return `${field} must be one of: ${params.allowedValues.join(', ')}.`;
  return `${field} ${issue.message ?? 'is invalid'}.`;
}

export interface RenderedError {
  status: number;
  body: ErrorBody;
  /** Unexpected failures are logged with their stack; expected ones are not. */
  unexpected: boolean;
}

/** What the route that failed allows, so a refusal can state the limit it broke. */
export interface RouteLimits {
  /** The route's body limit in bytes (Fastify's `request.routeOptions.bodyLimit`). */
  bodyLimit?: number;
  /** The route's handler deadline in milliseconds (`request.routeOptions.handlerTimeout`). */
  timeoutMs?: number;
}

/** 1048576 → `1 MiB`, 16384 → `16 KiB`, 1000 → `1000 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** 30000 → `30 s`, 250 → `250 ms`. */
export function formatDuration(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** Maps anything thrown while serving a request to one `svc-error.v1` answer. */
export function renderError(error: unknown, requestId: string, route: RouteLimits = {}): RenderedError {
  if (error instanceof ServiceError) {
    return {
      status: error.status,
      body: { ...error.details, schema: 'svc-error.v1', reason: error.reason, human: error.human },
      unexpected: false,
    };
  }
  const fastifyError = error as FastifyError & { validationContext?: string; validation?: ValidationIssue[] };
  if (Array.isArray(fastifyError.validation) && fastifyError.validation.length > 0) {
    const context = fastifyError.validationContext ?? 'body';
    const issue = fastifyError.validation[0] as ValidationIssue;
    return {
      status: 400,
      body: {
        schema: 'svc-error.v1',
        reason: VALIDATION_REASON[context] ?? 'invalid-request',
        human: describeValidation(context, issue),
        field: fieldName(context, issue),
      },
      unexpected: false,
    };
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE': {
      if (route.bodyLimit === undefined) return expected(413, 'payload-too-large', 'The request body is larger than this endpoint takes.');
      const refused = expected(413, 'payload-too-large', `The request body is larger than ${formatBytes(route.bodyLimit)}, the most this endpoint takes.`);
      return { ...refused, body: { ...refused.body, limitBytes: route.bodyLimit } };
    }
    case 'FST_ERR_HANDLER_TIMEOUT':
      // The handler is not stopped (Fastify's deadline is cooperative), so a write may still land.
      return expected(
        503,
        'timeout',
        `The request was not answered within ${route.timeoutMs === undefined ? 'the server\'s deadline' : formatDuration(route.timeoutMs)}; a change it asked for may still be applied. Check, or retry if repeating it is safe.`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return expected(400, 'invalid-content-type', 'Send request bodies as application/json.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return expected(400, 'invalid-body', 'The request body size does not match its Content-Length.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return expected(400, 'invalid-body', 'The request body is empty.');
  }
  if (error instanceof SyntaxError || fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return expected(400, 'malformed-json', 'The request body is not valid JSON.');
  }
  // The database's read-only window (a chaos experiment, docs/chaos/README.md): the write's transaction
  // was refused and rolled back whole.
  if (isReadOnlyRefusal(error)) {
    const refused = expected(
      503,
      'read-only',
      `The database is read-only for a moment; nothing was written. Try again in ${READ_ONLY_RETRY_AFTER_SEC} s.`,
    );
    return { ...refused, body: { ...refused.body, retryAfterSec: READ_ONLY_RETRY_AFTER_SEC } };
  }
  if (isDatabaseUnavailable(error)) {
    return expected(503, 'unavailable', 'The database is unreachable; nothing was written. Try again shortly.');
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return expected(status, 'bad-request', 'The request could not be understood.');
  }
  return {
    status: 500,
    body: {
      schema: 'svc-error.v1',
      reason: 'internal',
      human: `Something went wrong on our side. Quote request id ${requestId} when reporting it.`,
      requestId,
    },
    unexpected: true,
  };
}

function expected(status: number, reason: string, human: string): RenderedError {
  return { status, body: { schema: 'svc-error.v1', reason, human }, unexpected: false };
}
