import { describe, expect, it } from 'vitest';
import { decideTarpit, TARPIT_DELAY_MS, TARPIT_WINDOW_MS, tarpitExpiresAt } from './tarpit.ts';

// The tarpit rule (spec A, docs/honeypot.md "Tarpit"). That a tarpit ends once expired is shown
// against the database in ingest.rules.test.ts.

describe('decideTarpit', () => {
  it('triggers from the threshold on, not below it', () => {
    expect(decideTarpit(4, 5).trigger).toBe(false);
    expect(decideTarpit(5, 5).trigger).toBe(true);
    expect(decideTarpit(6, 5).trigger).toBe(true);
    expect(decideTarpit(1, 1).trigger).toBe(true);
    expect(decideTarpit(0, 1).trigger).toBe(false);
  });

  it('gives the reason liar-flood:<count>/10min', () => {
    expect(decideTarpit(5, 5)).toEqual({ trigger: true, reason: 'liar-flood:5/10min' });
    expect(decideTarpit(3, 5).reason).toBe('liar-flood:3/10min');
  });

  it('uses a 10-minute window and an 8-second delay', () => {
    expect(TARPIT_WINDOW_MS).toBe(600_000);
    expect(TARPIT_DELAY_MS).toBe(8000);
  });
});

describe('tarpitExpiresAt', () => {
  it('ends a tarpit its TTL in minutes after it opened', () => {
    const opened = new Date('2026-11-23T10:00:00.000Z');
    expect(tarpitExpiresAt(opened, 60)).toEqual(new Date('2026-11-23T11:00:00.000Z'));
    expect(tarpitExpiresAt(opened, 1)).toEqual(new Date('2026-11-23T10:01:00.000Z'));
    expect(opened.toISOString()).toBe('2026-11-23T10:00:00.000Z');
  });
});
