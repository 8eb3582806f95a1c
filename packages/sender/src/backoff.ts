export interface BackoffPolicy {
  /** Delay before the first retry, before jitter. */
  baseMs: number;
  /** No delay is longer than this. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 60_000 };

/**
 * The wait before retry number `attempt` (1 for the first): the ceiling doubles from `baseMs` up
 * to `maxMs`, and the wait is drawn between half the ceiling and the ceiling ("equal jitter"), so
 * that many senders cut off by the same outage do not come back in step, while each one's waits
 * still grow.
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 30);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
