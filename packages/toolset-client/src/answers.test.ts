import { describe, expect, it } from 'vitest';
import { readIngestAnswer } from './answers.ts';

const result = (id: string, rejectionReason: string | null) => ({ id, eventId: rejectionReason ? null : '00000000-0000-4000-8000-000000000000', compatMode: false, rejectionReason });

describe('readIngestAnswer', () => {
  it('reads a 200 per event: rejected ones keep their reason, the counts come along', () => {
    const body = { schema: 'svc-empire-ingest.v1', accepted: 1, duplicates: 1, rejected: 1, results: [result('a', null), result('b', 'bad-signature'), result('c', null)] };
    expect(readIngestAnswer(200, body, 3)).toEqual({ kind: 'answered', accepted: 1, duplicates: 1, results: body.results });
  });

  it('retries a 200 without one result per event (nothing to say which were stored; a resend is answered as duplicates)', () => {
    expect(readIngestAnswer(200, { results: [result('a', null)] }, 2)).toMatchObject({ kind: 'retry', reason: 'malformed-answer' });
    expect(readIngestAnswer(200, 'not json', 1)).toMatchObject({ kind: 'retry' });
  });

  it('names the refused event of a 400 by the field the service names', () => {
    const body = { schema: 'svc-error.v1', reason: 'invalid-body', human: 'body.events[2].ts is too old.', field: 'body.events[2].ts' };
    expect(readIngestAnswer(400, body, 5)).toEqual({ kind: 'refused-entry', index: 2, status: 400, reason: 'invalid-body', message: 'body.events[2].ts is too old.' });
    expect(readIngestAnswer(400, { ...body, field: undefined, details: { field: 'body.events[1]' } }, 5)).toMatchObject({ kind: 'refused-entry', index: 1 });
  });

  it('splits a refused batch that names no event, and drops a refused batch of one', () => {
    expect(readIngestAnswer(413, { reason: 'payload-too-large' }, 4)).toMatchObject({ kind: 'split', reason: 'payload-too-large' });
    expect(readIngestAnswer(400, { reason: 'invalid-body', field: 'body.events[9]' }, 4)).toMatchObject({ kind: 'split' });
    expect(readIngestAnswer(413, {}, 1)).toMatchObject({ kind: 'refused-entry', index: 0, status: 413 });
  });

  it('retries what stored nothing and may pass: auth, rate limits, outages, a proxy page', () => {
    for (const status of [401, 403, 408, 429, 500, 502, 503]) expect(readIngestAnswer(status, { reason: 'x' }, 3)).toMatchObject({ kind: 'retry', status });
    expect(readIngestAnswer(502, '<html>', 3)).toMatchObject({ kind: 'retry', reason: null, message: 'HTTP 502' });
  });
});
