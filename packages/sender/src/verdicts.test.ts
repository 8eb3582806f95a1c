import { describe, expect, it } from 'vitest';
import type { IngestAnswer } from './types.ts';
import { clientKey, verdictCache, verdictTracker } from './verdicts.ts';

const verdict = (uaClass: string, active = false) => ({ fingerprintId: `fp-${uaClass}`, uaClass, tarpit: { active, delayMs: active ? 8000 : 0 } });
const answer = (id: string | null, uaClass: string, active = false): IngestAnswer => ({ id, eventId: `ev-${id}`, ...verdict(uaClass, active) });

describe('verdictCache', () => {
  it('forgets the least recently seen client first; reading a client counts as seeing it', () => {
    const cache = verdictCache(2);
    cache.set('a', verdict('A'));
    cache.set('b', verdict('B'));
    expect(cache.get('a')?.uaClass).toBe('A');
    cache.set('c', verdict('C'));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.uaClass).toBe('A');
    expect(cache.get('c')?.uaClass).toBe('C');
    expect(cache.size).toBe(2);
    cache.set('a', verdict('A2'));
    expect(cache.size).toBe(2);
    expect(cache.get('a')?.uaClass).toBe('A2');
  });

  it('keys a client by address, JA4 and User-Agent, none of which can spell another', () => {
    expect(clientKey('192.0.2.1', 'ua', undefined)).toBe('192.0.2.1\n-\nua');
    expect(clientKey('192.0.2.1', 'ua', 't13d')).not.toBe(clientKey('192.0.2.1', 'ua', undefined));
  });
});

describe('verdictTracker', () => {
  it("refreshes each answered event's client and wakes its waiter, once", () => {
    const tracker = verdictTracker({ maxClients: 10 });
    const heard: string[] = [];
    tracker.expect('e-1', 'client-a').waiter = (v) => heard.push(v.uaClass);
    tracker.expect('e-2', 'client-b');
    tracker.onAnswers([answer('e-1', 'LIAR', true), answer('e-2', 'UNKNOWN'), answer('unknown-id', 'X'), answer(null, 'Y')]);
    expect(heard).toEqual(['LIAR']);
    expect(tracker.get('client-a')).toEqual(verdict('LIAR', true));
    expect(tracker.get('client-b')?.uaClass).toBe('UNKNOWN');
    expect(tracker.clients).toBe(2);
    expect(tracker.pending).toBe(0);
    // An answer seen again (a duplicate delivery) changes nothing.
    tracker.onAnswers([answer('e-1', 'KNOWN_LLM_AGENT')]);
    expect(tracker.get('client-a')?.uaClass).toBe('LIAR');
    expect(heard).toEqual(['LIAR']);
  });

  it('forgets every unanswered id past maxPending, so a service that never answers cannot grow it', () => {
    const tracker = verdictTracker({ maxClients: 10, maxPending: 3 });
    for (let i = 0; i < 3; i += 1) tracker.expect(`e-${i}`, 'k');
    expect(tracker.pending).toBe(3);
    tracker.expect('e-3', 'k');
    expect(tracker.pending).toBe(1);
    tracker.onAnswers([answer('e-0', 'LIAR')]);
    expect(tracker.get('k')).toBeUndefined();
    tracker.onAnswers([answer('e-3', 'LIAR')]);
    expect(tracker.get('k')?.uaClass).toBe('LIAR');
  });
});
