import { ServiceError } from '../errors.ts';

/**
 * A cap on how many requests of one kind are worked on at once. A request over the cap is refused
 * at once with 503 and `Retry-After`, instead of waiting in a queue that grows without bound while
 * the database is slower than the clients: the client holds its own retry, the server holds nothing.
 */

/** The named pools an endpoint can draw from (the registry's `concurrency` field). */
export type ConcurrencyPool = 'ingest' | 'graph-query' | 'model-call';

/** How long a refused client is told to wait: work here takes milliseconds, so one second is ample. */
export const OVERLOADED_RETRY_AFTER_SEC = 1;

export interface ConcurrencySlot {
  /** Gives the slot back; calling it again does nothing, so every exit path may call it. */
  release(): void;
  readonly released: boolean;
}

export interface ConcurrencyLimit {
  readonly pool: ConcurrencyPool;
  readonly capacity: number;
  /** Slots held now. */
  inUse(): number;
  /** A slot, or null when all `capacity` are held. Never waits. */
  tryAcquire(): ConcurrencySlot | null;
}

export function createConcurrencyLimit(pool: ConcurrencyPool, capacity: number): ConcurrencyLimit {
  if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`concurrency limit ${pool}: capacity must be a whole number of at least 1, got ${capacity}`);
  let held = 0;
  return {
    pool,
    capacity,
    inUse: () => held,
    tryAcquire() {
      if (held >= capacity) return null;
      held++;
      let released = false;
      return {
        get released() {
          return released;
        },
        release() {
          if (released) return;
          released = true;
          held--;
        },
      };
    },
  };
}

export function overloaded(limit: ConcurrencyLimit): ServiceError {
  return new ServiceError(
    503,
    'overloaded',
    `The server is already working on ${limit.capacity} ${limit.pool} requests; nothing was done. Try again in ${OVERLOADED_RETRY_AFTER_SEC} s.`,
    { retryAfterSec: OVERLOADED_RETRY_AFTER_SEC },
  );
}

/**
 * One request's hold on a slot. The slot is the request's share of the work (database writes), so
 * it is held until that work ends, not until the answer leaves: a request answered early by the
 * deadline (503 `timeout`) or whose client went away keeps its slot while its handler still runs,
 * so neither can push the work in flight past the cap. A request that never reaches its handler
 * (its body fails validation, its client goes away first) gives the slot back when its response
 * ends or its connection closes.
 */
export interface RequestSlot {
  /** The handler starts: the slot is held until `endWork`. False when the slot was already given back. */
  startWork(): boolean;
  endWork(): void;
  /** The response ended or the connection closed. */
  responseClosed(): void;
}

export function holdForRequest(slot: ConcurrencySlot): RequestSlot {
  let working = false;
  return {
    startWork() {
      if (slot.released) return false;
      working = true;
      return true;
    },
    endWork() {
      working = false;
      slot.release();
    },
    responseClosed() {
      if (!working) slot.release();
    },
  };
}
