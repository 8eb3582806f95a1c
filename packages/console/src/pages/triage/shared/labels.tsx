import { Link } from 'react-router';
import type { Proposal } from './api';

const STATUS_CLASS: Record<string, string> = { pending: 'warn', accepted: 'ok', rejected: 'bad', 'auto-rejected': '' };
const BADGE_CLASS: Record<string, string> = { green: 'ok', yellow: 'warn', red: 'bad', unknown: '' };
const KIND_TEXT: Record<string, string> = { incident: 'Incident', investigation: 'Investigation', 'alert-rule': 'Alert rule' };

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge ${STATUS_CLASS[status] ?? ''}`}>{status}</span>;
}

/** An agent's trust badge (green, yellow, red, unknown). */
export function TrustBadge({ badge }: { badge: string }) {
  return <span className={`badge ${BADGE_CLASS[badge] ?? ''}`}>{badge}</span>;
}

export const kindText = (kind: string) => KIND_TEXT[kind] ?? kind;

/** The address of one proposal's page. */
export const proposalHref = (id: string) => `/empire/triage/proposal?id=${encodeURIComponent(id)}`;
export const replayHref = (runId: string) => `/empire/triage/runs?run=${encodeURIComponent(runId)}`;
export const postmortemHref = (incidentId: string) => `/empire/triage/postmortems?incident=${encodeURIComponent(incidentId)}`;

export function ProposalLink({ proposal }: { proposal: Pick<Proposal, 'id' | 'title'> }) {
  return <Link to={proposalHref(proposal.id)}>{proposal.title}</Link>;
}

export const pct = (ratio: number | null | undefined, digits = 0) => (ratio === null || ratio === undefined ? '—' : `${(ratio * 100).toFixed(digits)}%`);
export const dollars = (cents: number) => `$${(cents / 100).toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}
