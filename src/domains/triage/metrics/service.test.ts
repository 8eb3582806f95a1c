import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../../test/helpers/database.ts';
import { createAuditLog } from '../../../platform/audit/service.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { type Database, rowsOf } from '../../../platform/db/client.ts';
import { AGENT_NAMES, compareVersions, latestVersionOf } from '../agents/registry.ts';
import { agentWatchJobs, badgeOf, createAgentService, METRICS_DAYS, shouldRollBack } from './service.ts';

// Trust in the agents (docs/triage/README.md, "Metrics and rollback"): the badge and rollback rules, the
// agents' version state, the watch job and the metrics it is judged by.

describe('badgeOf (pure)', () => {
  it('says nothing below five decisions or without a rate', () => {
    expect(badgeOf(null, 10)).toBe('unknown');
    expect(badgeOf(1, 4)).toBe('unknown');
    expect(badgeOf(0, 4)).toBe('unknown');
    expect(badgeOf(0, 0)).toBe('unknown');
  });

  it('is green from 60%, yellow from 30%, red below', () => {
    expect(badgeOf(1, 5)).toBe('green');
    expect(badgeOf(0.6, 5)).toBe('green');
    expect(badgeOf(0.5999, 5)).toBe('yellow');
    expect(badgeOf(0.3, 5)).toBe('yellow');
    expect(badgeOf(0.2999, 5)).toBe('red');
    expect(badgeOf(0, 5)).toBe('red');
  });
});

describe('shouldRollBack (pure)', () => {
  it('never rolls back on fewer than five decisions', () => {
    expect(shouldRollBack({ accepted: 0, rejected: 4 })).toBe(false);
    expect(shouldRollBack({ accepted: 0, rejected: 0 })).toBe(false);
  });

  it('rolls back below 30% accepted, not at 30%', () => {
    expect(shouldRollBack({ accepted: 1, rejected: 4 })).toBe(true); // 0.2
    expect(shouldRollBack({ accepted: 0, rejected: 5 })).toBe(true);
    expect(shouldRollBack({ accepted: 2, rejected: 5 })).toBe(true); // 0.2857
    expect(shouldRollBack({ accepted: 3, rejected: 7 })).toBe(false); // 0.3 exactly
    expect(shouldRollBack({ accepted: 1, rejected: 5 })).toBe(true); // 0.1667
    expect(shouldRollBack({ accepted: 5, rejected: 0 })).toBe(false);
  });
});

// ——— against a database ———

const NOW = new Date('2026-11-20T12:00:00.000Z');
const clock = new ManualClock(NOW);
let testDb: TestDatabase;
let database: Database;
const MIN = 60_000;
const HOUR = 60 * MIN;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase());
}, 180_000);
afterAll(async () => {
  await testDb?.drop();
});

const service = () => createAgentService({ db: database.db, clock, audit: createAuditLog({ clock }) });

async function reset() {
  for (const table of ['triage_agents', 'triage_proposals', 'empire_incidents']) await database.db.execute(sql`DELETE FROM ${sql.identifier(table)}`);
  await database.db.execute(sql`DELETE FROM operator_audit WHERE verb = 'triage.agent-rollback'`);
  clock.set(NOW);
}

type StateRow = { agent: string; active_version: string; previous_version: string | null; latest_known_version: string; changed_at: Date | string; change_reason: string; rolled_back_from: string | null };
const stateOf = async (agent: string) => rowsOf<StateRow>(await database.db.execute(sql`SELECT * FROM triage_agents WHERE agent = ${agent}`))[0];

async function insertState(agent: string, state: { active: string; previous: string | null; latestKnown: string }) {
  await database.db.execute(sql`
    INSERT INTO triage_agents (agent, active_version, previous_version, latest_known_version, changed_at, change_reason, rolled_back_from)
    VALUES (${agent}, ${state.active}, ${state.previous}, ${state.latestKnown}, '2026-01-01T00:00:00Z', 'deploy', NULL)`);
}

interface ProposalSpec {
  agentVersion: string;
  status: 'pending' | 'accepted' | 'rejected' | 'auto-rejected';
  kind?: string;
  toolset?: string | null;
  /** Milliseconds before NOW. */
  createdAgo: number;
  /** Seconds from creation to decision (accepted and rejected only). */
  decidedAfterSec?: number;
  openedIncidentId?: string | null;
}

async function proposal(p: ProposalSpec) {
  const createdAt = new Date(NOW.getTime() - p.createdAgo);
  const decidedAt = p.decidedAfterSec === undefined ? null : new Date(createdAt.getTime() + p.decidedAfterSec * 1000);
  const agent = p.agentVersion.split('@')[0]!;
  await database.db.execute(sql`
    INSERT INTO triage_proposals (id, run_id, kind, status, agent, agent_version, toolset, title, evidence_event_ids, created_at, decided_at, opened_incident_id)
    VALUES (${randomUUID()}, ${randomUUID()}, ${p.kind ?? 'incident'}, ${p.status}, ${agent}, ${p.agentVersion}, ${p.toolset === undefined ? 'web-a' : p.toolset}, 't', '[]'::jsonb,
      ${createdAt.toISOString()}::timestamptz, ${decidedAt?.toISOString() ?? null}::timestamptz, ${p.openedIncidentId ?? null}::uuid)`);
}

/** `accepted` accepted and `rejected` rejected decisions of `agentVersion`, decided `decidedAgo` before NOW. */
async function decisions(agentVersion: string, accepted: number, rejected: number, decidedAgo = HOUR) {
  for (let i = 0; i < accepted + rejected; i++) {
    await proposal({ agentVersion, status: i < accepted ? 'accepted' : 'rejected', createdAgo: decidedAgo + 60_000, decidedAfterSec: 60 });
  }
}

async function incident(toolset: string, openedAgo: number): Promise<string> {
  const id = randomUUID();
  await database.db.execute(sql`
    INSERT INTO empire_incidents (id, toolset, severity, title, status, source, event_ids, details, opened_at)
    VALUES (${id}, ${toolset}, 'minor', 't', 'open', 'forecast', '[]'::jsonb, '{}'::jsonb, ${new Date(NOW.getTime() - openedAgo).toISOString()}::timestamptz)`);
  return id;
}

const rollbackAudits = async () =>
  rowsOf<{ target: string; surface: string; actor: string | null; before: unknown; after: unknown }>(
    await database.db.execute(sql`SELECT target, surface, actor, before, after FROM operator_audit WHERE verb = 'triage.agent-rollback' ORDER BY seq_no`),
  );

describe('active()', () => {
  beforeEach(reset);

  it('creates the state at the newest shipped version, with the one before as rollback target', async () => {
    expect(await service().active('incident-classifier')).toBe('1.1.0');
    expect(await stateOf('incident-classifier')).toMatchObject({
      active_version: '1.1.0',
      previous_version: '1.0.0',
      latest_known_version: '1.1.0',
      change_reason: 'deploy',
      rolled_back_from: null,
    });
    expect(new Date((await stateOf('incident-classifier'))!.changed_at).toISOString()).toBe(NOW.toISOString());
  });

  it('activates a version newer than the deployment has seen, the old active becoming the rollback target', async () => {
    await insertState('rule-proposer', { active: '1.0.0', previous: null, latestKnown: '0.9.0' });
    expect(await service().active('rule-proposer')).toBe(latestVersionOf('rule-proposer'));
    expect(await stateOf('rule-proposer')).toMatchObject({ active_version: '1.1.0', previous_version: '1.0.0', latest_known_version: '1.1.0', change_reason: 'deploy', rolled_back_from: null });
  });

  it('takes the version before the newest as target when the old active already was the newest', async () => {
    await insertState('rule-proposer', { active: '1.1.0', previous: null, latestKnown: '0.9.0' });
    await service().active('rule-proposer');
    expect(await stateOf('rule-proposer')).toMatchObject({ active_version: '1.1.0', previous_version: '1.0.0', latest_known_version: '1.1.0' });
  });

  it('does not move the fleet back when an instance ships an older newest version than the deployment has seen (a rolling deploy)', async () => {
    await database.db.execute(sql`
      INSERT INTO triage_agents (agent, active_version, previous_version, latest_known_version, changed_at, change_reason, rolled_back_from)
      VALUES ('rule-proposer', '1.2.0', '1.1.0', '1.2.0', '2026-11-19T00:00:00Z', 'deploy', NULL)`);
    // This instance ships up to 1.1.0: it runs its own newest meanwhile and leaves the state alone.
    expect(await service().active('rule-proposer')).toBe('1.1.0');
    expect(await stateOf('rule-proposer')).toMatchObject({ active_version: '1.2.0', previous_version: '1.1.0', latest_known_version: '1.2.0' });
  });

  it('orders versions numerically: 1.10.0 is newer than 1.9.0', () => {
    expect(compareVersions('1.10.0', '1.9.0')).toBe(1);
    expect(compareVersions('1.1.0', '1.1')).toBe(0);
    expect(compareVersions('0.9.0', '1.0.0')).toBe(-1);
  });

  it('keeps a rolled-back version active across restarts (a new service sees the same newest version)', async () => {
    await database.db.execute(sql`
      INSERT INTO triage_agents (agent, active_version, previous_version, latest_known_version, changed_at, change_reason, rolled_back_from)
      VALUES ('postmortem-writer', '1.0.0', NULL, '1.1.0', '2026-11-19T00:00:00Z', 'rollback', '1.1.0')`);
    expect(await service().active('postmortem-writer')).toBe('1.0.0');
    expect(await stateOf('postmortem-writer')).toMatchObject({ active_version: '1.0.0', change_reason: 'rollback', rolled_back_from: '1.1.0' });
  });
});

describe('watch()', () => {
  beforeEach(reset);

  it('rolls an agent back when fewer than 30% of at least five decisions of 24 hours were accepted, and audits it', async () => {
    await decisions('incident-classifier@1.1.0', 1, 4);
    const result = await service().watch(NOW);
    expect(result.rolledBack).toEqual(['incident-classifier']);
    expect(result.agents.find((a) => a.agent === 'incident-classifier')).toEqual({
      agent: 'incident-classifier',
      activeVersion: 'incident-classifier@1.0.0',
      rolledBackFrom: 'incident-classifier@1.1.0',
      acceptedRate: 0.2,
      rolledBack: true,
    });
    expect(await stateOf('incident-classifier')).toMatchObject({ active_version: '1.0.0', previous_version: null, latest_known_version: '1.1.0', change_reason: 'rollback', rolled_back_from: '1.1.0' });
    expect(await rollbackAudits()).toEqual([
      {
        target: 'triage-agent:incident-classifier',
        surface: 'job',
        actor: null,
        before: { activeVersion: 'incident-classifier@1.1.0', previousVersion: 'incident-classifier@1.0.0' },
        after: { activeVersion: 'incident-classifier@1.0.0', previousVersion: null, acceptedRate: 0.2, decisions: { accepted: 1, rejected: 4 }, windowHours: 24 },
      },
    ]);
    // The other agents had nothing to judge.
    expect(result.agents.filter((a) => a.rolledBack)).toHaveLength(1);
    expect(result.agents.map((a) => a.agent)).toEqual(AGENT_NAMES);
  });

  it('is idempotent: a second watch does not roll back again while the new active version has no failing record', async () => {
    await decisions('incident-classifier@1.1.0', 1, 4);
    await service().watch(NOW);
    const again = await service().watch(new Date(NOW.getTime() + 15 * MIN));
    expect(again.rolledBack).toEqual([]);
    expect(again.agents.find((a) => a.agent === 'incident-classifier')).toMatchObject({ activeVersion: 'incident-classifier@1.0.0', rolledBack: false, acceptedRate: null });
    expect(await rollbackAudits()).toHaveLength(1);
  });

  it('does nothing when the failing version has no previous version, and says why', async () => {
    await decisions('incident-classifier@1.1.0', 1, 4);
    await service().watch(NOW);
    // Now 1.0.0, the oldest shipped, fails too: there is nothing before it.
    await decisions('incident-classifier@1.0.0', 0, 6);
    const result = await service().watch(new Date(NOW.getTime() + 15 * MIN));
    expect(result.rolledBack).toEqual([]);
    expect(result.agents.find((a) => a.agent === 'incident-classifier')).toEqual({
      agent: 'incident-classifier',
      activeVersion: 'incident-classifier@1.0.0',
      acceptedRate: 0,
      rolledBack: false,
      reason: 'no previous version to revert to',
    });
    expect(await stateOf('incident-classifier')).toMatchObject({ active_version: '1.0.0', previous_version: null });
    expect(await rollbackAudits()).toHaveLength(1);
  });

  it('does nothing on four decisions, at exactly 30%, or on decisions older than 24 hours', async () => {
    await decisions('rule-proposer@1.1.0', 0, 4);
    await decisions('investigation-proposer@1.1.0', 3, 7);
    await decisions('postmortem-writer@1.1.0', 0, 9, 24 * HOUR + MIN);
    const result = await service().watch(NOW);
    expect(result.rolledBack).toEqual([]);
    expect(Object.fromEntries(result.agents.map((a) => [a.agent, a.acceptedRate]))).toEqual({
      'incident-classifier': null,
      'investigation-proposer': 0.3,
      'rule-proposer': 0,
      'postmortem-writer': null,
      'compliance-narrator': null,
    });
  });

  it('counts a decision made exactly 24 hours ago, and only operator decisions of the active version', async () => {
    await decisions('rule-proposer@1.1.0', 0, 5, 24 * HOUR);
    // Pending and auto-rejected proposals, and decisions of another version, are not decisions of the active one.
    await proposal({ agentVersion: 'rule-proposer@1.1.0', status: 'auto-rejected', createdAgo: HOUR });
    await proposal({ agentVersion: 'rule-proposer@1.1.0', status: 'pending', createdAgo: HOUR });
    await decisions('rule-proposer@1.0.0', 5, 0);
    const result = await service().watch(NOW);
    expect(result.rolledBack).toEqual(['rule-proposer']);
  });

  it('is the triage-agent-watch job, every 15 minutes', async () => {
    const jobs = agentWatchJobs(service());
    expect(jobs.map((j) => [j.name, j.schedule])).toEqual([['triage-agent-watch', '*/15 * * * *']]);
    const job = jobs[0]!;
    await decisions('rule-proposer@1.1.0', 0, 5);
    expect(await job.run({ now: NOW } as Parameters<typeof job.run>[0])).toMatchObject({ rolledBack: ['rule-proposer'] });
  });
});

describe('metrics()', () => {
  beforeEach(reset);

  /**
   * incident-classifier@1.1.0 over the last 30 days: 3 accepted (decided after 60, 120 and 300 s),
   * 1 rejected (after 600 s), 2 auto-rejected, 1 pending; one accepted proposal 31 days old (outside).
   * acceptedRate 3/4; precision 3/(4 + 2) = 50%; mean time to decision (60 + 120 + 300 + 600) / 4 = 270 s.
   * incident-classifier@1.0.0: 1 accepted of 3 decided (0.3333), decided after 10, 20, 31 s: 20.3 s.
   *
   * Incidents of the last 30 days (4): A opened by a 1.1.0 proposal; B of web-b, proposed by 1.1.0
   * (pending) 59 minutes before it opened; C of web-c, proposed only 61 minutes after it opened; D of
   * web-d, proposed by 1.1.0 but auto-rejected. 1.0.0 proposed for web-b 10 minutes after B opened.
   * Recall: 1.1.0 saw A and B (50%), 1.0.0 saw B (25%).
   */
  async function seed() {
    await proposal({ agentVersion: 'incident-classifier@1.1.0', status: 'accepted', createdAgo: 2 * HOUR, decidedAfterSec: 60 });
    await proposal({ agentVersion: 'incident-classifier@1.1.0', status: 'accepted', createdAgo: 5 * 86_400_000, decidedAfterSec: 120 });
    await proposal({ agentVersion: 'incident-classifier@1.1.0', status: 'rejected', createdAgo: 3 * HOUR, decidedAfterSec: 600 });
    await proposal({ agentVersion: 'incident-classifier@1.1.0', status: 'accepted', createdAgo: 31 * 86_400_000, decidedAfterSec: 5 });
    await proposal({ agentVersion: 'incident-classifier@1.1.0', status: 'auto-rejected', createdAgo: HOUR });
    const a = await incident('web-a', 10 * 86_400_000);
    await proposal({ agentVersion: 'incident-classifier@1.1.0', status: 'accepted', toolset: 'web-a', createdAgo: 10 * 86_400_000, decidedAfterSec: 300, openedIncidentId: a });
    await incident('web-b', 6 * HOUR);
    await proposal({ agentVersion: 'incident-classifier@1.1.0', status: 'pending', toolset: 'web-b', createdAgo: 6 * HOUR + 59 * MIN });
    await proposal({ agentVersion: 'incident-classifier@1.0.0', status: 'rejected', toolset: 'web-b', createdAgo: 6 * HOUR - 10 * MIN, decidedAfterSec: 10 });
    await incident('web-c', 8 * HOUR);
    await proposal({ agentVersion: 'incident-classifier@1.0.0', status: 'rejected', toolset: 'web-c', createdAgo: 8 * HOUR - 61 * MIN, decidedAfterSec: 20 });
    await incident('web-d', 9 * HOUR);
    await proposal({ agentVersion: 'incident-classifier@1.1.0', status: 'auto-rejected', toolset: 'web-d', createdAgo: 9 * HOUR });
    await proposal({ agentVersion: 'incident-classifier@1.0.0', status: 'accepted', toolset: 'web-z', createdAgo: 20 * HOUR, decidedAfterSec: 31 });
    // An incident opened 31 days ago counts for no one.
    await incident('web-a', 31 * 86_400_000);
  }

  it('computes the rates, precision, recall and time to decision per agent version, exactly', async () => {
    await seed();
    const m = await service().metrics();
    expect(m.windowDays).toBe(METRICS_DAYS);
    const byVersion = Object.fromEntries(m.agents.map((a) => [a.agentVersion, a]));
    expect(byVersion['incident-classifier@1.1.0']).toEqual({
      agent: 'incident-classifier',
      agentVersion: 'incident-classifier@1.1.0',
      active: true,
      proposals: 7,
      pending: 1,
      accepted: 3,
      rejected: 1,
      autoRejected: 2,
      acceptedRate: 0.75,
      precisionPct: 50,
      recallPct: 50,
      meanTimeToDecisionSec: 270,
      badge: 'unknown',
      decided24h: 2,
      acceptedRate24h: 0.5,
    });
    expect(byVersion['incident-classifier@1.0.0']).toEqual({
      agent: 'incident-classifier',
      agentVersion: 'incident-classifier@1.0.0',
      active: false,
      proposals: 3,
      pending: 0,
      accepted: 1,
      rejected: 2,
      autoRejected: 0,
      acceptedRate: 0.3333,
      precisionPct: 33.33,
      recallPct: 25,
      meanTimeToDecisionSec: 20.3,
      badge: 'unknown',
      decided24h: 3,
      acceptedRate24h: 0.3333,
    });
  });

  it('lists every agent\'s active version, with nulls where nothing was decided', async () => {
    const m = await service().metrics();
    expect(m.agents.map((a) => a.agentVersion)).toEqual([
      'compliance-narrator@1.0.0',
      'incident-classifier@1.1.0',
      'investigation-proposer@1.1.0',
      'postmortem-writer@1.1.0',
      'rule-proposer@1.1.0',
    ]);
    expect(m.agents.find((a) => a.agent === 'rule-proposer')).toEqual({
      agent: 'rule-proposer',
      agentVersion: 'rule-proposer@1.1.0',
      active: true,
      proposals: 0,
      pending: 0,
      accepted: 0,
      rejected: 0,
      autoRejected: 0,
      acceptedRate: null,
      precisionPct: null,
      recallPct: null,
      meanTimeToDecisionSec: null,
      badge: 'unknown',
      decided24h: 0,
      acceptedRate24h: null,
    });
    // Recall is the classifier's alone; with no incident it is unknown.
    expect(m.agents.find((a) => a.agent === 'incident-classifier')!.recallPct).toBeNull();
  });

  it('gives the badge from five decisions and shows a rollback in versions', async () => {
    await decisions('rule-proposer@1.1.0', 1, 4);
    await decisions('rule-proposer@1.0.0', 4, 1, 30 * HOUR);
    await service().watch(NOW);
    const m = await service().metrics();
    const byVersion = Object.fromEntries(m.agents.map((a) => [a.agentVersion, a]));
    expect(byVersion['rule-proposer@1.1.0']).toMatchObject({ active: false, acceptedRate: 0.2, badge: 'red', precisionPct: 20 });
    expect(byVersion['rule-proposer@1.0.0']).toMatchObject({ active: true, acceptedRate: 0.8, badge: 'green', decided24h: 0, acceptedRate24h: null });
    expect(m.versions.find((v) => v.agent === 'rule-proposer')).toEqual({
      agent: 'rule-proposer',
      activeVersion: 'rule-proposer@1.0.0',
      previousVersion: null,
      changedAt: NOW.toISOString(),
      changeReason: 'rollback',
      rolledBackFrom: 'rule-proposer@1.1.0',
    });
    expect(m.versions.find((v) => v.agent === 'incident-classifier')).toMatchObject({ activeVersion: 'incident-classifier@1.1.0', previousVersion: 'incident-classifier@1.0.0', changeReason: 'deploy', rolledBackFrom: null });
  });
});
