import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GPTBOT_IP, GPTBOT_UA, CHROME_UA, createTenant, signedIngest } from '../helpers/honeypot.ts';
import { browserSkipReason, type ConsoleRig, openPage, startConsoleRig } from './browser.ts';

/**
 * The console's frame in a real browser: sign-in with a token, the navigation the scopes allow,
 * sign-out, the dashboard's real data, a narrow window.
 */
const skip = browserSkipReason();
let rig: ConsoleRig;

beforeAll(async () => {
  if (skip) return;
  rig = await startConsoleRig();
  const secret = await createTenant(rig.t, 'docs-mirror', 'Docs mirror');
  const now = Date.now();
  // Eight events now (the counts the tests read), and a day's worth of older ones so the
  // dashboard's screenshot (docs/images/console-dashboard.png) shows a real shape.
  const recent = [
    ...Array.from({ length: 5 }, (_, i) => ({ ts: new Date(now - i * 60_000).toISOString(), ua: GPTBOT_UA, ip: GPTBOT_IP, path: '/honeypot/topics/llm-pricing' })),
    ...Array.from({ length: 3 }, (_, i) => ({ ts: new Date(now - i * 90_000).toISOString(), ua: CHROME_UA, ip: '198.51.100.7', path: '/robots.txt' })),
  ];
  const day = Array.from({ length: 20 }, (_, hour) =>
    Array.from({ length: 3 + ((hour * 7) % 11) }, (_, i) => {
      const ts = new Date(now - (hour + 1) * 3_600_000 - i * 97_000).toISOString();
      const kind = (hour + i) % 4;
      if (kind === 0) return { ts, ua: GPTBOT_UA, ip: '81.2.69.160', path: '/honeypot/topics/vector-databases' };
      if (kind === 1) return { ts, ua: GPTBOT_UA, ip: GPTBOT_IP, path: '/honeypot/topics/llm-pricing' };
      if (kind === 2) return { ts, ua: 'python-requests/2.32.3', ip: '5.9.10.20', path: '/api/agent' };
      return { ts, ua: CHROME_UA, ip: '198.51.100.7', path: '/robots.txt' };
    }),
  ).flat();
  const events = recent;
  const res = await signedIngest(rig.t, { slug: 'docs-mirror', secret, unixSeconds: Math.floor(Date.now() / 1000), body: { events } });
  expect(res.statusCode, res.body).toBe(200);
  const older = await signedIngest(rig.t, { slug: 'docs-mirror', secret, unixSeconds: Math.floor(Date.now() / 1000), body: { events: day } });
  expect(older.statusCode, older.body).toBe(200);
}, 240_000);
afterAll(() => rig?.close());

describe.skipIf(skip)('console frame', () => {
  it('serves the console at /console and sends a browser there from /', async () => {
    const page = await rig.page({ token: null });
    await page.goto('/');
    await page.waitForURL(/\/console\/$/);
    // The URL changes before the page has rendered: wait for the heading, then hold it visible.
    const heading = page.getByRole('heading', { name: 'Sign in with an API token' });
    await heading.waitFor();
    await expect(heading.isVisible()).resolves.toBe(true);
    await rig.screenshot(page, 'sign-in');
  });

  it('refuses a wrong token with the reason, and signs in with a right one', async () => {
    const page = await rig.page({ token: null });
    await page.goto('/console/');
    await page.getByLabel('API token').fill('svctok_not-a-real-token');
    await page.getByRole('button', { name: 'Sign in with the token' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/not accepted/);
  });

  it('shows the dashboard with the ingested events, and keeps the window in the address', async () => {
    const page = await rig.page();
    await openPage(page, '/honeypot');
    const total = (await rig.t.call({ method: 'GET', url: '/api/observatory/v1/honeypot/dashboard' })).json<{ kpis: { totalEvents: number } }>().kpis.totalEvents;
    expect(total).toBeGreaterThan(100);
    await expect(page.locator('.kpi').first().textContent()).resolves.toContain(total.toLocaleString('en-GB'));
    await expect(page.getByRole('list', { name: 'Top paths' }).textContent()).resolves.toContain('/honeypot/topics/llm-pricing');
    await rig.screenshot(page, 'honeypot-dashboard-24h');
    await page.getByRole('button', { name: '7d' }).click();
    await page.waitForURL(/window=7d/);
    await page.reload();
    await expect(page.getByRole('button', { name: '7d' }).getAttribute('aria-pressed')).resolves.toBe('true');
    await rig.screenshot(page, 'honeypot-dashboard');
  });

  it('hides pages the credential has no scope for, and signs out', async () => {
    const token = await rig.t.tokenWith(['read:events']);
    const page = await rig.page({ token });
    await openPage(page, '/');
    const nav = page.getByRole('navigation', { name: 'Console' }).last();
    await expect(nav.getByRole('link', { name: 'Dashboard', exact: true }).count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').waitFor();
  });

  it('folds the navigation into a menu in a narrow window', async () => {
    const page = await rig.page({ width: 420 });
    await openPage(page, '/honeypot');
    await expect(page.locator('aside.sidebar').isVisible()).resolves.toBe(false);
    await page.getByText('Menu').click();
    await expect(page.locator('details.nav-menu').getByRole('link', { name: 'Dashboard', exact: true }).isVisible()).resolves.toBe(true);
    await rig.screenshot(page, 'narrow');
  });
});
