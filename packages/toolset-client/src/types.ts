import type { IngestResult } from './api.ts';

export interface DeliveryProblem {
  /** ISO time it happened. */
  at: string;
  /** The HTTP status, or null when there was no answer. */
  status: number | null;
  /** The service's `reason` (`invalid-body`, `bad-signature`, …), when it gave one. */
  reason: string | null;
  message: string;
  /** The event it is about, when it is about one event. */
  eventId?: string;
}

export interface ToolsetClientStats {
  /** Calls of `record`. */
  recorded: number;
  /** Events the service admitted (stored now, or answered as duplicates of an earlier send). */
  sent: number;
  /** Of `sent`, those the service already had (a resend after a lost answer). */
  duplicates: number;
  /** Failed attempts that will be (or were) tried again. */
  retried: number;
  /** Events written to the disk spool. */
  spooled: number;
  /** Events not kept because the queue was full. */
  dropped: number;
  /** Events refused: invalid when recorded, refused by the service, or rejected in its answer. */
  rejected: number;
  /** Events waiting to be sent. */
  pending: number;
  pendingBytes: number;
  /** Whether the last attempt failed and a retry waits. */
  failing: boolean;
  lastProblem: DeliveryProblem | null;
}

export type { IngestResult };
