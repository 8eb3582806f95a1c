import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../../platform/crypto.ts';
import { answerProblem, peerOriginProblem } from '../../platform/bridge/fanout.ts';
import {
  complianceDigestOf,
  driftDetailOf,
  federationDigestOf,
  migrationDigestOf,
  migrationParityOf,
  readTupleAnswer,
} from './digests/rules.ts';
import { mergeOverviews, readOverviewAnswer } from './overview/rules.ts';
import { lagBadgeOf, regionBadgeOf, worstLagOf } from './slo/rules.ts';

const h = (c: string) => c.repeat(64);
const tuple = (regionKey: string, m = h('a'), g = h('b'), c = h('c')) => ({ regionKey, migrationDigest: m, graphDigest: g, complianceDigest: c });

describe('federation digest', () => {
  it('is SHA-256 of the canonical tuples sorted by region key, whatever order they came in', () => {
    const a = tuple('alpha');
    const b = tuple('bravo', h('a'), h('d'));
    expect(federationDigestOf([b, a])).toBe(federationDigestOf([a, b]));
    expect(federationDigestOf([a, b])).toBe(sha256Hex(canonicalJson([a, b])));
    // A peer's extra members are dropped.
    expect(federationDigestOf([{ ...a, extra: 1 } as typeof a, b])).toBe(federationDigestOf([a, b]));
    expect(federationDigestOf([a, { ...b, graphDigest: h('e') }])).not.toBe(federationDigestOf([a, b]));
  });

  it('migration digest follows the applied order; compliance digest ignores order of controls but not outcomes', () => {
    expect(migrationDigestOf(['x', 'y'])).not.toBe(migrationDigestOf(['y', 'x']));
    expect(migrationDigestOf([])).toBe(sha256Hex(''));
    const one = [
      { framework: 'soc2', controlId: 'CC1', outcome: 'pass' },
      { framework: 'iso27001', controlId: 'A.5', outcome: null },
    ];
    expect(complianceDigestOf(one)).toBe(complianceDigestOf([...one].reverse()));
    expect(complianceDigestOf([{ ...one[0]!, outcome: 'fail' }, one[1]!])).not.toBe(complianceDigestOf(one));
  });
});

describe('migration parity', () => {
  it('matched when every tuple carries the own digest; drifted lists the others by key', () => {
    expect(migrationParityOf([tuple('a'), tuple('b')], h('a'))).toEqual({ migrationParity: 'matched', migrationDriftDetails: [] });
    expect(migrationParityOf([tuple('c', h('f')), tuple('a'), tuple('b', h('e'))], h('a'))).toEqual({
      migrationParity: 'drifted',
      migrationDriftDetails: [
        { migrationDigest: h('e'), regionKey: 'b' },
        { migrationDigest: h('f'), regionKey: 'c' },
      ],
    });
  });

  it('replay drift detail covers pinned ∪ live: changed, missing and new regions drift', () => {
    const pinned = [tuple('a'), tuple('b'), tuple('gone')];
    const live = [tuple('a'), tuple('b', h('a'), h('9')), tuple('new')];
    expect(driftDetailOf(pinned, live).map((x) => [x.regionKey, x.drifted, x.live !== null, x.pinned !== null])).toEqual([
      ['a', false, true, true],
      ['b', true, true, true],
      ['gone', true, false, true],
      ['new', true, true, false],
    ]);
  });

  it('reads a peer tuple only when it is well formed and names the region asked', () => {
    expect(readTupleAnswer({ region: 'b', tuple: tuple('b') }, 'b')).toEqual(tuple('b'));
    expect(readTupleAnswer({ tuple: tuple('c') }, 'b')).toBeNull();
    expect(readTupleAnswer({ tuple: { ...tuple('b'), graphDigest: 'nope' } }, 'b')).toBeNull();
    expect(readTupleAnswer('text', 'b')).toBeNull();
  });
});

describe('overview merge', () => {
  const row = (toolset: string, n24: number, n7: number, last: string | null) => ({
    toolset,
    blurb: '',
    events24h: n24,
    events7d: n7,
    lastEventAt: last,
    sparkline24h: [...new Array<number>(23).fill(0), n24],
  });
  it('sums by toolset, keeps the latest event, lists each region\'s count', () => {
    const merged = mergeOverviews([
      { region: 'a', toolsets: [row('x', 2, 5, '2026-11-24T08:00:00.000Z'), row('y', 1, 1, null)] },
      { region: 'b', toolsets: [row('x', 3, 4, '2026-11-24T09:00:00.000Z')] },
    ]);
    expect(merged.map((r) => r.toolset)).toEqual(['x', 'y']);
    expect(merged[0]).toMatchObject({ events24h: 5, events7d: 9, lastEventAt: '2026-11-24T09:00:00.000Z', perRegion: { a: 2, b: 3 } });
    expect(merged[0]!.sparkline24h.at(-1)).toBe(5);
    expect(merged[1]).toMatchObject({ events24h: 1, lastEventAt: null, perRegion: { a: 1 } });
  });
  it('refuses a malformed peer overview', () => {
    expect(readOverviewAnswer({ toolsets: [row('x', 1, 1, null)] })).toHaveLength(1);
    expect(readOverviewAnswer({ toolsets: [{ ...row('x', 1, 1, null), sparkline24h: [1] }] })).toBeNull();
    expect(readOverviewAnswer({})).toBeNull();
  });
});

describe('region SLO rules', () => {
  it('worst lag ignores unknown lags; the lag badge is measured against the tier', () => {
    expect(worstLagOf([null, 10, 40])).toBe(40);
    expect(worstLagOf([null])).toBeNull();
    expect(lagBadgeOf(null, 300)).toBe('unknown');
    expect(lagBadgeOf(300, 300)).toBe('green');
    expect(lagBadgeOf(1200, 300)).toBe('yellow');
    expect(lagBadgeOf(1201, 300)).toBe('red');
  });
  it('the badge is the worst of lag and ingest, at least yellow when drifted', () => {
    const base = { worstLagSec: 10, latencyTierSec: 300, ingestSamples24h: 0, okRatePct: null, p95LatencyMs: null, replayParity: 'matched' as const };
    expect(regionBadgeOf(base)).toBe('green');
    expect(regionBadgeOf({ ...base, replayParity: 'drifted' })).toBe('yellow');
    expect(regionBadgeOf({ ...base, ingestSamples24h: 100, okRatePct: 50, p95LatencyMs: 10 })).toBe('red');
    expect(regionBadgeOf({ ...base, worstLagSec: null })).toBe('unknown');
  });
});

describe('bridge rules', () => {
  const policy = { peerHosts: ['peer.example.com', '127.0.0.1'], allowPrivate: false, allowedPorts: [443] };
  it('sends the token only to an https origin of a listed host', () => {
    expect(peerOriginProblem('https://peer.example.com/', policy)).toBeNull();
    expect(peerOriginProblem('https://peer.example.com/api', policy)).toBe('bad-base-url');
    expect(peerOriginProblem('https://other.example.com/', policy)).toBe('host-not-allowed');
    expect(peerOriginProblem('http://peer.example.com/', { ...policy, allowedPorts: [80, 443] })).toBe('not-https');
    expect(peerOriginProblem('https://127.0.0.1/', policy)).toBe('outbound-refused');
    expect(peerOriginProblem('https://peer.example.com:8443/', policy)).toBe('outbound-refused');
  });
  it('maps answers to fixed reasons', () => {
    expect(answerProblem({ ok: true, status: 200, json: {} })).toBeNull();
    expect(answerProblem({ ok: true, status: 401, json: null })).toBe('bridge-token-refused');
    expect(answerProblem({ ok: true, status: 403, json: null })).toBe('bridge-token-refused');
    expect(answerProblem({ ok: true, status: 500, json: null })).toBe('unexpected-status');
    expect(answerProblem({ ok: false, failure: 'timeout', detail: 'x' })).toBe('timeout');
  });
});
