import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../platform/clock.ts';
import { type CallSink, createCallRecorder, type RecordedCall } from './recorder.ts';

/**
 * The recorder's documented bounds (docs/agent-api/README.md, "The bait records what it catches"),
 * written here as the docs state them rather than read from the module: a failed batch is tried
 * again up to three times, the buffer holds at most 20,000 calls, batches are 500 calls or 200 ms.
 */
const DOCUMENTED_RETRIES = 3;
const DOCUMENTED_BUFFER_MAX = 20_000;
const DOCUMENTED_BATCH = 500;
const DOCUMENTED_FLUSH_MS = 200;

const call = (n: number): Omit<RecordedCall, 'id' | 'ts'> => ({
  method: 'GET',
  path: '/api/agent',
  query: `query=q${n}`,
  ua: 'test-agent/1.0',
  ip: '198.51.100.7',
  referer: null,
  headers: {},
});

/** A sink that records what it was handed and answers as `answer` says for each attempt (1-based). */
function sinkAnswering(answer: (attempt: number) => 'fail' | 'store') {
  const attempts: string[][] = [];
  const sink: CallSink = {
    async record(_slug, events) {
      attempts.push(events.map((e) => e.id));
      if (answer(attempts.length) === 'fail') throw new Error('database down');
      return { accepted: events.length, duplicates: 0 };
    },
  };
  return { sink, attempts };
}

const recorderWith = (sink: CallSink) => createCallRecorder({ tenantSlug: 'agent-api', sink, clock: new ManualClock(), log: pino({ level: 'silent' }) });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('a failing write', () => {
  it('is tried again three times on its own, with the same ids, then its calls are counted as dropped', async () => {
    const { sink, attempts } = sinkAnswering(() => 'fail');
    const recorder = recorderWith(sink);
    recorder.push(call(1));
    recorder.push(call(2));
    await vi.advanceTimersByTimeAsync(DOCUMENTED_FLUSH_MS);
    expect(attempts).toHaveLength(1);
    // Retries need no caller: each is scheduled by the one that failed before it.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(attempts).toHaveLength(1 + DOCUMENTED_RETRIES);
    expect(new Set(attempts.map((ids) => ids.join(','))).size).toBe(1);
    expect(recorder.stats()).toEqual({ recorded: 0, dropped: 2, failedAttempts: 1 + DOCUMENTED_RETRIES, buffered: 0 });
    // Nothing is left to try.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(attempts).toHaveLength(1 + DOCUMENTED_RETRIES);
  });

  it('is stored once when its last retry succeeds', async () => {
    const { sink, attempts } = sinkAnswering((attempt) => (attempt <= DOCUMENTED_RETRIES ? 'fail' : 'store'));
    const recorder = recorderWith(sink);
    recorder.push(call(1));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(attempts).toHaveLength(1 + DOCUMENTED_RETRIES);
    expect(recorder.stats()).toEqual({ recorded: 1, dropped: 0, failedAttempts: DOCUMENTED_RETRIES, buffered: 0 });
  });

  it('does not hold back calls pushed after it', async () => {
    const { sink, attempts } = sinkAnswering((attempt) => (attempt === 1 ? 'fail' : 'store'));
    const recorder = recorderWith(sink);
    recorder.push(call(1));
    await recorder.flush();
    recorder.push(call(2));
    await recorder.flush();
    expect(attempts.at(-1)).toHaveLength(2);
    expect(recorder.stats()).toMatchObject({ recorded: 2, dropped: 0, buffered: 0 });
  });
});

describe('the buffer', () => {
  it('holds at most 20,000 calls while the database is slow; later calls are counted as dropped', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const handed: number[] = [];
    const recorder = recorderWith({
      async record(_slug, events) {
        handed.push(events.length);
        await gate;
        return { accepted: events.length, duplicates: 0 };
      },
    });
    // Pushed in one synchronous run, as a burst of calls arrives faster than any write.
    for (let i = 0; i < DOCUMENTED_BUFFER_MAX + 7; i++) recorder.push(call(i));
    expect(recorder.stats()).toMatchObject({ buffered: DOCUMENTED_BUFFER_MAX, dropped: 7 });
    release();
    await recorder.flush();
    expect(handed.every((n) => n <= DOCUMENTED_BATCH)).toBe(true);
    expect(handed[0]).toBe(DOCUMENTED_BATCH);
    expect(recorder.stats()).toEqual({ recorded: DOCUMENTED_BUFFER_MAX, dropped: 7, failedAttempts: 0, buffered: 0 });
  });
});
