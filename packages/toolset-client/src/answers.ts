import type { IngestResult } from './api.ts';

/** What one ingest attempt came to, read from the service's answer. */
export type BatchOutcome =
  /** Answered per event: every result in the order sent. */
  | { kind: 'answered'; accepted: number; duplicates: number; results: IngestResult[] }
  /** The request was refused for the event at `index` (a 400 naming it, or a batch of one). */
  | { kind: 'refused-entry'; index: number; status: number | null; reason: string | null; message: string }
  /** The request was refused without naming an event: send halves until one is named. */
  | { kind: 'split'; reason: string | null; message: string }
  /** No usable answer (unreachable, 401/403, 429, 5xx, a proxy's page): send the same again later. */
  | { kind: 'retry'; status: number | null; reason: string | null; message: string };

/**
 * Maps the empire ingest's answer to a batch of `sent` events. A 200 answers each event; a 400 or
 * 413 refuses the whole request for one event's content, so sending it again would change
 * nothing; anything else is worth retrying, since nothing of the request was stored.
 */
export function readIngestAnswer(status: number, body: unknown, sent: number): BatchOutcome {
  const json = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const reason = typeof json.reason === 'string' ? json.reason : null;
  const message = typeof json.human === 'string' ? json.human : typeof json.message === 'string' ? json.message : `HTTP ${status}`;
  if (status >= 200 && status < 300) {
    const results = Array.isArray(json.results) ? (json.results as IngestResult[]) : null;
    if (results === null || results.length !== sent) return { kind: 'retry', status, reason: 'malformed-answer', message: 'the answer did not hold one result per event' };
    return { kind: 'answered', accepted: Number(json.accepted) || 0, duplicates: Number(json.duplicates) || 0, results };
  }
  if (status === 400 || status === 413) {
    const field = (json.details as { field?: unknown } | undefined)?.field ?? json.field;
    const index = typeof field === 'string' ? /^body\.events\[(\d+)\]/.exec(field)?.[1] : undefined;
    if (index !== undefined && Number(index) < sent) return { kind: 'refused-entry', index: Number(index), status, reason, message };
    if (sent === 1) return { kind: 'refused-entry', index: 0, status, reason, message };
    return { kind: 'split', reason, message };
  }
  return { kind: 'retry', status, reason, message };
}
