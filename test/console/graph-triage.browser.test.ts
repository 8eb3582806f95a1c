import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock.ts';
import { V1 } from '../helpers/app.ts';
import { browserSkipReason, type ConsoleRig, openPage, startConsoleRig } from './browser.ts';
import { SAVED_QUERY, seedGraph, seedTriage } from './graph-triage.seed.ts';

/**
 * The graph and triage pages in a real browser, over data sent the way honeypots and toolsets
 * send it: the graph's query box (an example picked, run, its rows and drawing, the query kept in
 * the address, saved queries), the materialiser and its lag; triage runs started from the page,
 * proposals accepted and rejected one by one and in bulk, replay, metrics and the budget, and
 * postmortems. Every action is checked through the API afterwards.
 */
const skip = browserSkipReason();
const clock = new ManualClock(new Date());
let rig: ConsoleRig;
let chain: string[] = [];

type Json = Record<string, any>;
async function api(method: 'GET' | 'POST', path: string): Promise<Json> {
  const res = await rig.t.call({ method, url: `${V1}/${path}` });
  expect(res.statusCode, `${method} ${path}: ${res.body}`).toBe(200);
  return res.json();
}
const proposals = async (query: string) => (await api('GET', `empire/triage/proposals?${query}`)).proposals as Json[];

beforeAll(async () => {
  if (skip) return;
  rig = await startConsoleRig({ clock });
  ({ chain } = await seedGraph(rig.t, clock));
  await seedTriage(rig.t, clock);
}, 240_000);
afterAll(() => rig?.close());

describe.skipIf(skip)('the graph page', () => {
  it('shows the materialised graph, its lag and the saved queries', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/graph');
    await expect(page.getByRole('heading', { name: 'Knowledge graph' }).isVisible()).resolves.toBe(true);
    const status = await api('GET', 'empire/graph/materialiser');
    expect(status.totals.nodes).toBeGreaterThan(5);
    await expect(page.locator('.kpi').first().textContent()).resolves.toContain(String(status.totals.nodes));
    await expect(page.getByRole('list', { name: 'Nodes by kind' }).textContent()).resolves.toMatch(/EmpireEvent\s*5/);
    const lag = page.getByRole('table').filter({ has: page.locator('caption', { hasText: 'Lag per node kind' }) });
    await expect(lag.textContent()).resolves.toMatch(/Fingerprint.*green/);
    const saved = page.getByRole('table').filter({ has: page.locator('caption', { hasText: 'Saved queries you can see' }) });
    await expect(saved.textContent()).resolves.toContain(SAVED_QUERY.name);
    await expect(page.getByText('No query has run yet').isVisible()).resolves.toBe(true);
    await rig.screenshot(page, 'graph-query-empty');
  });

  it('fills the box from an example, runs it, shows the rows and draws the graph, and keeps the query in the address', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/graph');
    await page.getByRole('button', { name: "An event's causes, three steps back" }).click();
    await expect(page.getByRole('textbox', { name: /^Query/ }).inputValue()).resolves.toContain("senderId: 'evt-000124'");
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.waitForURL(/[?&]q=MATCH/);
    const rows = page.getByRole('table').filter({ has: page.locator('caption', { hasText: 'Query rows' }) });
    // The three-step causes walk takes seconds on PGlite alone, and CI runs two browser files at
    // once on two cores: twice in one day it outlived the 15-s default.
    await rows.waitFor({ timeout: 60_000 });
    const text = await rows.textContent();
    for (const sender of ['evt-000121', 'evt-000122', 'evt-000123']) expect(text).toContain(sender);
    await expect(rows.locator('tbody tr').count()).resolves.toBe(3);
    // Sorting by a column puts the causes in order.
    await rows.getByRole('button', { name: /cause\.senderId/ }).click();
    await expect(rows.locator('tbody tr').first().textContent()).resolves.toContain('evt-000121');

    // The drawing: Cytoscape's canvases in the graph's box, which names the answer's nodes and edges.
    const drawing = page.getByRole('img', { name: /^Query graph: \d+ nodes, \d+ edges$/ });
    await drawing.locator('canvas').first().waitFor();
    const label = (await drawing.getAttribute('aria-label'))!;
    const [, nodes, edges] = /(\d+) nodes, (\d+) edges/.exec(label)!.map(Number) as [number, number, number];
    expect(nodes).toBeGreaterThanOrEqual(5); // evt-000124, its toolset and three causes
    expect(edges).toBeGreaterThanOrEqual(4);
    await expect(page.locator('.freshness').first().textContent()).resolves.toMatch(/As of .*graph-materialise/);
    await rig.screenshot(page, 'graph-query');

    // The address holds the query: a reload (or a shared link) answers the same.
    await page.reload();
    await page.getByRole('table').filter({ has: page.locator('caption', { hasText: 'Query rows' }) }).waitFor({ timeout: 60_000 });
    await expect(page.getByRole('textbox', { name: /^Query/ }).inputValue()).resolves.toContain("senderId: 'evt-000124'");
    await expect(page.locator('table', { has: page.locator('caption', { hasText: 'Query rows' }) }).locator('tbody tr').count()).resolves.toBe(3);
    expect(chain).toHaveLength(5);
  }, 150_000);

  it('says where a query is wrong', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/graph');
    await page.getByRole('textbox', { name: /^Query/ }).fill('MATCH (n RETURN n');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await expect(page.getByRole('alert').first().textContent()).resolves.toMatch(/line 1, column \d+: expected/);
  });

  it('saves the query in the box, and runs a saved query by name', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/graph');
    await page.getByRole('button', { name: 'Fingerprints seen on two tenants' }).click();
    await page.getByLabel('Name').fill('fingerprints-on-two-tenants');
    await page.getByLabel('Description').fill('GPTBot and friends');
    await page.getByRole('button', { name: 'Save the query in the box' }).click();
    await page.getByText('Saved “fingerprints-on-two-tenants”.').waitFor();
    const listed = (await api('GET', 'empire/graph/saved-queries')).rows as Json[];
    const mine = listed.find((r) => r.name === 'fingerprints-on-two-tenants');
    expect(mine).toMatchObject({ description: 'GPTBot and friends', visibility: 'private', runCount: 0 });
    expect(mine!.query).toContain('(f)-[:SEEN_ON]->(b:Tenant)');
    await page.getByRole('cell', { name: /^fingerprints-on-two-tenants/ }).waitFor();

    await page.getByRole('button', { name: `Run saved query ${SAVED_QUERY.name}` }).click();
    await page.waitForURL(/[?&]saved=tenants-per-fingerprint/);
    const rows = page.locator('table', { has: page.locator('caption', { hasText: 'Query rows' }) });
    await rows.waitFor();
    // GPTBot's fingerprint on both tenants; the browser's on one.
    await expect(rows.textContent()).resolves.toMatch(/2/);
    await expect(page.getByRole('textbox', { name: /^Query/ }).inputValue()).resolves.toBe(SAVED_QUERY.query);
    const after = ((await api('GET', 'empire/graph/saved-queries')).rows as Json[]).find((r) => r.name === SAVED_QUERY.name);
    expect(after!.runCount).toBe(1);
    await rig.screenshot(page, 'graph-saved-query');
  });

  it('materialises on demand and replays a run against the sources', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/graph');
    const before = (await api('GET', 'empire/graph/materialiser')).recentRuns.length as number;
    await page.getByRole('button', { name: 'Materialise now' }).click();
    await expect.poll(async () => (await api('GET', 'empire/graph/materialiser')).recentRuns.length).toBe(before + 1);
    const runs = page.locator('table', { has: page.locator('caption', { hasText: 'Recent materialiser runs' }) });
    await expect.poll(() => runs.locator('tbody tr').count()).toBe(before + 1);
    await runs.getByRole('button', { name: /^Replay the run of/ }).first().click();
    await page.getByText('The sources still give exactly the graph this run stored.').waitFor();
    await rig.screenshot(page, 'graph-replay');
  });
});

describe.skipIf(skip)('the triage pages', () => {
  let spikeId = '';
  let floodId = '';
  let incidentId = '';

  it('runs the incident classifier from the runs page, and replays the run', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/triage/runs');
    await page.getByRole('button', { name: 'Run the classifier' }).click();
    const result = page.getByRole('status').filter({ hasText: 'stored pending' }).first();
    await result.waitFor();
    const pending = await proposals('kind=incident');
    const spike = pending.find((p) => p.payload?.signal === 'rate-spike' && p.toolset === 'spike-kit');
    const flood = pending.find((p) => p.payload?.signal === 'liar-flood');
    expect(spike, JSON.stringify(pending.map((p) => p.title))).toBeDefined();
    expect(flood).toBeDefined();
    spikeId = spike!.id;
    floodId = flood!.id;
    await expect(result.textContent()).resolves.toContain(`${pending.filter((p) => p.runId === spike!.runId).length} proposals stored pending`);

    await result.getByRole('button', { name: 'Replay it' }).click();
    await page.waitForURL(new RegExp(`run=${spike!.runId}`));
    await page.getByText('digest matches').waitFor();
    await expect(page.locator('dl.facts').first().textContent()).resolves.toContain('incident-classifier@1.1.0');
    await rig.screenshot(page, 'triage-runs');
  });

  it('proposes rules and investigations from the runs page and lists them', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/triage/runs');
    await page.getByLabel('Look back (days)').fill('7');
    await page.getByRole('button', { name: 'Propose rules' }).click();
    await page.getByRole('status').filter({ hasText: 'stored pending' }).first().waitFor();
    const rules = (await api('GET', 'empire/triage/rules')).proposals as Json[];
    expect(rules.map((r) => r.toolset)).toContain('billing-kit');
    const ruleTable = page.locator('table', { has: page.locator('caption', { hasText: 'Rule proposals' }) });
    await expect.poll(() => ruleTable.textContent()).toContain(rules[0]!.title);

    await page.getByRole('button', { name: 'Propose investigations' }).click();
    await expect.poll(async () => ((await api('GET', 'empire/triage/investigations')).proposals as Json[]).length).toBeGreaterThan(0);
    const investigations = (await api('GET', 'empire/triage/investigations')).proposals as Json[];
    const invTable = page.locator('table', { has: page.locator('caption', { hasText: 'Investigation proposals' }) });
    await expect.poll(() => invTable.textContent()).toContain(investigations[0]!.title);
    await rig.screenshot(page, 'triage-runs-proposals');
  });

  it('lists the pending proposals in the inbox with filters in the address', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/triage');
    const table = page.locator('table', { has: page.locator('caption', { hasText: 'Proposals, newest first' }) });
    const pending = await proposals('');
    expect(pending.length).toBeGreaterThanOrEqual(4);
    await expect(table.locator('tbody tr').count()).resolves.toBe(pending.length);
    for (const p of pending) await expect(table.textContent()).resolves.toContain(p.title);
    await rig.screenshot(page, 'triage-inbox');

    await page.getByLabel('Kind', { exact: true }).selectOption('incident');
    await page.waitForURL(/kind=incident/);
    await expect.poll(() => table.locator('tbody tr').count()).toBe(pending.filter((p) => p.kind === 'incident').length);
    await page.reload();
    await expect(page.getByLabel('Kind', { exact: true }).inputValue()).resolves.toBe('incident');
  });

  it('accepts an incident proposal on its page: the incident opens', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/triage?kind=incident');
    await page.getByRole('link', { name: /^Rate spike: spike-kit/ }).first().click();
    await page.waitForURL(new RegExp(`proposal\\?id=${spikeId}`));
    await page.getByText('Proposed incident').waitFor();
    await expect(page.locator('main').textContent()).resolves.toContain('rate-spike');
    await rig.screenshot(page, 'triage-proposal');
    await page.getByLabel('Decision notes').fill('Confirmed in the browser.');
    await page.getByRole('group', { name: 'Decide this proposal' }).getByRole('button', { name: 'Accept' }).click();
    await page.getByText('1 accepted.').waitFor();

    const { proposal } = await api('GET', `empire/triage/proposals/${spikeId}`);
    expect(proposal).toMatchObject({ status: 'accepted', decisionNotes: 'Confirmed in the browser.' });
    incidentId = proposal.openedIncidentId;
    expect(incidentId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await api('GET', `empire/incidents/${incidentId}`)).incident).toMatchObject({ source: 'triage', toolset: 'spike-kit' });
    await page.getByRole('link', { name: 'its postmortem' }).waitFor();
  });

  it('rejects selected proposals in bulk', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/triage?kind=incident');
    await page.getByRole('checkbox', { name: /^Select Liar flood: docs-mirror/ }).check();
    await page.getByRole('button', { name: 'Reject selected (1)' }).click();
    await page.getByText('1 rejected.').waitFor();
    expect((await api('GET', `empire/triage/proposals/${floodId}`)).proposal.status).toBe('rejected');
  });

  it('accepts an investigation from its row: a saved view appears', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/triage?kind=investigation');
    const [first] = (await proposals('kind=investigation')) as Json[];
    await page.getByRole('button', { name: `Accept ${first!.title}` }).click();
    await page.getByText('1 accepted.').waitFor();
    const { proposal } = await api('GET', `empire/triage/proposals/${first!.id}`);
    expect(proposal.status).toBe('accepted');
    const views = page.locator('table', { has: page.locator('caption', { hasText: 'Saved investigation views' }) });
    await page.reload();
    await expect.poll(() => views.textContent()).toContain(first!.payload.name);
  });

  it('bulk-accepts the rule proposals with a destination: each becomes an alert rule', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/triage?kind=alert-rule');
    const rules = await proposals('kind=alert-rule');
    expect(rules.length).toBeGreaterThan(0);
    await page.getByLabel(/Select every pending proposal listed/).check();
    await page.getByLabel('Destination URL').fill('https://hooks.example.net/triage-console');
    await page.getByLabel('Signing secret').fill('whsec-console-0123456789');
    await rig.screenshot(page, 'triage-inbox-rules');
    await page.getByRole('button', { name: `Accept selected (${rules.length})` }).click();
    await page.getByText(`${rules.length} accepted.`).waitFor();
    for (const rule of rules) {
      const { proposal } = await api('GET', `empire/triage/proposals/${rule.id}`);
      expect(proposal.status).toBe('accepted');
      expect(proposal.createdAlertRuleId).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(((await api('GET', 'empire/billing-kit/alerts')).rules as Json[]).length).toBeGreaterThan(0);
  });

  it('shows the postmortem the accepted proposal seeded, and drafts and stores a new one', async () => {
    const page = await rig.page();
    await openPage(page, `/empire/triage/postmortems?incident=${incidentId}`);
    const seeded = (await api('GET', `empire/incidents/${incidentId}/postmortem`)).postmortem;
    expect(seeded.source).toBe('proposal');
    await page.getByRole('heading', { name: seeded.draft.title }).first().waitFor();
    await expect(page.getByText('Seeded from the accepted incident proposal').isVisible()).resolves.toBe(true);
    await rig.screenshot(page, 'triage-postmortems');

    await page.getByLabel('Operator notes').fill('Spike came from a re-crawl.');
    await page.getByRole('button', { name: 'Draft the postmortem' }).click();
    await page.getByText('Drafted and stored.').waitFor();
    const stored = (await api('GET', `empire/incidents/${incidentId}/postmortem`)).postmortem;
    expect(stored.source).toBe('auto-draft');
    await expect.poll(() => page.getByText('Stored from an auto-draft').count()).toBe(1);
    await page.getByRole('heading', { name: stored.draft.title }).first().waitFor();
  });

  it('shows the agents\' trust metrics and the budget with its burn, and sets a budget', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/triage/metrics');
    const { agents } = await api('GET', 'empire/triage/metrics');
    const classifier = (agents as Json[]).find((a) => a.agentVersion === 'incident-classifier@1.1.0')!;
    expect(classifier).toMatchObject({ accepted: 1, rejected: 1 });
    const table = page.locator('table', { has: page.locator('caption', { hasText: 'Per agent and version' }) });
    const row = table.locator('tbody tr', { hasText: 'incident-classifier@1.1.0' });
    await expect(row.textContent()).resolves.toContain(`${classifier.proposals}`);
    await expect(row.textContent()).resolves.toContain('50%');
    const budget = page.locator('table', { has: page.locator('caption', { hasText: 'Budget buckets' }) });
    await expect(budget.textContent()).resolves.toContain('$100.00');
    await expect(budget.getByRole('img', { name: /% spent with \d+% of the month gone/ }).count()).resolves.toBe(1);
    await rig.screenshot(page, 'triage-metrics');

    await page.getByLabel(/^Budget for \d{4}-\d{2} \(US dollars\)/).fill('250');
    await page.getByRole('button', { name: 'Set the budget' }).click();
    await page.getByText(/\* in \d{4}-\d{2}: \$250\.00/).waitFor();
    const { budgets } = await api('GET', 'empire/triage/budget');
    expect((budgets as Json[]).find((b) => b.toolset === '*')).toMatchObject({ budgetUsdCents: 25_000 });
    await expect.poll(() => budget.textContent()).toContain('$250.00');
  });

  it('shows a reader without write:alerts the proposals but no actions', async () => {
    const token = await rig.t.tokenWith(['read:empire']);
    const page = await rig.page({ token });
    await openPage(page, '/empire/triage?status=all');
    const table = page.locator('table', { has: page.locator('caption', { hasText: 'Proposals, newest first' }) });
    await expect(table.textContent()).resolves.toContain('Rate spike: spike-kit');
    await expect(page.getByRole('button', { name: /^(Accept|Reject)/ }).count()).resolves.toBe(0);
    await openPage(page, '/empire/triage/runs');
    await expect(page.getByRole('button', { name: 'Run the classifier' }).count()).resolves.toBe(0);
    await openPage(page, '/empire/graph');
    await expect(page.getByRole('button', { name: 'Materialise now' }).count()).resolves.toBe(0);
  });

  it('reads well in a narrow window', async () => {
    const page = await rig.page({ width: 420 });
    await openPage(page, '/empire/triage?status=all');
    await page.locator('table', { has: page.locator('caption', { hasText: 'Proposals, newest first' }) }).waitFor();
    await rig.screenshot(page, 'triage-inbox-narrow');
    await openPage(page, '/empire/graph');
    await rig.screenshot(page, 'graph-query-narrow');
  });
});
