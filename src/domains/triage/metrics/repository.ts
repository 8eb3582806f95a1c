import { eq, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { empireTriageFacts } from '../../empire/index.ts';
import { triageAgents } from '../schema.ts';

export type AgentStateRow = typeof triageAgents.$inferSelect;

const iso = (d: Date) => d.toISOString();
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export async function agentState(db: Db, agent: string, forUpdate = false): Promise<AgentStateRow | null> {
  const query = db.select().from(triageAgents).where(eq(triageAgents.agent, agent));
  const [row] = forUpdate ? await query.for('update') : await query;
  return row ?? null;
}

export async function allAgentStates(db: Db): Promise<AgentStateRow[]> {
  return db.select().from(triageAgents).orderBy(triageAgents.agent);
}

/** Inserts the first state of an agent unless another instance just did. */
export async function insertAgentState(db: Db, row: AgentStateRow): Promise<void> {
  await db.insert(triageAgents).values(row).onConflictDoNothing();
}

export async function updateAgentState(tx: Db, agent: string, patch: Partial<Omit<AgentStateRow, 'agent'>>): Promise<void> {
  await tx.update(triageAgents).set(patch).where(eq(triageAgents.agent, agent));
}

export interface OutcomeCounts {
  agent: string;
  agentVersion: string;
  proposals: number;
  pending: number;
  accepted: number;
  rejected: number;
  autoRejected: number;
  /** Mean seconds from proposal to operator decision; null when none was decided. */
  meanTimeToDecisionSec: number | null;
}

/** Outcomes per agent and version of the proposals created since `since`. */
export async function outcomeCounts(db: Db, since: Date): Promise<OutcomeCounts[]> {
  const result = await db.execute(sql`
    SELECT agent, agent_version AS "agentVersion", count(*)::int AS proposals,
      count(*) FILTER (WHERE status = 'pending')::int AS pending,
      count(*) FILTER (WHERE status = 'accepted')::int AS accepted,
      count(*) FILTER (WHERE status = 'rejected')::int AS rejected,
      count(*) FILTER (WHERE status = 'auto-rejected')::int AS "autoRejected",
      avg(extract(epoch FROM decided_at - created_at)) FILTER (WHERE status IN ('accepted', 'rejected')) AS "meanTimeToDecisionSec"
    FROM triage_proposals WHERE created_at >= ${iso(since)}::timestamptz GROUP BY agent, agent_version ORDER BY agent, agent_version`);
  return rowsOf<OutcomeCounts>(result).map((r) => ({
    agent: r.agent,
    agentVersion: r.agentVersion,
    proposals: Number(r.proposals),
    pending: Number(r.pending),
    accepted: Number(r.accepted),
    rejected: Number(r.rejected),
    autoRejected: Number(r.autoRejected),
    meanTimeToDecisionSec: num(r.meanTimeToDecisionSec),
  }));
}

/** Operator decisions made since `since`, per agent version (versions without any are absent). */
export async function decisionsByVersionSince(db: Db, since: Date, agentVersion?: string): Promise<Map<string, { accepted: number; rejected: number }>> {
  const result = await db.execute(sql`
    SELECT agent_version AS "agentVersion", count(*) FILTER (WHERE status = 'accepted')::int AS accepted, count(*) FILTER (WHERE status = 'rejected')::int AS rejected
    FROM triage_proposals WHERE status IN ('accepted', 'rejected') AND decided_at >= ${iso(since)}::timestamptz
      ${agentVersion === undefined ? sql`` : sql`AND agent_version = ${agentVersion}`}
    GROUP BY agent_version`);
  return new Map(rowsOf<{ agentVersion: string; accepted: number; rejected: number }>(result).map((r) => [r.agentVersion, { accepted: Number(r.accepted), rejected: Number(r.rejected) }]));
}

/**
 * The incidents opened since `since`, and per incident-classifier version how many of them it saw:
 * it opened the incident, or it proposed (not auto-rejected) an incident of the same toolset
 * within `slackSec` of the opening.
 */
export async function incidentCoverage(db: Db, since: Date, slackSec: number): Promise<{ total: number; covered: Map<string, number> }> {
  const incidents = empireTriageFacts.incidentsOpenedSince(since);
  const totalResult = await db.execute(sql`SELECT count(*)::int AS total FROM (${incidents}) i`);
  const coveredResult = await db.execute(sql`
    SELECT p.agent_version AS "agentVersion", count(DISTINCT i.id)::int AS covered
    FROM (${incidents}) i JOIN triage_proposals p ON p.kind = 'incident' AND p.status <> 'auto-rejected'
      AND (p.opened_incident_id = i.id OR (p.toolset = i.toolset
        AND p.created_at BETWEEN i.opened_at - make_interval(secs => ${slackSec}) AND i.opened_at + make_interval(secs => ${slackSec})))
    GROUP BY p.agent_version`);
  const [total] = rowsOf<{ total: number }>(totalResult);
  return { total: Number(total?.total ?? 0), covered: new Map(rowsOf<{ agentVersion: string; covered: number }>(coveredResult).map((r) => [r.agentVersion, Number(r.covered)])) };
}
