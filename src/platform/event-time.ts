/**
 * How far a sender's event time (`ts`) may stray from the receive time (spec D3, which the empire
 * ingest shares): far-past events would land in rollups, forecasts and retention windows that have
 * already been computed or pruned, and far-future ones would sit uncounted until their hour comes.
 */
export const EVENT_TS_MAX_PAST_MS = 30 * 24 * 60 * 60 * 1000;
export const EVENT_TS_MAX_FUTURE_MS = 5 * 60 * 1000;

/** The sentence tail `field` takes when its time is out of bounds; null when `ts` is acceptable at `now`. */
export function eventTimeProblem(ts: string, now: Date): string | null {
  const at = Date.parse(ts);
  // JSON Schema's date-time admits a leap second (23:59:60), which Date cannot hold.
  if (Number.isNaN(at)) return 'is not a time that can be stored (a leap second, 23:59:60, is not accepted)';
  if (at < now.getTime() - EVENT_TS_MAX_PAST_MS) return 'is more than 30 days in the past';
  if (at > now.getTime() + EVENT_TS_MAX_FUTURE_MS) return 'is more than 5 minutes in the future';
  return null;
}
