import { expect } from 'vitest';
import type { Clock } from '../../src/platform/clock.ts';
import { type TestApp, V1 } from './app.ts';
import { ingestEmpire } from './empire.ts';
import { CHROME_UA, createTenant, signedIngest } from './honeypot.ts';

/**
 * The kinds of alert rule the engine runs (src/platform/alerting/engine.ts), as the lifecycle
 * suite (src/platform/alerting/lifecycle.test.ts) drives them over HTTP: where a kind's rules are
 * created, listed and changed, what a rule is made for (its owner: a tenant, a toolset), how the
 * owner's events are sent, and what the kind's names are (job, outbound source, audit verbs,
 * schemas). Each kind's own predicates are tested beside it.
 */

/** What a rule is made for: a honeypot tenant (slug and signing secret) or an empire toolset. */
export interface RuleOwner {
  name: string;
  secret?: string;
}

export interface AlertKind {
  kind: 'honeypot' | 'empire';
  job: string;
  /** The outbound producer of its firings. */
  source: string;
  /** Its rules table (tests disable every rule after each test). */
  table: 'honeypot_alert_rules' | 'empire_alert_rules';
  audit: { create: string; update: string; target: string };
  schemas: { list: string; create: string; change: string };
  /** A fresh owner for one test, named after `label`. */
  owner(t: TestApp, label: string): Promise<RuleOwner>;
  listUrl(owner: RuleOwner): string;
  createUrl(owner: RuleOwner): string;
  ruleUrl(id: string): string;
  createBody(owner: RuleOwner, rule: { name: string; predicate: object; destinations: object[]; enabled?: boolean }): Record<string, unknown>;
  /** The fields that say whose a rule is, as a rule view (and its audit rows) show them. */
  ownerFields(owner: RuleOwner): Record<string, unknown>;
  /** A windowed predicate (stored as given) that holds once at least `n` of the owner's events were received in the window. */
  countAtLeast(n: number, windowMinutes: number): Record<string, unknown>;
  /** Sends `n` events of the owner, received at the clock's now; each call's events are new. */
  ingest(t: TestApp, owner: RuleOwner, n: number, clock: Clock): Promise<void>;
  /** The title and details of a `countAtLeast` firing that observed `n` events. */
  countFiring(owner: RuleOwner, rule: { id: string; name: string }, n: number): { title: string; details: Record<string, unknown> };
  /** A run's stats, with the counters only this kind reports (zero). */
  stats(counts: { evaluated: number; fired: number; silenced: number; cooling: number; skipped: number; failed: number }): Record<string, number>;
  /** The rule service on the app, for runs that do not go through the job endpoint. */
  evaluateAll(t: TestApp, now: Date): Promise<{ fired: number }>;
}

const events = (n: number) => (n === 1 ? '1 event' : `${n} events`);
let sent = 0;

export const honeypotAlerts: AlertKind = {
  kind: 'honeypot',
  job: 'alert-evaluate',
  source: 'honeypot-rule',
  table: 'honeypot_alert_rules',
  audit: { create: 'alert.create', update: 'alert.update', target: 'alert-rule' },
  schemas: { list: 'svc-observatory-alerts.v1', create: 'svc-observatory-alert-create.v1', change: 'svc-observatory-alert.v1' },
  owner: async (t, label) => ({ name: `lc-${label}`, secret: await createTenant(t, `lc-${label}`) }),
  listUrl: (owner) => `${V1}/honeypot/alerts?tenant=${owner.name}`,
  createUrl: () => `${V1}/honeypot/alerts`,
  ruleUrl: (id) => `${V1}/honeypot/alerts/${id}`,
  createBody: (owner, rule) => ({ tenant: owner.name, ...rule }),
  ownerFields: (owner) => ({ tenant: owner.name }),
  countAtLeast: (n, windowMinutes) => ({ kind: 'event_count_above', count: n - 1, windowMinutes }),
  async ingest(t, owner, n, clock) {
    const body = { events: Array.from({ length: n }, () => ++sent).map((i) => ({ path: `/q/${i}`, ua: CHROME_UA, ip: `203.0.113.${i % 250}`, ja4: 't13d1516h2_aaaaaaaaaaaa_bbbbbbbbbbbb' })) };
    const res = await signedIngest(t, { slug: owner.name, secret: owner.secret!, unixSeconds: Math.floor(clock.now().getTime() / 1000), body });
    expect(res.statusCode, res.body).toBe(200);
  },
  countFiring: (owner, rule, n) => ({
    title: `${rule.name}: ${events(n)} on ${owner.name}`,
    details: { tenant: owner.name, rule, observed: { events: n } },
  }),
  stats: (counts) => counts,
  evaluateAll: (t, now) => t.app.honeypot.alerts.evaluateAll(now),
};

export const empireAlerts: AlertKind = {
  kind: 'empire',
  job: 'empire-alert-evaluate',
  source: 'empire-rule',
  table: 'empire_alert_rules',
  audit: { create: 'empire-alert.create', update: 'empire-alert.update', target: 'empire-alert-rule' },
  schemas: { list: 'svc-empire-alerts.v1', create: 'svc-empire-alert-create.v1', change: 'svc-empire-alert.v1' },
  owner: async (_t, label) => ({ name: `lc-${label}` }),
  listUrl: (owner) => `${V1}/empire/${owner.name}/alerts`,
  createUrl: (owner) => `${V1}/empire/${owner.name}/alerts`,
  ruleUrl: (id) => `${V1}/empire/alerts/${id}`,
  createBody: (_owner, rule) => rule,
  ownerFields: (owner) => ({ toolset: owner.name, tenant: null }),
  countAtLeast: (n, windowMinutes) => ({ kind: 'empire_count_gte', count: n, windowMinutes }),
  async ingest(t, owner, n) {
    const res = await ingestEmpire(t, owner.name, Array.from({ length: n }, () => ({ id: `lc-${++sent}`, eventType: 'x' })));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().accepted).toBe(n);
  },
  countFiring: (owner, rule, n) => ({
    title: `${rule.name}: ${events(n)} on ${owner.name}`,
    details: { toolset: owner.name, tenant: null, rule, observed: { events: n } },
  }),
  stats: (counts) => ({ ...counts, unknown: 0 }),
  evaluateAll: (t, now) => t.app.empire.alerts.evaluateAll(now),
};
