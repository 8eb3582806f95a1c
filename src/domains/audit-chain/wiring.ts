import type { FastifyBaseLogger } from 'fastify';
import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import { auditChainEndpoints } from './endpoints.ts';
import { type AuditChainService, createAuditChainService } from './service.ts';

export interface AuditChainDomain {
  service: AuditChainService;
  endpoints(): Endpoint[];
  /** Stops the start-up catch-up between two batches and waits for it. */
  close(): Promise<void>;
}

/**
 * The audit chain's endpoints. On creation it starts building, in the background, the Merkle
 * nodes of facts written before the tree existed (a request needing them builds them itself).
 */
export function createAuditChainDomain(deps: { db: Db; clock: Clock; audit: AuditLog; log: FastifyBaseLogger }): AuditChainDomain {
  const service = createAuditChainService(deps);
  const stop = new AbortController();
  const startup = service.catchUp(stop.signal).then(
    (added) => {
      if (added > 0) deps.log.info({ facts: added }, 'audit Merkle tree caught up with the chain');
    },
    (error: unknown) => {
      if (!stop.signal.aborted) deps.log.warn({ err: error }, 'audit Merkle catch-up failed; proofs of the facts it missed build it again');
    },
  );
  return {
    service,
    endpoints: () => auditChainEndpoints(service),
    async close() {
      stop.abort();
      await startup;
    },
  };
}
