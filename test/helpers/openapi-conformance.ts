import { validate as validateOpenApiDocument } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { OpenAPIBackend, type Operation } from 'openapi-backend';
import { ADMIN_TOKEN, type TestApp, V1 } from './app.ts';

/**
 * Checks traffic against the OpenAPI document the service serves, with an independent validator
 * (openapi-backend), so the document is held to what the service really does (issue 14 item 9).
 *
 * A request the document forbids is a failure only when the service accepted it: a 4xx means the
 * service refused it too. Anything the service answered that the document does not describe (an
 * undeclared status, another content type, a body outside that status's schema) is a failure.
 *
 * openapi-backend and OpenAPI 3.1: its definition check (`validateDefinition`) knows only the
 * OpenAPI 3.0 meta-schema (openapi-schema-validator has 2.0 and 3.0 only) and refuses 3.1 schema
 * keywords such as `const` and `type: [..., "null"]`; in its default non-strict mode it then only
 * warns and skips dereferencing, leaving `$ref`s unresolved. So the document is checked with
 * @readme/openapi-parser, which knows 3.1, the 3.0 check is replaced by that result, and the backend
 * runs strict (anything else that fails throws). Its Ajv is draft-07; a 3.1 document's schemas are
 * JSON Schema 2020-12, so `customizeAjv` swaps in Ajv's 2020-12 build with the same options, the
 * OpenAPI formats openapi-backend adds and ajv-formats (`date-time`, `uuid`, `uri`, … are then
 * checked, as the service's own Ajv checks them).
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** What was sent: method, URL with its query string, headers as sent, and the body (parsed JSON or raw text). */
export interface ExchangeRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
}

/** What came back: status, headers and the body text. */
export interface ExchangeResponse {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

export interface OpenApiConformance {
  /** What the document says is wrong with this request, whatever the answer; empty when it allows it. */
  checkRequest(request: ExchangeRequest): string[];
  /** The violations of this exchange, each a readable line; empty when the document describes it. */
  checkExchange(request: ExchangeRequest, response: ExchangeResponse): string[];
}

/** The formats openapi-backend adds to its own Ajv (OpenAPI's `int32`, `byte`, …), kept in the 2020-12 one. */
type FormatDefinition = Parameters<Ajv2020['addFormat']>[1];

/** openapi-backend with its OpenAPI 3.0-only definition check replaced (see above). */
class OpenApi31Backend extends OpenAPIBackend {
  override validateDefinition() {
    return this.document;
  }
}

/** Builds a checker over an OpenAPI 3.1 document; throws when the document itself is invalid. */
export async function conformanceOf(document: object): Promise<OpenApiConformance> {
  const checked = await validateOpenApiDocument(structuredClone(document) as never);
  if (!checked.valid) throw new Error(`the OpenAPI document is invalid: ${JSON.stringify(checked).slice(0, 2000)}`);
  const ajvs = new Map<string, Ajv2020>();
  const api = new OpenApi31Backend({
    definition: structuredClone(document) as never,
    strict: true,
    // Compiles an operation's validators when it is first checked, not all of them up front.
    quick: true,
    // Every error of a request or body, not only the first, so a violation reads whole.
    ajvOpts: { allErrors: true },
    customizeAjv: (original, options) => {
      // One 2020-12 Ajv per option set (the backend asks for a fresh one per operation, and
      // building one with its formats costs more than compiling a schema).
      const key = JSON.stringify(options);
      let ajv = ajvs.get(key);
      if (!ajv) {
        ajv = addFormats(new Ajv2020({ ...options, strict: false }));
        for (const [name, format] of Object.entries(original.formats)) if (!(name in ajv.formats)) ajv.addFormat(name, format as FormatDefinition);
        ajvs.set(key, ajv);
      }
      return ajv as never;
    },
  });
  await api.init();
  return {
    checkRequest: (request) => {
      const operation = api.router.matchOperation(backendRequestOf(request));
      if (!operation) return [`${request.method} ${request.url}: no operation in the document matches this method and path`];
      const result = api.validator.validateRequest(backendRequestOf(request), operation);
      return result.valid ? [] : [`${request.method} ${request.url} (${operation.operationId}): ${describeErrors(result.errors)}`];
    },
    checkExchange: (request, response) => checkExchange(api, request, response),
  };
}

/** The checker over the document the test app serves at `GET {v1}/openapi.json`. */
export async function servedConformance(t: TestApp): Promise<OpenApiConformance> {
  const res = await t.app.server.inject({ method: 'GET', url: `${V1}/openapi.json`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  if (res.statusCode !== 200) throw new Error(`GET ${V1}/openapi.json answered ${res.statusCode}`);
  return conformanceOf(res.json());
}

const mediaTypeOf = (value: unknown) =>
  String(Array.isArray(value) ? value[0] : (value ?? ''))
    .split(';')[0]!
    .trim()
    .toLowerCase();

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

type ResponseObject = { content?: Record<string, unknown>; headers?: Record<string, unknown> };

/** The response the document declares for a status: exact, then `4XX`-style, then `default`. */
function declaredResponse(operation: Operation, status: number): ResponseObject | undefined {
  const responses = (operation.responses ?? {}) as Record<string, ResponseObject>;
  return responses[String(status)] ?? responses[`${Math.floor(status / 100)}XX`] ?? responses.default;
}

function describeErrors(errors: readonly { instancePath?: string; message?: string; params?: unknown }[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params ?? {})}`.trim())
    .join('; ');
}

/** The request as openapi-backend takes it. A zero-length body is no body (RFC 9110 §8.6), whatever the content type says. */
function backendRequestOf(request: ExchangeRequest) {
  return {
    method: request.method,
    path: request.url,
    headers: request.headers as Record<string, string | string[]>,
    ...(request.body === undefined || request.body === '' ? {} : { body: request.body }),
  };
}

function checkExchange(api: OpenAPIBackend, request: ExchangeRequest, response: ExchangeResponse): string[] {
  const status = response.statusCode;
  const label = `${request.method} ${request.url} → ${status}`;
  const backendRequest = backendRequestOf(request);
  const operation = api.router.matchOperation(backendRequest);
  if (!operation) {
    // A path or method the document does not describe must be refused.
    return status >= 400 && status < 500 ? [] : [`${label}: no operation in the document matches this method and path, yet the service answered ${status}`];
  }
  const label2 = `${label} (${operation.operationId})`;
  const violations: string[] = [];

  const requestCheck = api.validator.validateRequest(backendRequest, operation);
  if (!requestCheck.valid && !(status >= 400 && status < 500)) {
    violations.push(`${label2}: request outside the document, accepted: ${describeErrors(requestCheck.errors)}`);
  }

  const declared = declaredResponse(operation, status);
  if (!declared) {
    violations.push(`${label2}: status ${status} is not declared (declared: ${Object.keys(operation.responses ?? {}).join(', ')})`);
    return violations;
  }
  const mediaTypes = Object.keys(declared.content ?? {});
  const sent = mediaTypeOf(response.headers['content-type']);
  if (mediaTypes.length === 0) {
    if (response.body.length > 0) violations.push(`${label2}: a ${sent || 'untyped'} body where the document declares none`);
  } else if (!mediaTypes.some((m) => mediaTypeOf(m) === sent)) {
    violations.push(`${label2}: content type ${sent || '(none)'} where the document declares ${mediaTypes.join(', ')}`);
  } else if (isJson(sent)) {
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      violations.push(`${label2}: the ${sent} body is not JSON`);
      return violations;
    }
    const bodyCheck = api.validator.validateResponse(body, operation, status);
    if (!bodyCheck.valid) violations.push(`${label2}: response body outside the ${status} schema: ${describeErrors(bodyCheck.errors)}`);
  }
  const headerCheck = api.validator.validateResponseHeaders(response.headers, operation, { statusCode: status, setMatchType: 'superset' as never });
  if (!headerCheck.valid) violations.push(`${label2}: response headers: ${describeErrors(headerCheck.errors)}`);
  return violations;
}

/** An exchange as it happened, for checking once the document is at hand. */
export interface Exchange {
  request: ExchangeRequest;
  response: ExchangeResponse;
}

/** The request light-my-request sent: its URL (query merged in), headers (content type added) and the body given. */
export function exchangeOf(options: InjectOptions, res: LightMyRequestResponse): Exchange {
  const sent = res.raw.req as unknown as { method: string; url: string; headers: Record<string, string | string[] | undefined> };
  const payload = options.payload ?? options.body;
  const body = payload === undefined ? undefined : Buffer.isBuffer(payload) ? payload.toString('utf8') : payload;
  return {
    request: { method: sent.method, url: sent.url, headers: { ...sent.headers }, ...(body === undefined ? {} : { body }) },
    response: { statusCode: res.statusCode, headers: { ...res.headers }, body: res.body },
  };
}

/**
 * Records every exchange made through `t.call` from now on (test helpers such as `signedIngest`
 * call it too). `violations()` checks them all against the served document and returns the lines.
 */
export function recordExchanges(t: TestApp): { exchanges: Exchange[]; violations(): Promise<string[]> } {
  const exchanges: Exchange[] = [];
  const call = t.call;
  t.call = async (options) => {
    const res = await call(options);
    exchanges.push(exchangeOf(options, res));
    return res;
  };
  return {
    exchanges,
    async violations() {
      const conformance = await servedConformance(t);
      return exchanges.flatMap((e) => conformance.checkExchange(e.request, e.response));
    },
  };
}
