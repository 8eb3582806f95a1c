export { backoffDelay, type BackoffPolicy, DEFAULT_BACKOFF } from './backoff.ts';
export { diskQueue, type EventQueue, memoryQueue } from './queue.ts';
export { createSender, INGEST_PATH, MAX_BODY_BYTES, MAX_EVENTS_PER_REQUEST, type Sender, type SenderOptions } from './sender.ts';
export { ingestSignature } from './signature.ts';
export type { DeliveryProblem, HoneypotEvent, IngestAnswer, SenderStats } from './types.ts';
export {
  type ClientFacts,
  clientOf,
  clientRulesOf,
  type ClientRules,
  clean,
  headerText,
  parseTrusted,
  plainAddress,
  RECORDED_HEADERS,
  type RecordedRequest,
  recordedHeaders,
  requestEvent,
  type SeenRequest,
  type TrustedRange,
} from './request.ts';
export { clientKey, type PendingAnswer, type Verdict, verdictCache, type VerdictTracker, verdictTracker } from './verdicts.ts';
