import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V1 } from '../helpers/app.ts';
import { CHROME_UA, signedIngest } from '../helpers/honeypot.ts';
import { browserSkipReason, type ConsoleRig, openPage, startConsoleRig } from './browser.ts';
import { ingest, JA4_OPENAI, JA4_SPOOF, OffsetClock, SEED_RULE, type Seeded, seedHoneypot } from './honeypot.seed.ts';

/**
 * The honeypot pages in a real browser, on seeded tenants, signed events and a rule that fired:
 * every page shows that data; alert rules are created and changed, a secret rotated and a tenant
 * disabled through the pages, each checked through the API afterwards.
 */
const skip = browserSkipReason();
const clock = new OffsetClock();
let rig: ConsoleRig;
let seeded: Seeded;

beforeAll(async () => {
  if (skip) return;
  rig = await startConsoleRig({ clock });
  seeded = await seedHoneypot(rig.t, clock);
}, 240_000);
afterAll(() => rig?.close());

const table = (page: Page, caption: string | RegExp): Locator => page.getByRole('table', { name: caption });
const row = (within: Locator, text: string | RegExp): Locator => within.locator('tbody tr', { hasText: text });
/** The value (dd) a fact list gives for a term (dt). */
const fact = (within: Page | Locator, term: string): Locator => within.locator('dt', { hasText: term }).locator('xpath=following-sibling::dd[1]');
const get = async <T = Record<string, unknown>>(url: string): Promise<T> => {
  const res = await rig.t.call({ method: 'GET', url });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<T>();
};
const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);

describe.skipIf(skip)('console honeypot pages', () => {
  it('fleet: every tenant with its events and a 7-day trend', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot/fleet');
    const fleet = table(page, 'Tenants of the fleet');
    const edge = row(fleet, 'edge-eu');
    await expect(edge.textContent()).resolves.toContain('Edge EU');
    await expect(edge.locator('td').nth(2).textContent()).resolves.toBe(String(seeded.counts['edge-eu']));
    await expect(row(fleet, 'docs-mirror').locator('td').nth(2).textContent()).resolves.toBe('2');
    await edge.getByRole('img', { name: /edge-eu: events a day over 7 days/ }).waitFor();
    await rig.screenshot(page, 'honeypot-fleet');
  });

  it('recent events: the seeded events, a class filter in the address, and new events without a reload', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot/recent?tenant=edge-eu');
    const events = table(page, 'Events');
    await expect(events.locator('tbody tr').count()).resolves.toBe(seeded.counts['edge-eu']);
    await expect(row(events, '/.env').first().textContent()).resolves.toContain('LIAR');
    await expect(row(events, '/honeypot/topics/llm-pricing').first().textContent()).resolves.toContain('openai');

    await page.getByLabel('Verdict class').selectOption('LIAR');
    await page.waitForURL(/class=LIAR/);
    await expect.poll(() => events.locator('tbody tr').count()).toBe(6);
    await expect(events.locator('tbody tr', { hasNotText: 'LIAR' }).count()).resolves.toBe(0);
    await page.reload();
    await page.locator('main table').waitFor();
    await expect(page.getByLabel('Verdict class').inputValue()).resolves.toBe('LIAR');
    await rig.screenshot(page, 'honeypot-recent');

    // An event sent while the page is open shows within a refresh (10 s), with no reload.
    await page.getByLabel('Verdict class').selectOption('');
    await ingest(rig.t, clock, 'edge-eu', seeded.secrets['edge-eu'], [{ ua: CHROME_UA, ip: '198.51.100.77', path: '/honeypot/topics/fresh-arrival' }]);
    seeded.counts['edge-eu']! += 1;
    await row(events, '/honeypot/topics/fresh-arrival').waitFor({ timeout: 15_000 });
  });

  it('clusters: the liar cluster, which opens its fingerprint in investigate with the failed proof', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot/clusters?tenant=edge-eu');
    const clusters = table(page, /^Clusters over 24h/);
    const liars = row(clusters, JA4_SPOOF);
    await expect(liars.textContent()).resolves.toContain('LIAR');
    await expect(liars.locator('td').nth(4).textContent()).resolves.toBe('6');
    await expect(row(clusters, JA4_OPENAI).textContent()).resolves.toContain('KNOWN_LLM_AGENT');
    await rig.screenshot(page, 'honeypot-clusters');

    await liars.getByRole('link', { name: /Investigate/ }).click();
    await page.waitForURL(new RegExp(`/honeypot/investigate\\?fingerprintId=${seeded.liarFingerprint}`));
    await page.getByText('not verified').waitFor();
    await expect(page.getByRole('list', { name: 'Proofs that failed' }).textContent()).resolves.toContain('ip-range: the client IP is outside every range');
  });

  it('investigate: the lookup form, the vendor verdict with its proof, and the JA4 drift', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot/investigate');
    const form = page.getByRole('form', { name: 'Look up a fingerprint' });
    await form.getByLabel('Fingerprint id').fill(seeded.verifiedFingerprint);
    await form.getByLabel('Tenant').selectOption('edge-eu');
    await form.getByRole('button', { name: 'Investigate' }).click();
    await page.waitForURL(new RegExp(`fingerprintId=${seeded.verifiedFingerprint}.*tenant=edge-eu|tenant=edge-eu.*fingerprintId=${seeded.verifiedFingerprint}`));
    await page.locator('.vendor-verdict').waitFor();

    const verdict = page.locator('.vendor-verdict');
    await expect(verdict.textContent()).resolves.toContain('verified as openai');
    const [, cidr] = seeded.verifiedProof.split(':');
    await expect(fact(verdict, 'Proof').textContent()).resolves.toBe(`Client IP inside the published range ${cidr}`);
    // The proof sources the vendor publishes, so an operator sees what could have verified it.
    await expect(fact(verdict, 'Publishes').textContent()).resolves.toBe('ip-range');
    await expect(page.getByText('drifting').isVisible()).resolves.toBe(true);
    const ja4s = page.getByRole('list', { name: 'JA4s of this user agent' });
    await expect(ja4s.textContent()).resolves.toContain(JA4_OPENAI);
    await expect(ja4s.textContent()).resolves.toContain(JA4_SPOOF);
    await expect(row(table(page, 'Fingerprints with this user agent'), seeded.liarFingerprint).count()).resolves.toBe(1);
    await expect(table(page, "The fingerprint's latest 50 events").locator('tbody tr').count()).resolves.toBe(4);
    await rig.screenshot(page, 'honeypot-investigate');
  });

  it('tarpits: the liar fingerprint, in force', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot/tarpits');
    const liar = row(table(page, 'Tarpits'), seeded.liarFingerprint);
    await expect(liar.textContent()).resolves.toContain('in force');
    await expect(liar.textContent()).resolves.toContain('edge-eu');
    await rig.screenshot(page, 'honeypot-tarpits');
  });

  it('lures: hits per bait family', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot/lures?tenant=edge-eu');
    const env = row(table(page, 'Lure families of edge-eu'), 'Fake .env credential files');
    await expect(env.locator('td').nth(3).textContent()).resolves.toBe('6');
    await expect(env.locator('td').nth(4).textContent()).resolves.toBe('6');
    await expect(env.textContent()).resolves.toContain('LIAR');
    await rig.screenshot(page, 'honeypot-lures');
  });

  it('sitemap: hits under each bait root', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot/sitemap?tenant=edge-eu');
    const roots = table(page, 'Bait roots of edge-eu');
    const topics = row(roots, '/honeypot/topics/');
    await expect(topics.locator('td').nth(2).textContent()).resolves.toBe('5'); // 4 seeded + the fresh arrival
    await expect(topics.textContent()).resolves.toContain('/honeypot/topics/llm-pricing');
    await expect(row(roots, '/q/').textContent()).resolves.toContain('/q/best-gpu-cloud');
    await rig.screenshot(page, 'honeypot-sitemap');
  });

  it('alerts: the fired rule and its delivery; a rule created and then changed through the forms', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot/alerts');
    const rules = table(page, 'Alert rules');
    const seededRule = row(rules, SEED_RULE);
    await expect(seededRule.textContent()).resolves.toContain('LIAR share above 10% over 60 min');
    await expect(seededRule.locator('td').nth(5).locator('time').count()).resolves.toBe(1); // last fired
    const delivery = row(table(page, 'Alert deliveries, newest first'), SEED_RULE);
    await expect(delivery.textContent()).resolves.toContain('pending');
    await expect(delivery.textContent()).resolves.toContain('Slack https://hooks.slack.com/…');

    const create = page.getByRole('form', { name: 'Create an alert rule' });
    await create.getByLabel('Tenant').selectOption('edge-eu');
    await create.getByLabel('Rule name').fill('Verified surge');
    await create.getByLabel('Fires when').selectOption('event_count_above');
    await create.getByLabel('More events than').fill('40');
    await create.getByLabel('Only of class').selectOption('KNOWN_LLM_AGENT');
    await create.getByLabel('Window (minutes)').fill('30');
    await create.getByLabel('Send to').selectOption('webhook');
    await create.getByLabel('Destination URL').fill('https://alerts.example.com/hooks/observatory');
    await create.getByLabel('Webhook secret').fill('a-webhook-secret-of-some-length');
    await create.getByRole('button', { name: 'Create rule' }).click();
    await row(rules, 'Verified surge').waitFor();

    type Rules = { rules: { id: string; name: string; enabled: boolean; silenceUntil: string | null; predicate: unknown; destinations: unknown[] }[] };
    const created = (await get<Rules>(`${V1}/honeypot/alerts?tenant=edge-eu`)).rules.find((r) => r.name === 'Verified surge');
    expect(created).toMatchObject({
      enabled: true,
      predicate: { kind: 'event_count_above', count: 40, windowMinutes: 30, uaClass: 'KNOWN_LLM_AGENT' },
      destinations: [{ kind: 'webhook', url: 'https://alerts.example.com/…', secretSet: true }],
    });
    await expect(row(rules, 'Verified surge').textContent()).resolves.toContain('more than 40 KNOWN_LLM_AGENT events in 30 min');

    await page.getByRole('button', { name: 'Change Verified surge' }).click();
    await page.waitForURL(new RegExp(`edit=${created!.id}`));
    const change = page.getByRole('form', { name: 'Change the alert rule' });
    await change.getByLabel('Rule name').fill('Verified surge (night)');
    await change.getByLabel(/^Enabled/).uncheck();
    await change.getByLabel('Silenced until').fill('2031-01-02T03:04');
    await change.getByRole('button', { name: 'Save changes' }).click();
    await row(rules, 'Verified surge (night)').waitFor();
    await expect(page.getByRole('form', { name: 'Change the alert rule' }).count()).resolves.toBe(0);

    const changed = (await get<Rules>(`${V1}/honeypot/alerts?tenant=edge-eu`)).rules.find((r) => r.id === created!.id);
    // The page runs in Europe/Berlin: 03:04 local on 2 January is 02:04 UTC.
    expect(changed).toMatchObject({ name: 'Verified surge (night)', enabled: false, silenceUntil: '2031-01-02T02:04:00.000Z' });
    await expect(row(rules, 'Verified surge (night)').textContent()).resolves.toContain('disabled');
    await rig.screenshot(page, 'honeypot-alerts');
  });

  it('tenants: a tenant created through the form (secret shown once and working), disabled, then enabled', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot/tenants');
    const create = page.getByRole('form', { name: 'Create a tenant' });
    await create.getByLabel('Slug').fill('edge-us');
    await create.getByLabel('Name').fill('Edge US');
    await create.getByLabel('Notes').fill('us-east-1');
    await create.getByRole('button', { name: 'Create tenant' }).click();
    const shown = page.getByRole('status', { name: 'Signing secret of edge-us' });
    await expect(shown.textContent()).resolves.toContain('Shown once');
    const secret = (await shown.getByLabel('Signing secret').textContent())!;
    const tenants = table(page, 'Honeypot tenants');
    await row(tenants, 'edge-us').waitFor();
    const listed = (await get<{ tenants: { slug: string; notes: string | null; disabledAt: string | null }[] }>(`${V1}/honeypot/tenants`)).tenants;
    expect(listed.find((t) => t.slug === 'edge-us')).toMatchObject({ notes: 'us-east-1', disabledAt: null });
    const event = { events: [{ ua: CHROME_UA, ip: '198.51.100.20', path: '/robots.txt' }] };
    const signed = await signedIngest(rig.t, { slug: 'edge-us', secret, unixSeconds: nowSeconds(), body: event });
    expect(signed.statusCode, 'the secret the page showed signs an ingest').toBe(200);
    await shown.getByRole('button', { name: 'I have saved it' }).click();
    await expect(shown.count()).resolves.toBe(0);

    const edgeUs = row(tenants, 'edge-us');
    await edgeUs.getByRole('button', { name: 'Disable' }).click();
    await edgeUs.getByRole('group', { name: /Disable edge-us\?/ }).getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => edgeUs.locator('.badge').textContent()).toBe('disabled');
    await edgeUs.getByRole('button', { name: 'Enable' }).waitFor();
    const disabled = (await get<{ tenants: { slug: string; disabledAt: string | null }[] }>(`${V1}/honeypot/tenants`)).tenants.find((t) => t.slug === 'edge-us');
    expect(disabled?.disabledAt).not.toBeNull();
    const refused = await signedIngest(rig.t, { slug: 'edge-us', secret, unixSeconds: nowSeconds(), body: event });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().reason).toBe('tenant-disabled');
    await rig.screenshot(page, 'honeypot-tenants');

    await edgeUs.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => edgeUs.locator('.badge').textContent()).toBe('enabled');
    const enabled = (await get<{ tenants: { slug: string; disabledAt: string | null }[] }>(`${V1}/honeypot/tenants`)).tenants.find((t) => t.slug === 'edge-us');
    expect(enabled?.disabledAt).toBeNull();
  });

  it('ops: ingest SLO, silent tenants and database health; a test event sent through the form', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot/ops');
    const requests = page.locator('.kpi', { hasText: 'Requests' }).locator('.value');
    const before = Number((await requests.textContent())!.replace(/\D/g, ''));
    const slo = (await get<{ totalSamples: number }>(`${V1}/honeypot/ops/ingest?window=24h`)).totalSamples;
    expect(before).toBe(slo);
    expect(before).toBeGreaterThanOrEqual(4);
    const stored = Object.values(seeded.counts).reduce((a, b) => a + b, 0) + 1; // + the edge-us event
    await expect(fact(page, 'Events stored').textContent()).resolves.toBe(String(stored));
    await page.getByText('None: every enabled tenant with a baseline has sent events recently.').waitFor();

    const form = page.getByRole('form', { name: 'Send a test event' });
    await form.getByLabel('Tenant').selectOption('docs-mirror');
    await form.getByLabel('Path').fill('/honeypot/topics/console-test-event');
    await form.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('status').filter({ hasText: 'Accepted at' }).waitFor();
    await expect.poll(() => requests.textContent()).toBe(String(before + 1));
    await expect.poll(() => fact(page, 'Events stored').textContent()).toBe(String(stored + 1));
    const recent = await get<{ events: { path: string }[] }>(`${V1}/honeypot/recent?tenant=docs-mirror&limit=10`);
    expect(recent.events.map((e) => e.path)).toContain('/honeypot/topics/console-test-event');
    await rig.screenshot(page, 'honeypot-ops');
  });

  it('replay: one event replayed by id from the form, and the newest envelopes', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot/ops/replay');
    await row(table(page, 'Newest stored envelopes'), /edge-eu|docs-mirror/).first().waitFor();
    const form = page.getByRole('form', { name: 'Replay an event' });
    await form.getByLabel('Event id').fill(seeded.anEventId);
    await form.getByRole('button', { name: 'Replay' }).click();
    await page.waitForURL(new RegExp(`eventId=${seeded.anEventId}`));
    await page.getByText('matches', { exact: true }).waitFor();
    await expect(page.getByText('Replaying it gives the same fingerprintId, uaClass, vendorId, proof as stored.').isVisible()).resolves.toBe(true);
    await expect(fact(page, 'Tenant').textContent()).resolves.toBe('edge-eu');
    await rig.screenshot(page, 'honeypot-replay');
  });

  it('hides the write actions from a credential that can only read, and reads at 420 px', async () => {
    const token = await rig.t.tokenWith(['read:alerts', 'read:tenants']);
    const page = await rig.page({ token, width: 420 });
    await openPage(page, '/honeypot/alerts');
    await row(table(page, 'Alert rules'), SEED_RULE).waitFor();
    await expect(page.getByRole('button', { name: /^Change / }).count()).resolves.toBe(0);
    await expect(page.getByRole('form', { name: 'Create an alert rule' }).count()).resolves.toBe(0);
    await rig.screenshot(page, 'honeypot-alerts-read-only-narrow');
    await openPage(page, '/honeypot/tenants');
    await row(table(page, 'Honeypot tenants'), 'edge-eu').waitFor();
    await expect(page.getByRole('button', { name: 'Rotate secret' }).count()).resolves.toBe(0);
    await expect(page.getByRole('form', { name: 'Create a tenant' }).count()).resolves.toBe(0);
    // Pages the token has no scope for are left out of the navigation.
    await page.getByText('Menu').click();
    const nav = page.locator('details.nav-menu');
    await expect(nav.locator('a[href="/console/honeypot/alerts"]').count()).resolves.toBe(1);
    await expect(nav.locator('a[href="/console/honeypot/recent"]').count()).resolves.toBe(0);
  });

  it('tenants: a secret rotated through the page; the new one signs, the old one stops after its overlap', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot/tenants');
    const docs = row(table(page, 'Honeypot tenants'), 'docs-mirror');
    await docs.getByRole('button', { name: 'Rotate secret' }).click();
    await docs.getByRole('group', { name: /Issue a new secret for docs-mirror/ }).getByRole('button', { name: 'Rotate' }).click();
    const shown = page.getByRole('status', { name: 'New signing secret of docs-mirror' });
    await expect(shown.textContent()).resolves.toContain('The previous secret keeps verifying until');
    const fresh = (await shown.getByLabel('Signing secret').textContent())!;
    const old = seeded.secrets['docs-mirror'];
    expect(fresh).not.toBe(old);
    await rig.screenshot(page, 'honeypot-tenants-rotated');

    const audit = await get<{ rows: { verb: string; target: string }[] }>(`${V1}/honeypot/ops/audit?verb=tenant.rotate-secret`);
    expect(audit.rows.map((r) => r.target)).toContain('tenant:docs-mirror');
    const event = (path: string) => ({ events: [{ ua: CHROME_UA, ip: '198.51.100.30', path }] });
    const withNew = await signedIngest(rig.t, { slug: 'docs-mirror', secret: fresh, unixSeconds: nowSeconds(), body: event('/after-rotation') });
    expect(withNew.statusCode, withNew.body).toBe(200);

    // Past the 24-hour overlap the old secret no longer verifies; the new one still does.
    clock.offsetMs += 25 * 3_600_000;
    const withOld = await signedIngest(rig.t, { slug: 'docs-mirror', secret: old, unixSeconds: nowSeconds(), body: event('/old-secret') });
    expect(withOld.statusCode).toBe(401);
    const stillNew = await signedIngest(rig.t, { slug: 'docs-mirror', secret: fresh, unixSeconds: nowSeconds(), body: event('/new-secret') });
    expect(stillNew.statusCode, stillNew.body).toBe(200);
  });
});
