import { describe, expect, it } from 'vitest';
import { overallOf, readVerifyAnswer, rowBadge } from './service.ts';

/** The cross-toolset view's rules (docs/backups.md, "Cross-toolset restore"), without a network. */

describe('overallOf and rowBadge', () => {
  it('is unknown with no toolsets, red with any error, yellow with drift or skipped, green when all are ok', () => {
    expect(overallOf([])).toBe('unknown');
    expect(overallOf([{ outcome: 'ok' }, { outcome: 'ok' }])).toBe('green');
    expect(overallOf([{ outcome: 'ok' }, { outcome: 'skipped' }])).toBe('yellow');
    expect(overallOf([{ outcome: 'drift' }, { outcome: 'ok' }])).toBe('yellow');
    expect(overallOf([{ outcome: 'drift' }, { outcome: 'error' }, { outcome: 'skipped' }])).toBe('red');
  });

  it('badges each row', () => {
    expect(['ok', 'drift', 'skipped', 'error'].map((o) => rowBadge(o as 'ok'))).toEqual(['green', 'yellow', 'yellow', 'red']);
  });
});

describe('readVerifyAnswer', () => {
  const good = { schema: 'svc-backup-bridge-verify.v1', database: 'x', outcome: 'ok', latestSnapshotAt: '2026-11-24T02:30:00.000Z', lastVerifiedAt: null, errorText: null, vercelProject: 'web' };

  it('reads a verify answer and ignores the envelope', () => {
    expect(readVerifyAnswer(200, good)).toEqual({
      answer: { outcome: 'ok', latestSnapshotAt: '2026-11-24T02:30:00.000Z', lastVerifiedAt: null, errorText: null, vercelProject: 'web' },
    });
  });

  it('names a refusal with its status, reason and sentence', () => {
    expect(readVerifyAnswer(401, { schema: 'svc-error.v1', reason: 'unauthorized', human: 'The bridge token is not valid.' })).toEqual({
      error: 'HTTP 401 unauthorized: The bridge token is not valid.',
    });
    expect(readVerifyAnswer(502, 'gateway')).toEqual({ error: 'HTTP 502' });
  });

  it('refuses answers that are not verify answers', () => {
    expect(readVerifyAnswer(200, [good])).toEqual({ error: 'the answer is not a JSON object' });
    expect(readVerifyAnswer(200, { ...good, outcome: 'fine' })).toMatchObject({ error: expect.stringMatching(/no valid outcome/) });
    expect(readVerifyAnswer(200, { ...good, latestSnapshotAt: 'yesterday' })).toMatchObject({ error: expect.stringMatching(/latestSnapshotAt/) });
    expect(readVerifyAnswer(200, { ...good, lastVerifiedAt: 5 })).toMatchObject({ error: expect.stringMatching(/lastVerifiedAt/) });
    expect(readVerifyAnswer(200, { ...good, errorText: {} })).toMatchObject({ error: expect.stringMatching(/errorText/) });
  });

  it('cuts long peer text', () => {
    const read = readVerifyAnswer(200, { ...good, outcome: 'drift', errorText: 'x'.repeat(5000) });
    expect('answer' in read && read.answer.errorText?.length).toBe(501);
  });
});
