import { sha256Hex } from '../../../platform/crypto.ts';
import { COMPLIANCE_NARRATOR_VERSIONS, narrateCompliance } from './compliance-narrator.ts';
import { classifyIncidents, INCIDENT_CLASSIFIER_VERSIONS } from './incident-classifier.ts';
import { INVESTIGATION_PROPOSER_VERSIONS, proposeInvestigations } from './investigation-proposer.ts';
import { POSTMORTEM_WRITER_VERSIONS, writePostmortem } from './postmortem-writer.ts';
import { proposeRules, RULE_PROPOSER_VERSIONS } from './rule-proposer.ts';

/**
 * The agents and their shipped versions (docs/triage/README.md, "Agents and versions"). A version is a
 * system prompt and the built-in engine's tuning; versions are listed oldest first, and the
 * newest one a deployment ships becomes active unless the watch job rolled it back. The
 * `forecaster` is the empire forecaster: it has no prompt, but the budget defers it like the
 * other non-safety agents.
 */

export interface AgentVersion<P = unknown> {
  version: string;
  systemPrompt: string;
  params: P;
}

export const AGENTS = {
  'incident-classifier': { safety: true, versions: INCIDENT_CLASSIFIER_VERSIONS, builtin: classifyIncidents },
  'investigation-proposer': { safety: false, versions: INVESTIGATION_PROPOSER_VERSIONS, builtin: proposeInvestigations },
  'rule-proposer': { safety: false, versions: RULE_PROPOSER_VERSIONS, builtin: proposeRules },
  'postmortem-writer': { safety: false, versions: POSTMORTEM_WRITER_VERSIONS, builtin: writePostmortem },
  'compliance-narrator': { safety: false, versions: COMPLIANCE_NARRATOR_VERSIONS, builtin: narrateCompliance },
} as const;

export type AgentName = keyof typeof AGENTS;
export const AGENT_NAMES = Object.keys(AGENTS) as AgentName[];

/** The agents the budget defers when a bucket is spent (spec A "Triage budget"); the classifier always runs. */
export const DEFERRABLE_AGENTS = ['rule-proposer', 'investigation-proposer', 'forecaster', 'postmortem-writer', 'compliance-narrator'] as const;
export type DeferrableAgent = (typeof DEFERRABLE_AGENTS)[number];

export const isAgentName = (value: string): value is AgentName => Object.hasOwn(AGENTS, value);

/** The public version string: `incident-classifier@1.1.0`. */
export const agentVersionLabel = (agent: string, version: string) => `${agent}@${version}`;

export function versionsOf(agent: AgentName): readonly AgentVersion[] {
  return AGENTS[agent].versions as readonly AgentVersion[];
}

export function latestVersionOf(agent: AgentName): string {
  const versions = versionsOf(agent);
  return versions[versions.length - 1]!.version;
}

/** The shipped definition of a version; the newest when the stored one is no longer shipped. */
export function definitionOf(agent: AgentName, version: string): AgentVersion {
  const versions = versionsOf(agent);
  return versions.find((v) => v.version === version) ?? versions[versions.length - 1]!;
}

/** The version shipped just before `version`, or null for the oldest (or one not shipped). */
export function versionBefore(agent: AgentName, version: string): string | null {
  const versions = versionsOf(agent);
  const at = versions.findIndex((v) => v.version === version);
  return at > 0 ? versions[at - 1]!.version : null;
}

/** Orders `1.10.0` after `1.9.0`: numeric parts compared in turn. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

export const promptHash = (systemPrompt: string) => sha256Hex(systemPrompt);
