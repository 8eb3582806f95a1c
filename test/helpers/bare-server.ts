import type { FastifyInstance } from 'fastify';
import { systemClock } from '../../src/platform/clock.ts';
import type { Endpoint } from '../../src/platform/http/registry.ts';
import { buildServer, type ServerOptions } from '../../src/platform/http/server.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createMetrics } from '../../src/platform/metrics.ts';

/**
 * A server built from a few throwaway endpoints, with no credentials, database or registry: for
 * tests of what the HTTP layer does on its own (limits, proxy trust, error rendering).
 */
export function buildBareServer(endpoints: Endpoint[], overrides: Partial<ServerOptions> = {}): FastifyInstance {
  return buildServer({
    endpoints,
    credentials: { fromBearer: async () => null, fromSession: async () => null },
    clock: systemClock,
    metrics: createMetrics(() => ({ total: 0, idle: 0, waiting: 0 })),
    metricsToken: null,
    logger: createLogger('silent'),
    trustProxy: false,
    ...overrides,
  });
}
