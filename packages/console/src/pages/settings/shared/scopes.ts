import type { BodyOf } from './api-types';

/** A scope a token can carry, exactly as the service's schema lists them. */
export type ScopeName = BodyOf<'createToken'>['scopes'][number];

/**
 * What each scope opens, in a few words. Keyed by the schema's scope names: a scope the service
 * adds breaks the build here until it is described.
 */
export const SCOPE_DESCRIPTIONS: Record<ScopeName, string> = {
  'read:dashboard': 'Honeypot dashboards, fleet and scheduled-job health',
  'read:events': 'Honeypot events and toolset event reads',
  'read:tenants': 'Honeypot tenants',
  'read:alerts': 'Alert rules, deliveries and integration status',
  'write:alerts': 'Change alert rules; run jobs, snapshots and triage; test webhooks',
  'read:clusters': 'Fingerprint clusters',
  'read:intel': 'Vendor verdicts and investigations',
  'write:tokens': 'Issue and revoke tokens, add operators, create agent API keys',
  'write:tenants': 'Create and change tenants and toolsets; edit agent API topics',
  'write:test-event': 'Send test ingest events',
  'read:empire': 'Toolsets, analytics, cost, graph, triage, backups and the audit log',
  'write:events': 'Write toolset events',
};

export const SCOPE_NAMES = Object.keys(SCOPE_DESCRIPTIONS) as ScopeName[];
