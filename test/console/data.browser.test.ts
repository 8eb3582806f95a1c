import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { closedPort } from '../helpers/http-receiver.ts';
import { ADMIN_TOKEN, V1 } from '../helpers/app.ts';
import { browserSkipReason, type ConsoleRig, elementsPastTheWindow, openPage, startConsoleRig } from './browser.ts';
import { SEEDED, seedData } from './data.seed.ts';

/**
 * The analytics, cost, backups and audit pages in a real browser, over data seeded through the API
 * and rolled up by the jobs: each page shows it; a budget is set, cost alerts acknowledged and
 * resolved, a snapshot taken and verified, a drill run and an error drill resolved, a toolset
 * registered and checked (a second instance of the service on a known port is the peer), and an
 * audit fact's inclusion proof checked in the page — and refused when the answer is tampered with.
 */
const skip = browserSkipReason();
const BRIDGE_TOKEN = 'bridge-token-console-0123456789abcdefghij';
let rig: ConsoleRig;
let peerPort = 0;
const extraApps: App[] = [];

type Json = Record<string, any>;
async function get(url: string, query?: Record<string, string>): Promise<Json> {
  const res = await rig.t.call({ method: 'GET', url: `${V1}${url}`, ...(query ? { query } : {}) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
const text = (page: Page, selector: string) => page.locator(selector).innerText();

/** Holds the answer to `method url` back for a moment, so the progress indicator is seen whatever the machine's speed. */
async function slowDown(page: Page, method: string, pattern: RegExp, ms = 800): Promise<void> {
  await page.route(pattern, async (route) => {
    if (route.request().method() !== method) return route.fallback();
    const response = await route.fetch();
    await new Promise((resolve) => setTimeout(resolve, ms));
    await route.fulfill({ response });
  });
}

beforeAll(async () => {
  if (skip) return;
  peerPort = await closedPort();
  rig = await startConsoleRig({
    env: {
      OBSERVATORY_BRIDGE_TOKEN: BRIDGE_TOKEN,
      OBSERVATORY_BRIDGE_PEER_HOSTS: '127.0.0.1',
      OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
      OBSERVATORY_OUTBOUND_ALLOWED_PORTS: String(peerPort),
      OBSERVATORY_CROSS_TOOLSET_TIMEOUT_MS: '120000',
    },
  });
  await seedData(rig.t);
}, 240_000);
afterAll(async () => {
  for (const app of extraApps) await app.close();
  await rig?.close();
});

describe.skipIf(skip)('analytics and cost pages', () => {
  it('charts a metric from the warehouse, grouped by a dimension, and shows the cohort', async () => {
    const page = await rig.page();
    await openPage(page, '/analytics?metric=honeypot.events&days=7');
    const total = Object.values(SEEDED.honeypotEvents).reduce((a, b) => a + b, 0);
    const chart = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Honeypot events per day' }) });
    await expect(chart.locator('.kpi .value').first().innerText()).resolves.toBe(String(total));
    await expect(chart.getByRole('img', { name: 'Honeypot events per day' }).count()).resolves.toBe(1);

    // The box follows the address, which React Router changes in a transition: click, then wait
    // for the address (check() would look at the box before the transition lands).
    await chart.getByLabel('workspaceId').click();
    await page.waitForURL(/dims=workspaceId/);
    await expect.poll(() => chart.getByLabel('workspaceId').isChecked()).toBe(true);
    await page.waitForFunction(() => document.querySelectorAll('[aria-busy="true"]').length === 0);
    await chart.getByText(/The numbers/).click();
    const numbers = chart.getByRole('table', { name: 'honeypot.events per day' });
    for (const [slug, count] of Object.entries(SEEDED.honeypotEvents)) {
      await expect.poll(() => numbers.innerText(), { timeout: 10_000 }).toMatch(new RegExp(`${slug}\\s+${count}\\s`));
    }

    // The metric list names every metric the API lists; picking cost.spend ("Cost") charts the seeded spend.
    const metrics = (await get('/analytics/metrics')).metrics as { key: string; title: string }[];
    const list = page.getByRole('table', { name: 'Metrics the warehouse keeps' });
    for (const m of metrics.slice(0, 10)) await expect(list.innerText()).resolves.toContain(m.key);
    await page.getByRole('button', { name: 'Chart Cost', exact: true }).click();
    await page.waitForURL(/metric=cost\.spend/);
    await page.waitForFunction(() => document.querySelectorAll('[aria-busy="true"]').length === 0);
    const spend = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Cost per day' }) });
    // The previous metric's figures stay on screen until the new answer arrives: wait for it, not for the first paint.
    await expect.poll(() => spend.locator('.kpi .value').first().innerText(), { timeout: 15_000 }).toBe('$16.248878');

    // The cohort: the page shows what the API answers for the same range, and it is not empty.
    const cohort = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Cohort retention' }) });
    const from = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
    const to = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const answer = await get('/analytics/cohort', { key: 'developer-token-7d', from, to });
    expect(answer.cohortSize).toBeGreaterThan(0);
    await expect(cohort.innerText()).resolves.toContain(`${answer.cohortSize} members`);
    await expect(cohort.getByRole('table').innerText()).resolves.toMatch(new RegExp(`0\\s+${answer.buckets[0].eligible}\\s+${answer.buckets[0].retained}\\s`));
    await openPage(page, '/analytics?metric=honeypot.events&days=7');
    await rig.screenshot(page, 'data-analytics');
  });

  it('shows spend, the budget burn and its alerts; acknowledges and resolves alerts and sets a budget', async () => {
    const page = await rig.page();
    await openPage(page, '/cost?days=7');
    const rollup = page.getByRole('table', { name: 'Spend by toolset' });
    await expect(rollup.innerText()).resolves.toMatch(new RegExp(`crawler-lab\\s+\\$${SEEDED.cost.crawlerLabUsd.replace('.', '\\.')}`));
    await expect(rollup.innerText()).resolves.toContain('probe-kit');
    await expect(page.getByRole('img', { name: 'Daily spend of crawler-lab' }).count()).resolves.toBe(1);

    const budgets = page.getByRole('table', { name: "Budgets with this month's burn (UTC)" });
    await expect(budgets.innerText()).resolves.toMatch(/crawler-lab[\s\S]*\$10\.00[\s\S]*\$12\.748878[\s\S]*127\.48%/);

    // The evaluator opened one alert per threshold crossed: 50, 80 and 100 %.
    const alerts = page.getByRole('table', { name: 'Cost alerts' });
    await expect(page.getByRole('heading', { name: 'Cost alerts (3 open)' }).count()).resolves.toBe(1);
    await alerts.getByRole('button', { name: 'Acknowledge the 50% alert of crawler-lab' }).click();
    await alerts.getByRole('button', { name: 'Acknowledge the 50% alert of crawler-lab' }).waitFor({ state: 'detached' });
    await alerts.getByRole('button', { name: 'Resolve the 80% alert of crawler-lab' }).click();
    await page.getByRole('heading', { name: 'Cost alerts (1 open)' }).waitFor();
    const byThreshold = Object.fromEntries(((await get('/cost/alerts', { status: 'all' })).alerts as Json[]).map((a) => [a.thresholdPct, a]));
    expect(byThreshold[50]).toMatchObject({ status: 'acknowledged', ackedBy: 'admin' });
    expect(byThreshold[80]).toMatchObject({ status: 'resolved' });
    expect(byThreshold[100]).toMatchObject({ status: 'open' });

    const form = page.getByRole('form', { name: 'Set a budget' });
    await form.getByLabel('Scope').selectOption('empire');
    await form.getByLabel('Monthly budget (USD)').fill('250');
    await form.getByLabel('Alert at (% of the budget)').fill('75, 90');
    await form.getByRole('button', { name: 'Save the budget' }).click();
    await page.getByText('Budget of empire * set to $250.00').waitFor();
    const empire = ((await get('/cost/budgets')).budgets as Json[]).find((b) => b.scope === 'empire');
    expect(empire).toMatchObject({ scopeKey: '*', monthlyUsd: 250, alertAtPct: [75, 90], observedUsd: 16.248878 });
    // The list reloads after the save.
    await expect.poll(() => budgets.innerText(), { timeout: 10_000 }).toContain('$250.00');
    await page.getByRole('button', { name: 'all', exact: true }).click();
    await page.waitForURL(/alerts=all/);
    await page.waitForFunction(() => document.querySelectorAll('[aria-busy="true"]').length === 0);
    await rig.screenshot(page, 'data-cost');
  });
});

describe.skipIf(skip)('backups pages', () => {
  it('takes a snapshot through the page (progress, then listed) and verifies it by restoring it', async () => {
    const page = await rig.page();
    await openPage(page, '/backups');
    await expect(page.getByText('No snapshots yet').count()).resolves.toBe(1);

    await slowDown(page, 'POST', /\/backups\/snapshots$/);
    await page.getByRole('button', { name: 'Take a snapshot now' }).click();
    await page.getByRole('status').filter({ hasText: 'Taking a snapshot' }).waitFor();
    await page.getByText(/^Snapshot taken:/).waitFor({ timeout: 120_000 });
    const [snapshot] = (await get('/backups/snapshots')).snapshots as Json[];
    expect(snapshot).toMatchObject({ source: 'manual' });
    const table = page.getByRole('table', { name: 'Backup snapshots, newest first' });
    await expect(table.innerText()).resolves.toContain(snapshot!.fileSha256.slice(0, 12));

    await slowDown(page, 'POST', /\/backups\/verify$/);
    await table.getByRole('button', { name: `Verify the snapshot taken ${snapshot!.takenAt}` }).click();
    await page.getByRole('status').filter({ hasText: 'Verifying the snapshot' }).waitFor();
    const result = page.getByRole('status', { name: 'Verification result' });
    await result.waitFor({ timeout: 120_000 });
    await expect(result.innerText()).resolves.toMatch(/ok in [\d.]+ s — it restores/);
    const ladder = await get('/backups/ladder');
    expect(ladder.rows[0]).toMatchObject({ snapshotId: snapshot!.id, outcome: 'ok', trigger: 'manual' });
    await page.getByRole('table', { name: 'Restore verifications, newest first' }).getByText('manual').waitFor();
    await expect(text(page, '.kpis')).resolves.toContain('observatory');
    await rig.screenshot(page, 'data-backups');
  }, 240_000);

  it('runs a drill through the page, and resolves an error drill with a note', async () => {
    const page = await rig.page();
    await openPage(page, '/backups/drills');
    await slowDown(page, 'POST', /\/backups\/drills\/run$/);
    await page.getByRole('button', { name: 'Run a drill now' }).click();
    await page.getByRole('status').filter({ hasText: 'Running a drill' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Running a drill' }).waitFor({ state: 'detached', timeout: 120_000 });
    const [ran] = (await get('/backups/drills')).drills as Json[];
    expect(ran).toMatchObject({ trigger: 'manual', actor: 'admin' });
    expect(['ok', 'drift']).toContain(ran!.outcome);
    const drills = page.getByRole('table', { name: 'Region failover drills, newest first' });
    await expect(drills.innerText()).resolves.toContain('manual (admin)');

    // An instance whose backup directory cannot be read or created: its drill cannot restore (or
    // take) a snapshot, and ends in error.
    const broken = await rig.t.secondInstance({ OBSERVATORY_BACKUP_DIR: '/dev/null/backups', OBSERVATORY_DRILL_DATA_LOSS_TARGET_SEC: '60' });
    extraApps.push(broken);
    const res = await broken.server.inject({ method: 'POST', url: `${V1}/backups/drills/run`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    const failed = res.json().drill as Json;
    expect(failed.outcome).toBe('error');

    await openPage(page, '/backups/drills');
    await expect(drills.innerText()).resolves.toContain(failed.errorText);
    const resolve = page.getByRole('form', { name: `Resolve drill ${failed.id}` });
    await resolve.getByLabel('What was found and done').fill('Backup directory fixed on the broken instance.');
    await resolve.getByRole('button', { name: 'Resolve' }).click();
    await resolve.waitFor({ state: 'detached' });
    const after = ((await get('/backups/drills')).drills as Json[]).find((d) => d.id === failed.id);
    expect(after).toMatchObject({ resolvedBy: 'admin', resolveNote: 'Backup directory fixed on the broken instance.' });
    await expect(drills.innerText()).resolves.toContain('Backup directory fixed on the broken instance.');
    await rig.screenshot(page, 'data-backups-drills');
  }, 240_000);

  it('registers a toolset through the form, checks it (the peer restores its newest snapshot) and removes it', async () => {
    const peer = await rig.t.secondInstance();
    extraApps.push(peer);
    await peer.server.listen({ port: peerPort, host: '127.0.0.1' });

    const page = await rig.page();
    await openPage(page, '/backups/cross-toolset');
    await expect(page.getByText('No toolsets registered yet').count()).resolves.toBe(1);
    const form = page.getByRole('form', { name: 'Register a toolset' });
    await form.getByLabel('Toolset name').fill('crawler-lab');
    await form.getByLabel('Bridge verify URL').fill(`http://127.0.0.1:${peerPort}${V1}/backups/bridge/verify`);
    await form.getByLabel('Database').fill('observatory');
    await form.getByRole('button', { name: 'Register' }).click();
    await page.getByText('crawler-lab registered.').waitFor();
    expect(((await get('/backups/toolsets')).toolsets as Json[]).map((t) => t.toolset)).toEqual(['crawler-lab']);
    await page.getByRole('table', { name: 'Cross-toolset restore, one row per toolset' }).getByText('skipped').waitFor();

    await slowDown(page, 'POST', /\/backups\/cross-toolset\/verify$/);
    await page.getByRole('button', { name: 'Check every toolset now' }).click();
    await page.getByRole('status').filter({ hasText: 'Asking every toolset' }).waitFor();
    await page.getByText('Overall ok').or(page.getByText(/^Overall green/)).waitFor({ timeout: 120_000 });
    const view = await get('/backups/cross-toolset');
    expect(view).toMatchObject({ overall: 'green', rows: [{ toolset: 'crawler-lab', outcome: 'ok', badge: 'green' }] });
    await expect(page.getByRole('table', { name: 'Cross-toolset restore, one row per toolset' }).innerText()).resolves.toMatch(/crawler-lab\s+green\s+ok\s+observatory/);
    await expect(page.getByRole('table', { name: 'Toolsets of the cross-toolset restore view' }).innerText()).resolves.toContain(`127.0.0.1:${peerPort}`);
    await rig.screenshot(page, 'data-backups-cross-toolset');

    // Removing asks for confirmation first, then the registration is gone.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Remove crawler-lab' }).click();
    await page.getByText('No toolsets registered: register').waitFor();
    expect((await get('/backups/toolsets')).toolsets).toEqual([]);
  }, 240_000);
});

describe.skipIf(skip)('audit chain page', () => {
  it('lists the facts, and checks a fact\'s inclusion proof in the page', async () => {
    const listed = await get('/audit/chain', { limit: '500' });
    const tenantFact = ((listed.facts as Json[]).filter((f) => f.source === 'OperatorAudit')).at(-3)!;
    const answer = await get(`/audit/chain/${tenantFact.seqNo}`);

    const page = await rig.page();
    await openPage(page, '/audit');
    const table = page.getByRole('table', { name: 'Audit facts, highest seqNo first' });
    await expect(table.innerText()).resolves.toContain(listed.facts[0].entryHash.slice(0, 12));
    await expect(page.getByText(`Head: fact ${listed.head.seqNo}`).count()).resolves.toBe(1);

    await table.getByRole('button', { name: `Open fact ${tenantFact.seqNo} and check its proof` }).click();
    await page.waitForURL(new RegExp(`fact=${tenantFact.seqNo}`));
    await page.getByText('Proof verified in this browser').waitFor();
    await expect(text(page, '[data-testid="recomputed-root"]')).resolves.toBe(answer.proof.rootHash);
    await expect(text(page, '[data-testid="published-root"]')).resolves.toBe(answer.proof.rootHash);
    await page.getByLabel('A root you trust for this tree size (optional)').fill(answer.proof.rootHash);
    await page.getByText('The recomputed root equals the root you trust.').waitFor();
    await rig.screenshot(page, 'data-audit');

    // The service's word is not trusted: the same answer with one payload field changed on its
    // way to the browser does not verify, and the page shows the two roots differ.
    await page.route(new RegExp(`/audit/chain/${tenantFact.seqNo}$`), async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      body.fact.payload.target = 'tampered-in-transit';
      await route.fulfill({ response, json: body });
    });
    await page.reload();
    await page.getByText('Proof does NOT verify').waitFor();
    const recomputed = await text(page, '[data-testid="recomputed-root"]');
    expect(recomputed).toMatch(/^[0-9a-f]{64}$/);
    expect(recomputed).not.toBe(answer.proof.rootHash);
    await expect(text(page, '[data-testid="published-root"]')).resolves.toBe(answer.proof.rootHash);
    await expect(page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).resolves.toBeLessThanOrEqual(0);
    await rig.screenshot(page, 'data-audit-tampered');
  });

  it('filters by source and kind in the address, and walks the whole chain on the server with progress', async () => {
    const page = await rig.page();
    // The evaluator's seeded alerts: one fact per threshold crossed.
    await openPage(page, '/audit?source=CostAlert&kind=cost-alert-fired');
    const facts = (await get('/audit/chain', { source: 'CostAlert', kind: 'cost-alert-fired' })).facts as Json[];
    expect(facts).toHaveLength(3);
    await expect(page.getByLabel('Kind').inputValue()).resolves.toBe('cost-alert-fired');
    const table = page.getByRole('table', { name: 'Audit facts, highest seqNo first' });
    await expect(table.locator('tbody tr').count()).resolves.toBe(facts.length);

    const before = (await get('/audit/chain', { limit: '1' })).head.seqNo as string;
    await slowDown(page, 'POST', /\/audit\/chain\/verify$/);
    await page.getByRole('button', { name: 'Verify the whole chain' }).click();
    await page.getByRole('status').filter({ hasText: 'Walking the chain' }).waitFor();
    await page.getByText('Chain intact').waitFor();
    await expect(page.getByRole('status').filter({ hasText: 'facts walked' }).innerText()).resolves.toContain(`${Number(before).toLocaleString('en-GB')} facts walked`);
    const last = (await get('/audit/chain', { limit: '1' })).facts[0];
    expect(last).toMatchObject({ kind: 'operator', actor: 'admin' });
  });
});

describe.skipIf(skip)('in a narrow window', () => {
  it('every page fits 420 pixels without scrolling sideways (wide tables scroll inside their box)', async () => {
    const page = await rig.page({ width: 420 });
    for (const path of ['/analytics', '/cost', '/backups', '/backups/drills', '/backups/cross-toolset', '/audit?fact=3']) {
      await openPage(page, path);
      if (path.startsWith('/audit')) await page.getByText('Proof verified in this browser').waitFor();
      const wide = await elementsPastTheWindow(page);
      expect(wide, path).toEqual([]);
    }
    await rig.screenshot(page, 'data-audit-narrow');
  });
});
