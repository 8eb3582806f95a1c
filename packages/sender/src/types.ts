/** One request a honeypot site saw, as the ingest takes it (every field but `path` and `ip` optional). */
export interface HoneypotEvent {
  /** The sender's id: the service stores an id once per tenant. The sender fills it in when absent. */
  id?: string;
  /** ISO 8601; the service uses its receive time when absent. */
  ts?: string;
  method?: string;
  path: string;
  query?: string;
  ua?: string;
  ip: string;
  ja4?: string;
  asn?: number;
  country?: string;
  referer?: string;
  /** Lower-case header name → value. */
  headers?: Record<string, string>;
}

/** The service's answer for one event (`svc-observatory-ingest.v1` `events[]`). */
export interface IngestAnswer {
  id: string | null;
  eventId: string;
  uaClass: string;
  fingerprintId: string;
  tarpit: { active: boolean; delayMs: number };
}

/** What went wrong last, for the operator (a sender never throws at the site it watches). */
export interface DeliveryProblem {
  at: string;
  /** HTTP status, or null when no answer came (connection refused, timeout). */
  status: number | null;
  /** The `svc-error.v1` reason when the service gave one. */
  reason: string | null;
  message: string;
  /** The event it is about, when it is about one event. */
  eventId?: string;
}

export interface SenderStats {
  /** Events handed to `record` and queued. */
  recorded: number;
  /** Events the service acknowledged (stored, or already stored: see `duplicates`). */
  sent: number;
  /** Of those, the ones the service already held (sent again after a crash or a lost answer). */
  duplicates: number;
  /** Failed attempts that will be tried again (one per batch and attempt). */
  retried: number;
  /** Events written to the spool directory (every queued event, when there is one). */
  spooled: number;
  /** Events not kept because the queue or spool was full. */
  dropped: number;
  /** Events refused as invalid, by `record` or by the service, or larger than a request may be. */
  rejected: number;
  /** Events waiting, and their size. */
  pending: number;
  pendingBytes: number;
  lastProblem: DeliveryProblem | null;
  /** Whether the last attempt failed and a retry is waiting (the service is unreachable or refusing). */
  failing: boolean;
}
