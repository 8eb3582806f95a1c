import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../test/helpers/app.ts';
import { ManualClock } from '../../../platform/clock.ts';
import type { FederationReads, RegionDigestFanOut } from '../../federation/index.ts';
import { complianceFailDetector } from './detectors/compliance-fail.ts';
import { integrityMismatchDetector } from './detectors/integrity-mismatch.ts';
import { referenceDigest, regionParityDetector } from './detectors/region-parity.ts';
import { replayDriftDetector } from './detectors/replay-drift.ts';
import type { Detector } from './kinds.ts';
import { createDriftService } from './service.ts';

/**
 * The detectors over stand-in reads, and the scan and remediation over a real database with
 * stand-in detectors: region parity with a FederationReads stand-in (several real deployments are
 * in the federation loopback test), a detector that fails, concurrent scans.
 */

const now = new Date('2026-11-28T06:30:00.000Z');
const M1 = 'a'.repeat(64);
const M2 = 'b'.repeat(64);
const tuple = (regionKey: string, migrationDigest: string) => ({ regionKey, migrationDigest, graphDigest: 'g', complianceDigest: 'c' });

function federation(fan: Partial<RegionDigestFanOut> & Pick<RegionDigestFanOut, 'tuples'>, currentRegion = 'eu-west'): FederationReads & { fan: RegionDigestFanOut } {
  const reads = {
    currentRegion,
    fan: { participating: fan.tuples.map((t) => t.regionKey), failed: [], federationDigest: 'f'.repeat(64), migrationParity: 'matched' as const, migrationDriftDetails: [], ...fan },
    localTuple: async () => fan.tuples.find((t) => t.regionKey === currentRegion)!,
    fanOutDigest: async () => reads.fan,
  };
  return reads;
}

describe('region-parity', () => {
  it('holds regions to the digest most report; a tie goes to this deployment\'s own', () => {
    expect(referenceDigest([tuple('eu-west', M1), tuple('us-east', M1), tuple('ap-south', M2)], 'ap-south')).toBe(M1);
    expect(referenceDigest([tuple('eu-west', M2), tuple('us-east', M1)], 'eu-west')).toBe(M2);
    expect(referenceDigest([tuple('eu-west', M2), tuple('us-east', M1)], 'elsewhere')).toBe(M1);
    expect(referenceDigest([], 'eu-west')).toBeNull();
  });

  it('reports a drifted region (critical) and an unreachable one (major); nothing when they agree', async () => {
    const matched = federation({ tuples: [tuple('eu-west', M1), tuple('us-east', M1)] });
    expect(await regionParityDetector(() => matched).scan({ now, held: [] })).toEqual([]);
    const drifted = federation({
      tuples: [tuple('eu-west', M1), tuple('us-east', M1), tuple('ap-south', M2)],
      failed: [{ region: 'sa-east', reason: 'timeout' }],
      migrationParity: 'drifted',
      migrationDriftDetails: [{ regionKey: 'ap-south', migrationDigest: M2 }],
    });
    const found = await regionParityDetector(() => drifted).scan({ now, held: [] });
    expect(found.map((b) => [b.source, b.sourceId, b.severity])).toEqual([
      ['region', 'ap-south', 'critical'],
      ['region-unreachable', 'sa-east', 'major'],
    ]);
    expect(found[0]!.payload).toMatchObject({ migrationDigest: M2, referenceDigest: M1, migrationParity: 'drifted' });
  });

  it('says so when the deployment has no federation, never a fake pass', async () => {
    await expect(regionParityDetector(() => null).scan({ now, held: [] })).rejects.toThrow(/federation across regions is not part of this deployment/);
  });
});

describe('compliance-fail', () => {
  const control = (controlId: string, latestOutcome: string | null, predicateKey = 'subprocessors-reviewed', severity: 'critical' | 'major' | 'minor' = 'major') => ({
    controlId,
    title: `control ${controlId}`,
    predicateKey,
    severity,
    latestOutcome,
    latestSummary: 'why',
    latestEvaluationId: null,
    latestEvaluatedBy: 'job',
  });

  it('reports each failing control with its severity, except the one that reads drift itself', async () => {
    const detector = complianceFailDetector({
      frameworkKeys: () => ['soc2'],
      framework: async () => ({ controls: [control('A', 'fail', 'x', 'critical'), control('B', 'pass'), control('C', null), control('D', 'fail', 'no-open-critical-drift', 'critical'), control('E', 'n/a')] }),
    });
    expect((await detector.scan({ now, held: [] })).map((b) => [b.sourceId, b.severity])).toEqual([['soc2:A', 'critical']]);
  });
});

describe('integrity-mismatch', () => {
  it('reads the chain verification, the newest restore per database and the cross-toolset rows', async () => {
    const detector = integrityMismatchDetector({
      latestChainVerification: async () => ({ at: now, after: { intact: true, walkedCount: 10 } }),
      latestVerificationPerDatabase: async () => [
        { id: 'v1', database: 'main', snapshotId: 's1', verifiedAt: now.toISOString(), outcome: 'drift', errorText: null, driftTables: ['users'] },
        { id: 'v2', database: 'lab', snapshotId: 's2', verifiedAt: now.toISOString(), outcome: 'ok', errorText: null, driftTables: [] },
      ],
      crossToolsetRows: async () => [
        { toolset: 'crawler-lab', database: 'c', outcome: 'drift', errorText: 'The toolset reported drift.', checkedAt: null, lastVerifiedAt: null },
        { toolset: 'skipped-lab', database: 'd', outcome: 'skipped', errorText: null, checkedAt: null, lastVerifiedAt: null },
      ],
    });
    expect((await detector.scan({ now, held: [] })).map((b) => [b.source, b.sourceId, b.severity])).toEqual([
      ['restore-verification', 'main', 'critical'],
      ['cross-toolset-restore', 'crawler-lab', 'critical'],
    ]);
  });
});

describe('replay-drift', () => {
  it('re-checks the events held slots name, and skips an override whose input still hashes to its digest', async () => {
    let asked: unknown;
    const detector = replayDriftDetector({
      empire: {
        async mismatches(options) {
          asked = options.recheck;
          return { toolsetsScanned: 0, toolsetsSkipped: 0, replayed: 0, mismatches: [] };
        },
      },
      compliance: {
        frameworkKeys: () => ['soc2'],
        framework: async () => ({ controls: [{ controlId: 'X', latestEvaluationId: 'e1', latestEvaluatedBy: 'operator:u1' }, { controlId: 'Y', latestEvaluationId: 'e2', latestEvaluatedBy: 'job' }] }),
        replay: async (id) => ({ evaluationId: id, matches: false, digestMatches: true, storedOutcome: 'pass', replayedOutcome: 'manual-review' }),
      },
    });
    const found = await detector.scan({ now, held: [{ kind: 'replay-drift', source: 'empire-event', sourceId: 'crawler-lab:0b1c2d3e-4f50-4a61-8b72-9c8d7e6f5a4b' }] });
    expect(asked).toEqual([{ toolset: 'crawler-lab', eventId: '0b1c2d3e-4f50-4a61-8b72-9c8d7e6f5a4b' }]);
    expect(found.map((b) => b.sourceId)).toEqual(['soc2:Y']);
  });
});

describe('the scan and the remediation over the table', () => {
  const clock = new ManualClock(now);
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ clock });
  }, 120_000);
  afterAll(() => t?.close());

  const broken: Detector = {
    kind: 'graph-drift',
    scan: async () => {
      throw new Error('the graph is unreadable');
    },
  };

  it('opens region-parity events from a FederationReads stand-in, isolates a failing detector, and auto-resolves once parity returns', async () => {
    const fed = federation({ tuples: [tuple('eu-west', M1), tuple('us-east', M1), tuple('ap-south', M2)], migrationParity: 'drifted' });
    let detectors: Detector[] = [broken, regionParityDetector(() => fed)];
    const drift = createDriftService({ db: t.app.database.db, clock, audit: t.app.audit, detectors: () => detectors });
    const first = await drift.autoOpen({ job: true });
    expect(first.detectorErrors).toEqual([{ detector: 'graph-drift', error: 'the graph is unreadable' }]);
    expect(first.openedNow.map((e) => [e.kind, e.source, e.sourceId, e.severity])).toEqual([['region-parity', 'region', 'ap-south', 'critical']]);
    expect(await drift.openDriftCounts()).toEqual({ open: { critical: 1, major: 0, minor: 0 }, acknowledged: { critical: 0, major: 0, minor: 0 } });
    expect(await drift.criticalUnresolved(5)).toMatchObject({ open: 1, acknowledged: 0, listed: [{ kind: 'region-parity', sourceId: 'ap-south', status: 'open' }] });

    // Two scans at once open nothing twice.
    fed.fan = { ...fed.fan, tuples: [...fed.fan.tuples, tuple('sa-east', M2), tuple('af-south', M1)] };
    const [a, b] = await Promise.all([drift.autoOpen({ job: true }), drift.autoOpen({ job: true })]);
    expect([...a.openedNow, ...b.openedNow].map((e) => e.sourceId)).toEqual(['sa-east']);
    expect(a.alreadyOpen + b.alreadyOpen).toBe(3);

    // A failed graph detector leaves graph-drift events alone; parity back resolves the parity ones.
    const graphEvent = (await drift.list({ status: 'open', kind: 'graph-drift' })).events;
    expect(graphEvent).toEqual([]);
    fed.fan = { ...fed.fan, tuples: fed.fan.tuples.map((x) => ({ ...x, migrationDigest: M1 })), migrationParity: 'matched' };
    clock.advance(60_000);
    const pass = await drift.remediate();
    expect(pass.detectorErrors).toEqual([{ detector: 'graph-drift', error: 'the graph is unreadable' }]);
    expect(pass.autoResolved.map((e) => [e.sourceId, e.status, e.resolvedBy])).toEqual([
      ['ap-south', 'auto-resolved', 'job'],
      ['sa-east', 'auto-resolved', 'job'],
    ]);
    expect(await drift.openedSince(now)).toBe(2);

    // Without a federation domain the kind is left alone.
    const again = await drift.autoOpen({ job: true });
    expect(again.openedNow).toEqual([]);
    detectors = [regionParityDetector(() => null)];
    fed.fan = { ...fed.fan, migrationParity: 'drifted', tuples: [tuple('eu-west', M1), tuple('us-east', M2), tuple('ap-south', M1)] };
    expect((await drift.autoOpen({ job: true })).detectorErrors[0]).toMatchObject({ detector: 'region-parity' });
  });

  it('cuts the time a detector may take', async () => {
    // A detector that never answers is reported once DETECTOR_TIMEOUT_MS passes; here a short stand-in for it.
    const hang: Detector = { kind: 'replay-drift', scan: () => new Promise(() => {}) };
    const drift = createDriftService({ db: t.app.database.db, clock, audit: t.app.audit, detectors: () => [hang], detectorTimeoutMs: 50 });
    const scan = await drift.autoOpen({ job: true });
    expect(scan.detectorErrors).toEqual([{ detector: 'replay-drift', error: 'gave no answer within 0.05 s' }]);
  });
});
