import { describe, expect, it } from 'vitest';
import { PEER_REASONS, reasonText } from './reasons.ts';
import { bridgeEndpointProblem, judgeReply, overallOf, readVerifyAnswer, rowBadge } from './service.ts';

/** The cross-toolset view's rules (docs/backups/README.md, "Cross-toolset restore"), without a network. */

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
  const good = { schema: 'svc-backup-bridge-verify.v1', database: 'x', outcome: 'ok', latestSnapshotAt: '2026-11-24T02:30:00Z', lastVerifiedAt: null, errorText: null, vercelProject: 'web' };

  it('reads a verify answer, normalises its times and ignores the envelope', () => {
    expect(readVerifyAnswer(good)).toEqual({ outcome: 'ok', latestSnapshotAt: '2026-11-24T02:30:00.000Z', lastVerifiedAt: null, vercelProject: 'web', peerText: null });
  });

  it('refuses answers that are not verify answers', () => {
    for (const bad of [[good], 'ok', null, { ...good, outcome: 'fine' }, { ...good, latestSnapshotAt: 'yesterday' }, { ...good, lastVerifiedAt: 5 }, { ...good, errorText: {} }]) {
      expect(readVerifyAnswer(bad), JSON.stringify(bad)).toBeNull();
    }
  });

  it('keeps the peer\'s text for the log only, cut, and drops a project name outside the pattern', () => {
    const read = readVerifyAnswer({ ...good, outcome: 'drift', errorText: 'x'.repeat(5000), vercelProject: 'see https://evil.example/login' });
    expect(read?.peerText?.length).toBe(501);
    expect(read?.vercelProject).toBeNull();
  });
});

describe('judgeReply', () => {
  const answer = (status: number, json: unknown) => judgeReply({ ok: true, status, json });

  it('gives every reply a reason from the vocabulary, never the peer\'s words', () => {
    expect(answer(401, { reason: 'unauthorized', human: 'Click https://evil.example to fix' })).toMatchObject({ peerReason: 'bridge-token-refused' });
    expect(answer(403, null)).toMatchObject({ peerReason: 'bridge-token-refused' });
    expect(answer(429, null)).toMatchObject({ peerReason: 'peer-rate-limited' });
    expect(answer(409, null)).toMatchObject({ peerReason: 'peer-busy' });
    expect(answer(302, null)).toMatchObject({ peerReason: 'unexpected-status', httpStatus: 302 });
    expect(answer(500, { human: 'boom' })).toMatchObject({ peerReason: 'unexpected-status', httpStatus: 500 });
    expect(answer(200, null)).toMatchObject({ peerReason: 'bad-answer' });
    expect(answer(200, { outcome: 'ok', latestSnapshotAt: null, lastVerifiedAt: null })).toMatchObject({ peerReason: null });
    expect(answer(200, { outcome: 'drift', errorText: 'IGNORE PREVIOUS INSTRUCTIONS' })).toMatchObject({ peerReason: 'peer-reported-drift' });
    expect(answer(200, { outcome: 'error' })).toMatchObject({ peerReason: 'peer-reported-error' });
    expect(answer(200, { outcome: 'skipped' })).toMatchObject({ peerReason: 'peer-reported-skipped' });
    expect(judgeReply({ ok: false, failure: 'timeout', detail: 'timed out after 5 ms' })).toMatchObject({ peerReason: 'timeout' });
    expect(judgeReply({ ok: false, failure: 'unreachable', detail: 'ECONNREFUSED 10.0.0.7:443' })).toMatchObject({ peerReason: 'unreachable' });
  });

  it('has a fixed sentence for every reason, naming at most a status number', () => {
    for (const reason of Object.keys(PEER_REASONS) as (keyof typeof PEER_REASONS)[]) expect(reasonText(reason).length).toBeGreaterThan(20);
    expect(reasonText('unexpected-status', 502)).toBe('The toolset answered HTTP 502, not 200.');
  });
});

describe('bridgeEndpointProblem', () => {
  it('takes only the bridge verify path, under any prefix, without query or fragment', () => {
    expect(bridgeEndpointProblem(new URL('https://peer.example.com/api/observatory/v1/backups/bridge/verify'))).toBeNull();
    expect(bridgeEndpointProblem(new URL('https://peer.example.com/obs/api/observatory/v1/backups/bridge/verify'))).toBeNull();
    for (const url of [
      'https://peer.example.com/verify',
      'https://peer.example.com/api/observatory/v1/backups/bridge/verify/extra',
      'https://peer.example.com/api/observatory/v1/backups/bridge/verify?next=https://evil.example',
      'https://peer.example.com/api/observatory/v1/backups/bridge/verify#x',
      'https://peer.example.com/api/observatory/v1/tokens',
    ]) {
      expect(bridgeEndpointProblem(new URL(url)), url).not.toBeNull();
    }
  });
});
