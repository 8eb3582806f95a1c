import { describe, expect, it } from 'vitest';
import { ServiceError } from '../errors.ts';
import { createConcurrencyLimit, holdForRequest, overloaded, OVERLOADED_RETRY_AFTER_SEC } from './concurrency.ts';

describe('createConcurrencyLimit', () => {
  it('hands out exactly `capacity` slots, then none until one is released', () => {
    const limit = createConcurrencyLimit('ingest', 2);
    const a = limit.tryAcquire();
    const b = limit.tryAcquire();
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    expect(limit.tryAcquire()).toBeNull();
    expect(limit.inUse()).toBe(2);
    a!.release();
    expect(limit.inUse()).toBe(1);
    expect(limit.tryAcquire()).not.toBeNull();
    expect(limit.tryAcquire()).toBeNull();
  });

  it('counts a slot released twice once', () => {
    const limit = createConcurrencyLimit('ingest', 2);
    const a = limit.tryAcquire()!;
    limit.tryAcquire();
    a.release();
    a.release();
    expect(a.released).toBe(true);
    expect(limit.inUse()).toBe(1);
  });

  it('refuses a capacity that is not a whole number of at least 1', () => {
    expect(() => createConcurrencyLimit('ingest', 0)).toThrow(/capacity/);
    expect(() => createConcurrencyLimit('ingest', 1.5)).toThrow(/capacity/);
  });

  it('refuses with 503 overloaded and a retry hint', () => {
    const error = overloaded(createConcurrencyLimit('ingest', 64));
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 503, reason: 'overloaded', details: { retryAfterSec: OVERLOADED_RETRY_AFTER_SEC } });
    expect(error.human).toContain('64 ingest requests');
  });
});

describe('holdForRequest', () => {
  it('gives the slot back when the response closes before the handler started', () => {
    const limit = createConcurrencyLimit('ingest', 1);
    const held = holdForRequest(limit.tryAcquire()!);
    held.responseClosed();
    expect(limit.inUse()).toBe(0);
    expect(held.startWork()).toBe(false);
  });

  it('keeps the slot while the handler works, even after the response closed, and gives it back when the work ends', () => {
    const limit = createConcurrencyLimit('ingest', 1);
    const held = holdForRequest(limit.tryAcquire()!);
    expect(held.startWork()).toBe(true);
    held.responseClosed();
    expect(limit.inUse()).toBe(1);
    held.endWork();
    expect(limit.inUse()).toBe(0);
    held.responseClosed();
    expect(limit.inUse()).toBe(0);
  });
});
