import type { App } from '../src/app.ts';
import { V1 } from '../src/platform/http/registry.ts';

/**
 * The benchmark scenarios `npm run bench` runs, in this order. To add one, append an object to
 * `scenarios`: a unique `name` (what BENCH_ONLY selects), a one-line `description` (printed and
 * copied into docs/performance.md by hand), an optional `setup` that prepares data before the
 * load starts, and the `request` autocannon repeats on every connection.
 *
 * The first scenario, `healthz`, is the baseline: every other scenario's throughput is reported as
 * a percentage of it (targets read "at least X% of /healthz"), so it always runs.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One HTTP request, repeated for the whole scenario. */
export interface BenchRequest {
  method: HttpMethod;
  /** Path and query, e.g. `/api/observatory/v1/tokens?limit=50`. */
  path: string;
  headers?: Record<string, string>;
  /** A string is sent as it is; anything else is sent as JSON (content-type set unless given). */
  body?: unknown;
}

/** What a scenario can use to prepare itself and to build its request. */
export interface BenchContext {
  /** `http://127.0.0.1:<port>` of the app under test. */
  baseUrl: string;
  /** Plaintext of the admin token (every scope); the app was started with it. */
  adminToken: string;
  /** `{ authorization: 'Bearer <admin token>' }`. */
  adminHeaders: Record<string, string>;
  driver: 'pglite' | 'node-postgres';
  /** The running app, for setups that seed through services rather than HTTP. */
  app: App;
  /**
   * One request over the real socket, with the admin token unless `headers.authorization` is
   * given; throws unless the answer is 2xx. Returns the parsed JSON body (or text).
   */
  api<T = unknown>(method: HttpMethod, path: string, body?: unknown, headers?: Record<string, string>): Promise<T>;
}

export interface Scenario<S = unknown> {
  name: string;
  description: string;
  /** Runs once before the warm-up; what it returns is handed to `request` when that is a function. */
  setup?(ctx: BenchContext): Promise<S>;
  request: BenchRequest | ((ctx: BenchContext, state: S) => BenchRequest);
}

/** Keeps `S` checked between a scenario's setup and its request. */
export function defineScenario<S = undefined>(scenario: Scenario<S>): Scenario {
  return scenario as Scenario;
}

export const BASELINE = 'healthz';

export const scenarios: Scenario[] = [
  defineScenario({
    name: BASELINE,
    description: 'GET /healthz: no auth, no database; the cost of Fastify, the hooks and the envelope. The baseline.',
    request: { method: 'GET', path: '/healthz' },
  }),
  defineScenario({
    name: 'tokens-list',
    description:
      'GET /v1/tokens with the admin bearer token: token lookup (hash + join on users) on every call, then the list query.',
    request: (ctx) => ({ method: 'GET', path: `${V1}/tokens`, headers: ctx.adminHeaders }),
  }),
  defineScenario({
    name: 'manifest',
    description:
      'GET /v1/manifest with the admin bearer token: token lookup, then serialising the cached manifest (every endpoint with its schemas).',
    request: (ctx) => ({ method: 'GET', path: `${V1}/manifest`, headers: ctx.adminHeaders }),
  }),
];
