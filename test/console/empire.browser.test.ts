import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V1 } from '../helpers/app.ts';
import { nodeKeyPair } from '../helpers/empire.ts';
import { browserSkipReason, type ConsoleRig, openPage, startConsoleRig } from './browser.ts';
import { CRAWL_EVENTS, CRAWL_REQUESTS, CRAWL_RULE, consoleClock, type EmpireSeed, seedEmpire, SURGE_EVENTS_24H } from './empire.seed.ts';

/**
 * The empire and provenance pages in a real browser, over data seeded through the API: what each
 * page shows, and the actions they offer (incidents, forecasts, alert rules, keys, policy).
 */
const skip = browserSkipReason();
let rig: ConsoleRig;
let seed: EmpireSeed;
const clock = consoleClock();

const json = async <T = Record<string, unknown>>(url: string): Promise<T> => {
  const res = await rig.t.call({ method: 'GET', url });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<T>();
};

beforeAll(async () => {
  if (skip) return;
  rig = await startConsoleRig({ clock });
  seed = await seedEmpire(rig.t, clock);
}, 240_000);
afterAll(() => rig?.close());

describe.skipIf(skip)('empire pages', () => {
  it('overview: every toolset with its counts and a sparkline of the last 24 hours', async () => {
    const page = await rig.page();
    await openPage(page, '/empire');
    const table = page.getByRole('table', { name: 'Toolsets and their last 24 hours' });
    const crawl = table.getByRole('row').filter({ hasText: 'crawler-lab' });
    await expect(crawl.getByRole('cell').nth(2).textContent()).resolves.toBe(String(CRAWL_EVENTS));
    const surge = table.getByRole('row').filter({ hasText: 'surge-lab' });
    await expect(surge.getByRole('cell').nth(2).textContent()).resolves.toBe(String(SURGE_EVENTS_24H));
    // The sparkline names its 24 values; surge-lab's last complete hours are its surge.
    const spark = await surge.getByRole('img').getAttribute('aria-label');
    expect(spark).toMatch(/surge-lab, events per hour over the last 24 hours: (\d+, ){23}\d+$/);
    expect(spark).toContain('4, 20, 20, 20, 0');
    await expect(table.getByRole('row').filter({ hasText: 'probe-kit' }).count()).resolves.toBe(1);
    await rig.screenshot(page, 'empire-overview');
    await crawl.getByRole('link', { name: 'crawler-lab' }).click();
    await page.waitForURL(/\/console\/empire\/toolset\?toolset=crawler-lab/);
  });

  it('toolset dashboard: KPIs, events per hour drawn, event types and tenants; the window in the address', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/toolset?toolset=crawler-lab');
    await expect(page.getByRole('heading', { name: 'Toolset crawler-lab' }).isVisible()).resolves.toBe(true);
    await expect(page.locator('.kpi').filter({ hasText: /^[\d,.]+Events$/ }).locator('.value').textContent()).resolves.toBe(String(CRAWL_EVENTS));
    await expect(page.locator('figure.chart canvas').count()).resolves.toBeGreaterThan(0);
    await expect(page.getByRole('list', { name: 'Event types' }).textContent()).resolves.toMatch(/crawl\.page.*crawl\.started|crawl\.started.*crawl\.page/);
    const tenants = await page.getByRole('list', { name: 'Source tenants' }).textContent();
    expect(tenants).toContain('docs-mirror');
    expect(tenants).toContain('acme');
    await page.getByRole('button', { name: '7d' }).click();
    await page.waitForURL(/window=7d/);
    await page.getByLabel('Source tenant', { exact: true }).fill('acme');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/tenant=acme/);
    await openPage(page, '/empire/toolset?toolset=crawler-lab&tenant=acme&window=7d');
    // 4 of the 12 signed batches (2 events each) named acme.
    await expect(page.locator('.kpi').filter({ hasText: /^[\d,.]+Events$/ }).locator('.value').textContent()).resolves.toBe('8');
    await openPage(page, '/empire/toolset?toolset=crawler-lab');
    await rig.screenshot(page, 'empire-toolset');
    // Without a toolset in the address the first by name is shown.
    await openPage(page, '/empire/toolset');
    await expect(page.getByRole('heading', { name: 'Toolset crawler-lab' }).isVisible()).resolves.toBe(true);
  });

  it('lineage: an event id typed into the form, its causes and effects drawn as a graph and listed', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/lineage');
    await expect(page.getByText('Enter an event id').isVisible()).resolves.toBe(true);
    await page.getByLabel('Event id').fill(seed.lineage['crawl-root']);
    await page.getByRole('button', { name: 'Show lineage' }).click();
    await page.waitForURL(new RegExp(`event=${seed.lineage['crawl-root']}`));
    await page.waitForFunction(() => document.querySelectorAll('main .graph canvas').length > 0);
    await expect(page.locator('main .graph').getAttribute('aria-label')).resolves.toBe('Lineage of crawl-root: 4 nodes, 3 edges');
    const rows = page.getByRole('table', { name: 'Events in the lineage' }).locator('tbody tr');
    await expect(rows.count()).resolves.toBe(4);
    await expect(rows.allTextContents()).resolves.toEqual([
      expect.stringMatching(/^focal0crawl\.startedcrawl-root—crawler-lab/),
      expect.stringMatching(/^downstream1crawl\.pagecrawl-page-[12]crawl-root/),
      expect.stringMatching(/^downstream1crawl\.pagecrawl-page-[12]crawl-root/),
      expect.stringMatching(/^downstream2crawl\.finishedcrawl-donecrawl-page-1/),
    ]);
    await rig.screenshot(page, 'empire-lineage');

    // An event of the walk opens its own lineage: crawl-done has two causes upstream.
    await rows.filter({ hasText: 'crawl-done' }).getByRole('link', { name: 'crawl-done' }).click();
    await page.waitForURL(new RegExp(`event=${seed.lineage['crawl-done']}`));
    await page.waitForFunction(() => document.querySelector('main .graph')?.getAttribute('aria-label')?.startsWith('Lineage of crawl-done'));
    await expect(page.locator('main .graph').getAttribute('aria-label')).resolves.toBe('Lineage of crawl-done: 3 nodes, 2 edges');
  });

  it('hides the actions a read-only credential may not take', async () => {
    const page = await rig.page({ token: await rig.t.tokenWith(['read:empire']) });
    await openPage(page, `/empire/incidents?incident=${seed.incidentId}`);
    // Still open (the next test resolves it): a writer would see Acknowledge and Resolve here.
    await page.locator('.incident dd .badge').filter({ hasText: /^open$/ }).waitFor();
    await expect(page.getByRole('button', { name: 'Acknowledge', exact: true }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Resolve', exact: true }).count()).resolves.toBe(0);
    await expect(page.getByRole('heading', { name: 'Note' }).count()).resolves.toBe(0);
    await openPage(page, '/empire/forecasts');
    await expect(page.getByRole('table', { name: 'Forecasts' }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Run the forecaster now' }).count()).resolves.toBe(0);
    await openPage(page, '/provenance?toolset=crawler-lab');
    await expect(page.getByRole('table', { name: 'Signing keys' }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: /^Retire key/ }).count()).resolves.toBe(0);
    await expect(page.getByRole('form', { name: 'Register a signing key' }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Admit unsigned events again' }).count()).resolves.toBe(0);
    const nav = page.getByRole('navigation', { name: 'Console' }).last();
    await expect(nav.getByRole('link', { name: 'Alert rules' }).count()).resolves.toBe(0);
  });

  it('incidents: the forecast incident listed, acknowledged and then resolved through the page, with a note', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/incidents');
    const row = page.getByRole('table', { name: 'Incidents' }).getByRole('row').filter({ hasText: 'surge-lab' });
    await expect(row.textContent()).resolves.toMatch(/Forecast: surge-lab event rate surged.*minor.*open.*forecast/);
    await row.getByRole('button', { name: /Forecast: surge-lab/ }).click();
    await page.waitForURL(new RegExp(`incident=${seed.incidentId}`));
    const detail = page.locator('.incident');
    await detail.waitFor();
    await expect(detail.locator('.event-ids li').count()).resolves.toBe(20);
    await rig.screenshot(page, 'empire-incidents');

    const url = `${V1}/empire/incidents/${seed.incidentId}`;
    await detail.getByLabel('Notes for the audit log').fill('Looking at the surge from the console');
    await detail.getByRole('button', { name: 'Acknowledge' }).click();
    await detail.getByRole('button', { name: 'Acknowledge' }).waitFor({ state: 'detached' });
    await expect(json<{ incident: { status: string } }>(url)).resolves.toMatchObject({ incident: { status: 'acknowledged' } });
    await expect(detail.locator('dl.facts').textContent()).resolves.toContain('acknowledged');

    await detail.getByRole('button', { name: 'Resolve' }).click();
    await detail.getByText('Resolved incidents are final.').waitFor();
    const resolved = await json<{ incident: { status: string; resolvedAt: string | null } }>(url);
    expect(resolved.incident.status).toBe('resolved');
    expect(resolved.incident.resolvedAt).not.toBeNull();
    const audit = await json(`${V1}/honeypot/ops/audit?limit=50`);
    expect(JSON.stringify(audit)).toContain('Looking at the surge from the console');

    // The note on the incident.
    await detail.getByLabel('Note', { exact: true }).fill('Caused by the weekly re-crawl; expected.');
    await detail.getByLabel('Colour').selectOption('yellow');
    await detail.getByRole('button', { name: 'Save the note' }).click();
    await detail.locator('blockquote.note').filter({ hasText: 'weekly re-crawl' }).waitFor();
    const note = await json<{ note: { note: string; color: string } | null }>(`${V1}/empire/notes?eventId=${seed.incidentId}&targetKind=incident`);
    expect(note.note).toMatchObject({ note: 'Caused by the weekly re-crawl; expected.', color: 'yellow' });

    // The status filter lives in the address.
    await page.getByLabel('Status').selectOption('open');
    await page.waitForURL(/status=open/);
    await page.getByText('No incident matches').waitFor();
  });

  it('forecasts: the latest score per toolset, and a run started from the page with its progress and answer', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/forecasts');
    const table = page.getByRole('table', { name: 'Forecasts' });
    await expect(table.getByRole('row').filter({ hasText: 'surge-lab' }).textContent()).resolves.toMatch(/surge-labalert0\.9\dsurge/);
    await rig.screenshot(page, 'empire-forecasts');
    const before = await json<{ forecasts: { runId: string }[] }>(`${V1}/empire/forecast`);
    // The latest forecast is the one computed last: the page's run comes a minute after the seeded ones.
    clock.advance(60_000);
    await page.getByRole('button', { name: 'Run the forecaster now' }).click();
    const answer = page.locator('p.result');
    await answer.waitFor();
    const after = await json<{ forecasts: { toolset: string; runId: string }[] }>(`${V1}/empire/forecast`);
    const runId = after.forecasts[0]!.runId;
    expect(runId).not.toBe(before.forecasts[0]!.runId);
    await expect(answer.textContent()).resolves.toContain(`Run ${runId} scored 1 toolset`);
    await table.getByRole('row').filter({ hasText: 'surge-lab' }).filter({ hasText: runId.slice(0, 8) }).waitFor();
  });

  it('SLO: a badge per toolset (ok, warn or bad; too few samples) and the numbers behind it', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/slo');
    const badges = page.getByRole('list', { name: 'SLO badges' });
    const card = (toolset: string) => badges.locator('li').filter({ hasText: toolset });
    // crawler-lab's requests all went through; its badge also weighs latency, which a busy test machine sways.
    const slo = await json<{ rows: { toolset: string; badge: string }[] }>(`${V1}/empire/slo`);
    const crawlBadge = slo.rows.find((r) => r.toolset === 'crawler-lab')?.badge;
    expect(['green', 'yellow']).toContain(crawlBadge);
    const word = crawlBadge === 'green' ? 'ok' : 'warn';
    await expect(card('crawler-lab').locator('.badge').textContent()).resolves.toBe(word);
    await expect(card('crawler-lab').locator('.badge').getAttribute('class')).resolves.toBe(`badge ${word}`);
    await expect(card('crawler-lab').textContent()).resolves.toContain(`100% ok of ${CRAWL_REQUESTS} requests`);
    await expect(card('probe-kit').locator('.badge').textContent()).resolves.toBe('bad');
    await expect(card('probe-kit').locator('.badge').getAttribute('class')).resolves.toBe('badge bad');
    await expect(card('surge-lab').locator('.badge').textContent()).resolves.toBe('too few samples');
    await expect(page.getByRole('table', { name: 'Ingest SLO per toolset' }).getByRole('row').filter({ hasText: 'probe-kit' }).textContent()).resolves.toContain('rejected-events 10');
    await rig.screenshot(page, 'empire-slo');
  });

  it('alert rules: the rules and deliveries of a toolset; a rule created and disabled through the page', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/alerts?toolset=crawler-lab');
    const rules = page.getByRole('table', { name: 'Alert rules' });
    await expect(rules.getByRole('row').filter({ hasText: CRAWL_RULE }).textContent()).resolves.toContain('≥ 1 events in 15 min');
    const deliveries = page.getByRole('table', { name: 'Alert deliveries' });
    await expect(deliveries.getByRole('row').filter({ hasText: CRAWL_RULE }).textContent()).resolves.toMatch(/webhook https:\/\/alerts\.example\.com\/….*pending/);

    const form = page.getByRole('form', { name: 'Create an alert rule' });
    await form.getByLabel('Name').fill('Page flood');
    await form.getByLabel('Events at least').fill('50');
    await form.getByLabel('Window (minutes)').fill('30');
    await form.getByLabel('Event type').fill('crawl.page');
    await form.getByLabel('Destination URL').fill('https://hooks.example.com/flood');
    await form.getByLabel('Signing secret').fill('whsec-made-in-the-console-0123');
    await form.getByRole('button', { name: 'Create the rule' }).click();
    await page.getByText('Created “Page flood”').waitFor();
    const listed = await json<{ rules: { id: string; name: string; enabled: boolean; predicate: object }[] }>(`${V1}/empire/crawler-lab/alerts`);
    const made = listed.rules.find((r) => r.name === 'Page flood');
    expect(made).toMatchObject({ enabled: true, predicate: { kind: 'empire_count_gte', count: 50, windowMinutes: 30, eventType: 'crawl.page' } });

    await expect(rules.getByRole('row').filter({ hasText: 'Page flood' }).textContent()).resolves.toContain('≥ 50 events of type crawl.page in 30 min');
    await page.getByRole('button', { name: 'Disable Page flood' }).click();
    await page.getByRole('button', { name: 'Enable Page flood' }).waitFor();
    const after = await json<{ rules: { name: string; enabled: boolean }[] }>(`${V1}/empire/crawler-lab/alerts`);
    expect(after.rules.find((r) => r.name === 'Page flood')?.enabled).toBe(false);
    await rig.screenshot(page, 'empire-alerts');
  });

  it('replay: the latest events replayed, and one replayed on its own', async () => {
    const page = await rig.page();
    await openPage(page, '/empire/replay?toolset=crawler-lab');
    const table = page.getByRole('table', { name: 'Replayed events' });
    await expect(table.locator('tbody tr').count()).resolves.toBe(CRAWL_EVENTS);
    await expect(page.getByText('every one matches').isVisible()).resolves.toBe(true);
    await rig.screenshot(page, 'empire-replay');
    await table.getByRole('link', { name: 'crawl-done' }).click();
    await page.waitForURL(new RegExp(`event=${seed.lineage['crawl-done']}`));
    await page.getByText('matches what ingest derived').waitFor();
    await expect(page.locator('dl.facts').textContent()).resolves.toContain('crawl.finished');
  });

  it('provenance: keys, the signing policy switched, a key registered and retired, attestations by decision', async () => {
    const page = await rig.page();
    await openPage(page, '/provenance?toolset=crawler-lab');
    const keys = page.getByRole('table', { name: 'Signing keys' });
    await expect(keys.getByRole('row').filter({ hasText: seed.publicKeyB64 }).textContent()).resolves.toContain('active');
    await expect(page.getByRole('table', { name: 'Attestations' }).locator('tbody tr').filter({ hasText: 'signature verified' }).count()).resolves.toBe(CRAWL_EVENTS);

    await page.getByRole('button', { name: 'Make crawler-lab signed-only' }).click();
    await page.getByRole('button', { name: 'Admit unsigned events again' }).waitFor();
    await expect(json(`${V1}/provenance/toolsets/crawler-lab/policy`)).resolves.toMatchObject({ requireSigned: true, source: 'toolset', activeKeys: 1 });

    const rotated = nodeKeyPair().publicKeyB64;
    const form = page.getByRole('form', { name: 'Register a signing key' });
    await form.getByLabel('Public key').fill(rotated);
    await form.getByRole('button', { name: 'Register the key' }).click();
    await keys.getByRole('row').filter({ hasText: rotated }).waitFor();
    await page.locator('dl.facts').filter({ hasText: 'Active keys2' }).waitFor();
    const registered = await json<{ keys: { publicKeyB64: string; status: string }[] }>(`${V1}/provenance/keys?toolset=crawler-lab`);
    expect(registered.keys.map((k) => [k.publicKeyB64, k.status])).toEqual([
      [rotated, 'active'],
      [seed.publicKeyB64, 'active'],
    ]);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Retire key ${rotated}` }).click();
    await keys.getByRole('row').filter({ hasText: rotated }).filter({ hasText: 'retired' }).waitFor();
    await page.locator('dl.facts').filter({ hasText: 'Active keys1' }).waitFor();
    const retired = await json<{ keys: { publicKeyB64: string; status: string; retiredAt: string | null }[] }>(`${V1}/provenance/keys?toolset=crawler-lab&status=retired`);
    expect(retired.keys).toEqual([expect.objectContaining({ publicKeyB64: rotated, status: 'retired' })]);
    await rig.screenshot(page, 'empire-provenance');

    // Every toolset's refused events.
    await openPage(page, '/provenance');
    await page.getByLabel('Decision').selectOption('rejected');
    const rejected = page.getByRole('table', { name: 'Attestations' }).locator('tbody tr');
    // The unfiltered rows stay on screen until the filtered answer arrives.
    await expect.poll(() => rejected.count()).toBe(10);
    await expect(rejected.allTextContents()).resolves.toSatisfy((rows: string[]) => rows.every((r) => r.includes('probe-kit') && r.includes('probe-forged-')));
  });

  it('shows the empire pages in a narrow window', async () => {
    const page = await rig.page({ width: 420 });
    await openPage(page, `/empire/incidents?incident=${seed.incidentId}`);
    await page.locator('.incident').waitFor();
    await rig.screenshot(page, 'empire-incidents-narrow');
  });
});
