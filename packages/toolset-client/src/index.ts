export { EMPIRE_INGEST_PATH, type EmpireIngestBody, type IngestResult, ObservatoryError, type ObservatoryApi, observatoryApi, type paths, PROVENANCE_KEYS_PATH, type RegisteredKey, registerKey } from './api.ts';
export { type BatchOutcome, readIngestAnswer } from './answers.ts';
export {
  createToolsetClient,
  eventProblem,
  MAX_BODY_BYTES,
  MAX_EVENTS_PER_REQUEST,
  MAX_NAME_LENGTH,
  MAX_PAYLOAD_BYTES,
  type ToolsetClient,
  type ToolsetClientOptions,
} from './client.ts';
export { generateToolsetKey, keyIdFileOf, publicKeyB64Of, readKeyId, readPrivateKey, type ToolsetKey, writeKeyId, writePrivateKey } from './keys.ts';
export { eventHash, signedBytes, signEvent, type SignedEvent, type ToolsetEvent } from './signing.ts';
export type { DeliveryProblem, ToolsetClientStats } from './types.ts';
export { backoffDelay, type BackoffPolicy, DEFAULT_BACKOFF } from '@observatory/sender';
