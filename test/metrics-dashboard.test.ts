import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ManualClock } from '../src/platform/clock.ts';
import { labelCap, MAX_LABEL_VALUES, OTHER_LABEL } from '../src/platform/metrics.ts';
import { type Receiver, startReceiver } from './helpers/http-receiver.ts';
import { ADMIN_TOKEN, runJob, startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { ingestEmpire, nodeKeyPair, registerKey, signWithNode, tokenBoundTo } from './helpers/empire.ts';
import { CHROME_UA, GPTBOT_UA, signedIngest } from './helpers/honeypot.ts';

/**
 * The Grafana dashboard in ops/grafana, "provisioned" against what the service really exposes:
 * an app is started and exercised (ingest of both kinds, a liar flood that opens a tarpit, refused
 * requests, an alert delivered, the graph and the warehouse rolled), /metrics is scraped, and every
 * metric name each PromQL expression of the dashboard (panels and variables) references must have
 * a series there. The dashboard and its provisioning file must be what Grafana loads from files.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DASHBOARD_FILE = path.join(ROOT, 'ops/grafana/dashboards/observatory.json');
const PROVISIONING_FILE = path.join(ROOT, 'ops/grafana/provisioning/dashboards/observatory.yaml');
const DATASOURCE_FILE = path.join(ROOT, 'ops/grafana/provisioning/datasources/prometheus.yaml');

const clock = new ManualClock('2026-11-23T10:00:00.000Z');
const MINUTE = 60_000;
let t: TestApp;
let rx: Receiver;
let scrape = '';

// --- A small PromQL reader: enough to name the metrics an expression selects. ---

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);
/** Aggregation operators: `sum by (x) (…)` puts a label list between the operator and its `(`. */
const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio']);
/** Clauses whose parenthesised list holds label names, not expressions. */
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

/**
 * The metric names an expression selects: identifiers that are not functions (followed by `(`),
 * keywords, label names (inside `{…}` or a `by (…)` list), strings, durations or numbers. Grafana's
 * `label_values(metric, label)` names its metric first. Throws on text it cannot read (an
 * unbalanced bracket or quote), so a broken expression fails the test rather than passing unread.
 */
export function metricNamesOf(expr: string): string[] {
  const names: string[] = [];
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  for (const [open, close] of [['(', ')'], ['{', '}'], ['[', ']']] as const) {
    if (bare.split(open).length !== bare.split(close).length) throw new Error(`unbalanced ${open} in ${expr}`);
  }
  let i = 0;
  const closing = (open: string, close: string) => {
    let depth = 0;
    for (let j = i; j < expr.length; j++) {
      if (expr[j] === '"' || expr[j] === "'") j = endOfString(j);
      else if (expr[j] === open) depth++;
      else if (expr[j] === close && --depth === 0) return j;
    }
    throw new Error(`unbalanced ${open} in ${expr}`);
  };
  const endOfString = (start: number) => {
    const quote = expr[start];
    for (let j = start + 1; j < expr.length; j++) {
      if (expr[j] === '\\') j++;
      else if (expr[j] === quote) return j;
    }
    throw new Error(`unterminated string in ${expr}`);
  };
  while (i < expr.length) {
    const c = expr[i]!;
    if (c === '"' || c === "'" || c === '`') {
      i = endOfString(i) + 1;
    } else if (c === '{') {
      i = closing('{', '}') + 1; // label matchers
    } else if (c === '[') {
      i = closing('[', ']') + 1; // range or subquery: a duration or $__rate_interval
    } else if (/[A-Za-z_:]/.test(c)) {
      const word = /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(expr.slice(i))![0];
      i += word.length;
      const rest = expr.slice(i).trimStart();
      const lower = word.toLowerCase();
      if (LABEL_LISTS.has(lower) && rest.startsWith('(')) {
        i = expr.length - rest.length;
        i = closing('(', ')') + 1;
      } else if (lower === 'label_values' && rest.startsWith('(')) {
        const args = rest.slice(1, rest.indexOf(')'));
        const first = args.split(',')[0]!.trim();
        if (args.includes(',')) names.push(...metricNamesOf(first));
        i = expr.length - rest.length;
        i = closing('(', ')') + 1;
      } else if (rest.startsWith('(') || KEYWORDS.has(lower) || AGGREGATIONS.has(lower)) {
        // a function call or a keyword
      } else {
        names.push(word);
      }
    } else if (c === '$') {
      i += /^\$\{?[A-Za-z0-9_]+\}?/.exec(expr.slice(i))?.[0].length ?? 1; // a dashboard variable
    } else if (/[0-9.]/.test(c)) {
      i += /^[0-9.]+(e[+-]?[0-9]+)?[smhdwy]?/i.exec(expr.slice(i))![0].length;
    } else {
      i++;
    }
  }
  return names;
}

/** Sample names with at least one series in Prometheus text exposition. */
function exposedSeries(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    names.add(/^[A-Za-z_:][A-Za-z0-9_:]*/.exec(line)![0]);
  }
  return names;
}

/** The value of one series of the scrape (exact label set as printed), or undefined. */
function sample(name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  for (const line of scrape.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = /\{(.*)\}/.exec(line)?.[1] ?? '';
    const have = Object.fromEntries([...labelText.matchAll(/([A-Za-z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (wanted.length === Object.keys(have).length && wanted.every(([k, v]) => have[k] === v)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: { refId: string; expr: string; datasource?: { type: string; uid: string } }[];
  panels?: Panel[];
}
const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: string | { query: string }; datasource?: { uid: string } }[] };
  __inputs?: unknown;
};
const allPanels = (list: Panel[]): Panel[] => list.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
const expressions = (): { where: string; expr: string }[] => [
  ...allPanels(dashboard.panels).flatMap((p) => (p.targets ?? []).map((target) => ({ where: `panel ${p.id} "${p.title}" ${target.refId}`, expr: target.expr }))),
  ...dashboard.templating.list
    .filter((v) => v.type === 'query')
    .map((v) => ({ where: `variable ${v.name}`, expr: typeof v.query === 'string' ? v.query : v.query.query })),
];

async function exercise(): Promise<void> {
  const tenant = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug: 'metrics-site', name: 'Metrics' } });
  expect(tenant.statusCode, tenant.body).toBe(200);
  const secret = tenant.json().signingSecret as string;
  const unixSeconds = () => Math.floor(clock.now().getTime() / 1000);
  // A rule that fires on any event, to a receiver that answers 200.
  const rule = await t.call({
    method: 'POST',
    url: `${V1}/honeypot/alerts`,
    payload: { tenant: 'metrics-site', name: 'Any', predicate: { kind: 'event_count_above', count: 0, windowMinutes: 5 }, destinations: [{ kind: 'webhook', url: `${rx.origin}/hook`, secret: 'whsec_metricsdashboard0123456789' }] },
  });
  expect(rule.statusCode, rule.body).toBe(200);
  clock.advance(2 * MINUTE);
  // Browsers, and a GPTBot user agent from outside OpenAI's ranges: liars, enough to open a tarpit.
  const events = [
    ...Array.from({ length: 3 }, (_, n) => ({ path: `/q/${n}`, ua: CHROME_UA, ip: `203.0.113.${n + 1}` })),
    ...Array.from({ length: 6 }, (_, n) => ({ path: `/honeypot/topics/t-${n}`, ua: GPTBOT_UA, ip: '198.51.100.9', ja4: 't13d1516h2_8daaf6152771_02713d6af862' })),
  ];
  const ingest = await signedIngest(t, { slug: 'metrics-site', secret, unixSeconds: unixSeconds(), body: { events } });
  expect(ingest.statusCode, ingest.body).toBe(200);
  expect(ingest.json().events.at(-1).tarpit.active).toBe(true);
  // Refused: a bad signature, an unknown tenant.
  expect((await signedIngest(t, { slug: 'metrics-site', secret: 'not-the-secret', unixSeconds: unixSeconds(), body: { events } })).statusCode).toBe(401);
  expect((await signedIngest(t, { slug: 'no-such-site', secret, unixSeconds: unixSeconds(), body: { events } })).statusCode).toBe(401);
  // Toolset events: one signed, one unsigned, one with a signature that does not verify.
  const key = nodeKeyPair();
  await registerKey(t, 'metrics-lab', key.publicKeyB64);
  const signed = signWithNode('metrics-lab', { id: 'm-1', eventType: 'crawl.page' }, key.privateKey);
  const forged = { ...signWithNode('metrics-lab', { id: 'm-3', eventType: 'crawl.page' }, key.privateKey), payload: { changed: true } };
  const empire = await ingestEmpire(t, 'metrics-lab', [signed, { id: 'm-2', eventType: 'crawl.page' }, forged]);
  expect(empire.json()).toMatchObject({ accepted: 2, rejected: 1 });
  clock.advance(2 * MINUTE);
  expect(await runJob(t, 'alert-evaluate')).toMatchObject({ fired: 1 });
  expect(await runJob(t, 'outbound-dispatch')).toMatchObject({ sent: 1 });
  await runJob(t, 'graph-materialise');
  await runJob(t, 'analytics-rollup');
  clock.advance(MINUTE);
  const res = await t.call({ method: 'GET', url: '/metrics', token: ADMIN_TOKEN });
  expect(res.statusCode).toBe(200);
  scrape = res.body;
}

beforeAll(async () => {
  rx = await startReceiver();
  t = await startTestApp({
    clock,
    env: { OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1', OBSERVATORY_OUTBOUND_ALLOWED_PORTS: `80,443,${rx.port}`, OBSERVATORY_LIAR_THRESHOLD: '5' },
  });
  await exercise();
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

describe('the metrics the service exposes', () => {
  it('counts events by tenant and class, liars, tarpits, refusals and deliveries', () => {
    expect(sample('observatory_honeypot_events_total', { tenant: 'metrics-site', class: 'BROWSER' })).toBe(3);
    expect(sample('observatory_honeypot_events_total', { tenant: 'metrics-site', class: 'LIAR' })).toBe(6);
    expect(sample('observatory_honeypot_tarpits_opened_total', { tenant: 'metrics-site' })).toBe(1);
    expect(sample('observatory_honeypot_tarpits_active')).toBe(1);
    expect(sample('observatory_ingest_refusals_total', { endpoint: 'ingestHoneypotEvents', reason: 'bad-signature' })).toBe(1);
    expect(sample('observatory_ingest_refusals_total', { endpoint: 'ingestHoneypotEvents', reason: 'unknown-tenant' })).toBe(1);
    expect(sample('observatory_empire_events_total', { toolset: 'metrics-lab', verification: 'signed' })).toBe(1);
    expect(sample('observatory_empire_events_total', { toolset: 'metrics-lab', verification: 'unsigned' })).toBe(1);
    expect(sample('observatory_empire_events_rejected_total', { reason: 'bad-signature' })).toBe(1);
    expect(sample('observatory_outbound_deliveries_total', { source: 'honeypot-rule', kind: 'webhook', outcome: 'delivered' })).toBe(1);
    expect(sample('observatory_outbound_deliveries_pending')).toBe(0);
  });

  it('reports the graph and rollup lag', () => {
    // Both were rolled a minute of the test clock ago (the graph reflects its sources up to its
    // settle margin before the run, so it lags a little more).
    const graphLag = sample('observatory_graph_lag_seconds', { kind: 'Fingerprint' })!;
    expect(graphLag).toBeGreaterThanOrEqual(60);
    expect(graphLag).toBeLessThanOrEqual(180);
    expect(sample('observatory_rollup_lag_seconds', { rollup: 'analytics' })).toBe(60);
    expect(sample('observatory_rollup_lag_seconds', { rollup: 'honeypot-dashboard' })).toBeGreaterThanOrEqual(0);
    expect(sample('observatory_fleet_gauge_failures_total')).toBe(0);
  });

  it('is refused to a token bound to toolsets: its series name every toolset', async () => {
    expect(scrape).toContain('toolset="metrics-lab"');
    const bound = await tokenBoundTo(t, ['read:dashboard'], ['other-lab']);
    const res = await t.call({ method: 'GET', url: '/metrics', token: bound });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ reason: 'forbidden' });
    expect(res.body).not.toContain('metrics-lab');
  });

  it('caps user-named label values', () => {
    const cap = labelCap(2);
    expect(['a', 'b', 'c', 'a', 'd', 'b'].map(cap)).toEqual(['a', 'b', OTHER_LABEL, 'a', OTHER_LABEL, 'b']);
    expect(MAX_LABEL_VALUES).toBe(200);
  });
});

describe('the Grafana dashboard (ops/grafana)', () => {
  it('references only metrics the service exposes', () => {
    const exposed = exposedSeries(scrape);
    const problems: string[] = [];
    let checked = 0;
    for (const { where, expr } of expressions()) {
      const names = metricNamesOf(expr);
      if (names.length === 0) problems.push(`${where}: no metric in ${expr}`);
      for (const name of names) {
        checked++;
        if (!exposed.has(name)) problems.push(`${where}: ${name} has no series in /metrics`);
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it('reads PromQL as the dashboard writes it', () => {
    expect(metricNamesOf('sum by (tenant) (rate(observatory_honeypot_events_total{class="LIAR",tenant=~"$tenant"}[$__rate_interval]))')).toEqual([
      'observatory_honeypot_events_total',
    ]);
    expect(metricNamesOf('histogram_quantile(0.99, sum by (le) (rate(a_bucket[5m]))) / on(job) group_left(x) b offset 1h')).toEqual(['a_bucket', 'b']);
    expect(metricNamesOf('label_values(observatory_empire_events_total, toolset)')).toEqual(['observatory_empire_events_total']);
    expect(() => metricNamesOf('sum(rate(x[5m])')).toThrow(/unbalanced/);
  });

  it('is a dashboard Grafana provisions from a file', () => {
    expect(dashboard.__inputs, 'a provisioned dashboard takes no import inputs').toBeUndefined();
    expect(dashboard.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(dashboard.title).toBe('Observatory');
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    // The data source is a variable, so the dashboard works with whatever Prometheus is provisioned.
    const datasource = dashboard.templating.list.find((v) => v.name === 'datasource');
    expect(datasource).toMatchObject({ type: 'datasource', query: 'prometheus' });
    const panels = allPanels(dashboard.panels);
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size, 'panel ids are unique').toBe(ids.length);
    for (const p of panels) {
      expect(Number.isInteger(p.id) && p.id > 0, `panel ${p.title}`).toBe(true);
      expect(p.gridPos.x + p.gridPos.w, `panel ${p.id} fits the 24-column grid`).toBeLessThanOrEqual(24);
      if (p.type === 'row') continue;
      expect(p.datasource, `panel ${p.id}`).toEqual({ type: 'prometheus', uid: '${datasource}' });
      const refIds = (p.targets ?? []).map((target) => target.refId);
      expect(refIds.length, `panel ${p.id} has queries`).toBeGreaterThan(0);
      expect(new Set(refIds).size, `panel ${p.id} refIds are unique`).toBe(refIds.length);
    }
    for (const v of dashboard.templating.list.filter((x) => x.type === 'query')) expect(v.datasource?.uid, `variable ${v.name}`).toBe('${datasource}');
    // Panels do not overlap.
    const cells = new Set<string>();
    for (const p of panels) {
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++) {
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          const cell = `${x},${y}`;
          expect(cells.has(cell), `panel ${p.id} overlaps another at ${cell}`).toBe(false);
          cells.add(cell);
        }
      }
    }
  });

  it('ships provisioning files Grafana reads', () => {
    const provider = parseYaml(readFileSync(PROVISIONING_FILE, 'utf8'));
    expect(provider.apiVersion).toBe(1);
    expect(provider.providers).toEqual([expect.objectContaining({ name: 'observatory', type: 'file', options: expect.objectContaining({ path: expect.any(String) }) })]);
    const datasources = parseYaml(readFileSync(DATASOURCE_FILE, 'utf8'));
    expect(datasources.apiVersion).toBe(1);
    expect(datasources.datasources).toEqual([expect.objectContaining({ type: 'prometheus' })]);
  });
});
