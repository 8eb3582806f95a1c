import type { AuditLog } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import { AGENT_NAMES, type AgentName, agentVersionLabel, compareVersions, definitionOf, latestVersionOf, versionBefore } from '../agents/registry.ts';
import * as repo from './repository.ts';

/**
 * Trust in the agents (docs/triage/README.md, "Metrics and rollback"): which version of each agent is
 * active, how its proposals fared, and the `triage-agent-watch` job that rolls an agent back to
 * its previous version when operators stop accepting what it proposes.
 */

/** Metrics read the proposals of the last 30 days. */
export const METRICS_DAYS = 30;
/** The watch reads 24 hours of decisions (spec C "Auto-rollback"). */
export const WATCH_HOURS = 24;
/** Rollback when the active version's accepted share of those decisions is below this. */
export const ROLLBACK_BELOW = 0.3;
/** Fewer decisions than this say nothing yet: no rollback, badge `unknown`. */
export const MIN_DECISIONS = 5;
/** A proposal "saw" an incident opened within this many seconds of it (recall). */
export const RECALL_SLACK_SEC = 3600;
export const BADGE_GREEN_FROM = 0.6;

export type Badge = 'green' | 'yellow' | 'red' | 'unknown';

/** The badge of an accepted rate over `decided` decisions (docs/triage/README.md gives the cut-offs). */
export function badgeOf(acceptedRate: number | null, decided: number): Badge {
  if (acceptedRate === null || decided < MIN_DECISIONS) return 'unknown';
  return acceptedRate >= BADGE_GREEN_FROM ? 'green' : acceptedRate >= ROLLBACK_BELOW ? 'yellow' : 'red';
}

/** Whether 24 hours of decisions call for a rollback (pure: the watch's rule). */
export function shouldRollBack(decisions: { accepted: number; rejected: number }): boolean {
  const decided = decisions.accepted + decisions.rejected;
  return decided >= MIN_DECISIONS && decisions.accepted / decided < ROLLBACK_BELOW;
}

const NO_DECISIONS = { accepted: 0, rejected: 0 };
const rate = (part: number, whole: number) => (whole === 0 ? null : part / whole);
const pct = (fraction: number | null) => (fraction === null ? null : Math.round(fraction * 10_000) / 100);
const round = (value: number | null, digits: number) => (value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits);

export function createAgentService(deps: { db: Db; clock: Clock; audit: AuditLog }) {
  const { db, clock, audit } = deps;

  /**
   * The agent's state, created on first use. A deploy that ships a newer version than the
   * deployment has seen activates it (the one before becomes the rollback target); a version
   * rolled back stays rolled back across restarts.
   */
  async function stateOf(agent: AgentName, tx: Db = db): Promise<repo.AgentStateRow> {
    const latest = latestVersionOf(agent);
    let row = await repo.agentState(tx, agent);
    if (!row) {
      await repo.insertAgentState(tx, {
        agent,
        activeVersion: latest,
        previousVersion: versionBefore(agent, latest),
        latestKnownVersion: latest,
        changedAt: clock.now(),
        changeReason: 'deploy',
        rolledBackFrom: null,
      });
      row = (await repo.agentState(tx, agent))!;
    }
    // Only a newer version is a deploy: during a rolling deploy an instance still shipping the older
    // one must not switch the fleet back (it runs its own newest meanwhile; see `active`).
    if (compareVersions(latest, row.latestKnownVersion) > 0) {
      const patch = { activeVersion: latest, previousVersion: row.activeVersion === latest ? versionBefore(agent, latest) : row.activeVersion, latestKnownVersion: latest, changedAt: clock.now(), changeReason: 'deploy', rolledBackFrom: null };
      await repo.updateAgentState(tx, agent, patch);
      row = { ...row, ...patch };
    }
    return row;
  }

  /** Reverts one agent when its active version's last 24 hours of decisions fall below 30% accepted. */
  async function watchOne(agent: AgentName, now: Date) {
    const state = await stateOf(agent);
    const activeLabel = agentVersionLabel(agent, state.activeVersion);
    const decisions = (await repo.decisionsByVersionSince(db, new Date(now.getTime() - WATCH_HOURS * 3_600_000), activeLabel)).get(activeLabel) ?? NO_DECISIONS;
    const acceptedRate = round(rate(decisions.accepted, decisions.accepted + decisions.rejected), 4);
    if (!shouldRollBack(decisions)) return { agent, activeVersion: activeLabel, acceptedRate, rolledBack: false };
    if (state.previousVersion === null) return { agent, activeVersion: activeLabel, acceptedRate, rolledBack: false, reason: 'no previous version to revert to' };
    return withTransaction(db, async (tx) => {
      const locked = await repo.agentState(tx, agent, true);
      // Another instance reverted it meanwhile: nothing more to do.
      if (!locked || locked.activeVersion !== state.activeVersion || locked.previousVersion === null) return { agent, activeVersion: activeLabel, acceptedRate, rolledBack: false };
      const target = locked.previousVersion;
      const patch = { activeVersion: target, previousVersion: versionBefore(agent, target), changedAt: now, changeReason: 'rollback', rolledBackFrom: locked.activeVersion };
      await repo.updateAgentState(tx, agent, patch);
      await audit.record(tx, {
        verb: 'triage.agent-rollback',
        target: `triage-agent:${agent}`,
        surface: 'job',
        actor: null,
        before: { activeVersion: agentVersionLabel(agent, locked.activeVersion), previousVersion: agentVersionLabel(agent, target) },
        after: { activeVersion: agentVersionLabel(agent, target), previousVersion: patch.previousVersion === null ? null : agentVersionLabel(agent, patch.previousVersion), acceptedRate, decisions, windowHours: WATCH_HOURS },
      });
      return { agent, activeVersion: agentVersionLabel(agent, target), rolledBackFrom: activeLabel, acceptedRate, rolledBack: true };
    });
  }

  return {
    /** The version to run: the active one, or this instance's newest while it does not ship the active one yet. */
    async active(agent: AgentName): Promise<string> {
      return definitionOf(agent, (await stateOf(agent)).activeVersion).version;
    },

    async watch(now: Date) {
      const results = [];
      for (const agent of AGENT_NAMES) results.push(await watchOne(agent, now));
      return { rolledBack: results.filter((r) => r.rolledBack).map((r) => r.agent), agents: results };
    },

    /** Spec B `GET triage/metrics`: per agent and version, over the proposals of the last 30 days. */
    async metrics() {
      const now = clock.now();
      const since = new Date(now.getTime() - METRICS_DAYS * 86_400_000);
      const states = new Map<string, repo.AgentStateRow>();
      for (const agent of AGENT_NAMES) states.set(agent, await stateOf(agent));
      const [counts, coverage, lastDay] = await Promise.all([
        repo.outcomeCounts(db, since),
        repo.incidentCoverage(db, since, RECALL_SLACK_SEC),
        repo.decisionsByVersionSince(db, new Date(now.getTime() - WATCH_HOURS * 3_600_000)),
      ]);
      const rows = new Map(counts.map((c) => [c.agentVersion, c]));
      for (const [agent, state] of states) {
        const label = agentVersionLabel(agent, state.activeVersion);
        if (!rows.has(label)) rows.set(label, { agent, agentVersion: label, proposals: 0, pending: 0, accepted: 0, rejected: 0, autoRejected: 0, meanTimeToDecisionSec: null });
      }
      const agents = [];
      for (const row of [...rows.values()].sort((a, b) => (a.agentVersion < b.agentVersion ? -1 : 1))) {
        const state = states.get(row.agent);
        const decided = row.accepted + row.rejected;
        const acceptedRate = round(rate(row.accepted, decided), 4);
        const last24h = lastDay.get(row.agentVersion) ?? NO_DECISIONS;
        agents.push({
          agent: row.agent,
          agentVersion: row.agentVersion,
          active: state !== undefined && agentVersionLabel(row.agent, state.activeVersion) === row.agentVersion,
          proposals: row.proposals,
          pending: row.pending,
          accepted: row.accepted,
          rejected: row.rejected,
          autoRejected: row.autoRejected,
          acceptedRate,
          precisionPct: pct(rate(row.accepted, decided + row.autoRejected)),
          recallPct: row.agent === 'incident-classifier' ? pct(rate(coverage.covered.get(row.agentVersion) ?? 0, coverage.total)) : null,
          meanTimeToDecisionSec: round(row.meanTimeToDecisionSec, 1),
          badge: badgeOf(acceptedRate, decided),
          decided24h: last24h.accepted + last24h.rejected,
          acceptedRate24h: round(rate(last24h.accepted, last24h.accepted + last24h.rejected), 4),
        });
      }
      return {
        windowDays: METRICS_DAYS,
        agents,
        versions: [...states.values()].map((s) => ({
          agent: s.agent,
          activeVersion: agentVersionLabel(s.agent, s.activeVersion),
          previousVersion: s.previousVersion === null ? null : agentVersionLabel(s.agent, s.previousVersion),
          changedAt: s.changedAt.toISOString(),
          changeReason: s.changeReason as 'deploy' | 'rollback',
          rolledBackFrom: s.rolledBackFrom === null ? null : agentVersionLabel(s.agent, s.rolledBackFrom),
        })),
      };
    },
  };
}

export type AgentService = ReturnType<typeof createAgentService>;

export function agentWatchJobs(agents: AgentService): JobDefinition[] {
  return [
    {
      name: 'triage-agent-watch',
      description: `Reverts a triage agent to its previous version when fewer than ${ROLLBACK_BELOW * 100}% of its active version's proposals decided in the last ${WATCH_HOURS} hours were accepted (at least ${MIN_DECISIONS} decisions); audited as triage.agent-rollback.`,
      schedule: '*/15 * * * *',
      run: async ({ now }) => agents.watch(now),
    },
  ];
}
