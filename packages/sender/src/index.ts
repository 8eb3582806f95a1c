export { backoffDelay, type BackoffPolicy, DEFAULT_BACKOFF } from './backoff.ts';
export { diskQueue, type EventQueue, memoryQueue } from './queue.ts';
export { createSender, INGEST_PATH, MAX_BODY_BYTES, MAX_EVENTS_PER_REQUEST, type Sender, type SenderOptions } from './sender.ts';
export { ingestSignature } from './signature.ts';
export type { DeliveryProblem, HoneypotEvent, IngestAnswer, SenderStats } from './types.ts';
