import { Type } from '@sinclair/typebox';

/**
 * The value checks alert predicates share (honeypot and empire): schemas give a predicate's shape
 * (400 `invalid-body`), these give its allowed values (400 `invalid-predicate` with a sentence
 * naming the field).
 */

/** A windowed predicate reads (to − windowMinutes, to]: this many minutes at least and at most. */
export const WINDOW_MINUTES_MIN = 5;
export const WINDOW_MINUTES_MAX = 1440;

export const WindowMinutes = Type.Integer({
  description: `The sliding window, in minutes: ${WINDOW_MINUTES_MIN} to ${WINDOW_MINUTES_MAX}. A rule that keeps matching fires again at most once per window.`,
});

export interface PredicateProblem {
  /** `predicate.windowMinutes` */
  field: string;
  human: string;
}

export const integerIn = (field: string, value: number, min: number, max: number, unit = ''): PredicateProblem | null =>
  Number.isInteger(value) && value >= min && value <= max
    ? null
    : { field: `predicate.${field}`, human: `predicate.${field} must be a whole number from ${min} to ${max}${unit} (got ${value}).` };

export const windowIn = (p: { windowMinutes: number }) => integerIn('windowMinutes', p.windowMinutes, WINDOW_MINUTES_MIN, WINDOW_MINUTES_MAX, ' minutes');
