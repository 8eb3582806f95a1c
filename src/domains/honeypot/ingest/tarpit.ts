import { VERIFIED_CLASSES } from '../vendors/classify.ts';

/** Spec A: detection window 10 minutes, delay 8 seconds. */
export const TARPIT_WINDOW_MS = 10 * 60 * 1000;
export const TARPIT_DELAY_MS = 8000;

export interface TarpitDecision {
  trigger: boolean;
  reason: string;
}

/**
 * A fingerprint that sent at least `liarThreshold` LIAR events within the last 10 minutes is
 * tarpitted. `liarCount` counts those events, the current batch included.
 */
export function decideTarpit(liarCount: number, liarThreshold: number): TarpitDecision {
  return { trigger: liarCount >= liarThreshold, reason: `liar-flood:${liarCount}/10min` };
}

/**
 * When a tarpit opened at `triggeredAt` ends: `OBSERVATORY_TARPIT_TTL_MINUTES` later. From that
 * instant it no longer delays its fingerprint, the `tarpit-expire` job marks it ended, and a new
 * flood may open another (docs/honeypot/README.md, "Tarpit").
 */
export function tarpitExpiresAt(triggeredAt: Date, ttlMinutes: number): Date {
  return new Date(triggeredAt.getTime() + ttlMinutes * 60_000);
}

/** Whether an event of this class proved who it is (KNOWN_LLM_AGENT, VERIFIED_CRAWLER; docs/honeypot/vendors.md). */
export const isVerifiedClass = (uaClass: string): boolean => VERIFIED_CLASSES.includes(uaClass);

/**
 * The tarpit an ingest answer reports for an event: a verified event is never delayed, whatever
 * state its fingerprint is in; any other event is delayed by its fingerprint's tarpit in force.
 */
export function tarpitAnswer(uaClass: string, inForce: { delayMs: number } | undefined): { active: boolean; delayMs: number } {
  if (inForce === undefined || isVerifiedClass(uaClass)) return { active: false, delayMs: 0 };
  return { active: true, delayMs: inForce.delayMs };
}
