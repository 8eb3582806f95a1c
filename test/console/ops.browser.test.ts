import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../helpers/http-receiver.ts';
import { ADMIN_TOKEN, V1 } from '../helpers/app.ts';
import { createTenant } from '../helpers/honeypot.ts';
import { browserSkipReason, type ConsoleRig, openPage, startConsoleRig } from './browser.ts';
import { columnText, createTokens, overflowsSideways, pageWithAuthenticator, settled, startPasskeyInstance, upsertTopics } from './ops.seed.ts';

/**
 * The ops, settings, agent API and API reference pages in a real browser: each shows data seeded
 * through the API, and each write done through a form is checked through the API afterwards.
 */
const skip = browserSkipReason();
let rig: ConsoleRig;
let receiver: Receiver;

const TOPICS = [
  { slug: 'dns-for-operators', title: 'DNS for operators', category: 'tech', summary: 'Resolvers, caches and TTLs.', body: 'A resolver asks the root, then the TLD, then the authoritative server.' },
  { slug: 'index-funds-basics', title: 'Index funds basics', category: 'finance', summary: 'Owning the whole market.', body: 'An index fund holds every stock of an index in proportion.' },
];

beforeAll(async () => {
  if (skip) return;
  receiver = await startReceiver();
  rig = await startConsoleRig({
    env: {
      // The chat webhook test posts to the local receiver.
      OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
      OBSERVATORY_OUTBOUND_ALLOWED_PORTS: String(receiver.port),
      OBSERVATORY_CHAT_WEBHOOK_URL: 'https://hooks.chat.example/services/T0/B0/console-test',
    },
  });
  await createTenant(rig.t, 'audit-probe', 'Audit probe');
  // More token.create rows than one page of 50 holds, for the audit log's paging.
  await createTokens(rig.t, 'seeded', 55);
  await upsertTopics(rig.t, TOPICS);
}, 240_000);
afterAll(async () => {
  await rig?.close();
  await receiver?.close();
});

const JOBS_TABLE = 'Every job, with its schedule and latest run';

describe.skipIf(skip)('ops pages', () => {
  it('shows the audit log with the tenant created through the API, filters it by verb and pages back and forth', async () => {
    const page = await rig.page();
    await openPage(page, '/ops/audit');
    await page.getByRole('cell', { name: 'tenant:audit-probe' }).waitFor();
    await rig.screenshot(page, 'ops-audit');

    await page.getByLabel('Verb').fill('token.create');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/verb=token\.create/);
    await page.waitForFunction(() => {
      const verbs = [...document.querySelectorAll('main tbody tr td:nth-child(5)')].map((td) => td.textContent);
      return verbs.length > 0 && verbs.every((v) => v === 'token.create');
    });

    await page.getByLabel('Rows per page').selectOption('50');
    await page.waitForURL(/limit=50/);
    await page.waitForFunction(() => document.querySelectorAll('main tbody tr').length === 50);
    const firstPage = await columnText(page, 1);
    await page.getByRole('button', { name: 'Older' }).click();
    await page.waitForURL(/cursor=\d+/);
    await page.waitForFunction((first) => document.querySelector('main tbody tr td')?.textContent !== first, firstPage[0]);
    await settled(page);
    const secondPage = (await columnText(page, 1)).map(Number);
    expect(secondPage.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...secondPage)).toBeLessThan(Math.min(...firstPage.map(Number)));
    await expect(page.getByText('Page 2').isVisible()).resolves.toBe(true);

    // The address carries the page: a reload shows the same rows, and Newer goes back to the first page.
    await page.reload();
    await page.waitForFunction((first) => document.querySelector('main tbody tr td')?.textContent === first, String(secondPage[0]));
    await page.getByRole('button', { name: 'Newer' }).click();
    await page.waitForFunction((first) => document.querySelector('main tbody tr td')?.textContent === first, firstPage[0]);
    expect(page.url()).not.toContain('cursor=');

    const api = (await rig.t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=token.create&limit=50` })).json<{ rows: { seqNo: string }[] }>();
    expect(api.rows.map((r) => r.seqNo)).toEqual(firstPage);
  });

  it('lists the scheduled jobs and runs one on demand, showing the run it recorded', async () => {
    const page = await rig.page();
    await openPage(page, '/ops/jobs');
    const sweep = page.getByRole('table', { name: JOBS_TABLE }).getByRole('row', { name: /session-sweep/ });
    await expect(sweep.textContent()).resolves.toContain('17 * * * *');

    // The answer is held back until the progress has been seen: a job may run for minutes.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/observatory/v1/ops/jobs/*/run', async (route) => {
      await held;
      await route.continue();
    });
    await page.getByRole('button', { name: 'Run now session-sweep' }).click();
    await page.getByRole('status').filter({ hasText: /Running session-sweep… \(\d+ s\)/ }).waitFor();
    await expect(page.getByRole('button', { name: 'Run now tarpit-expire' }).isDisabled()).resolves.toBe(true);
    release();
    const result = page.getByRole('region', { name: 'Run of session-sweep' });
    await result.waitFor();
    await expect(result.textContent()).resolves.toMatch(/ok.*sessionsDeleted 0.*challengesDeleted 0/s);
    await page.getByRole('cell', { name: 'manual' }).first().waitFor();
    await rig.screenshot(page, 'ops-jobs');

    const health = (await rig.t.call({ method: 'GET', url: `${V1}/honeypot/ops/cron-health` })).json<{
      latestPerJob: { job: string; lastRun: { trigger: string; outcome: string } | null }[];
    }>();
    expect(health.latestPerJob.find((j) => j.job === 'session-sweep')?.lastRun).toMatchObject({ trigger: 'manual', outcome: 'ok' });
    const audit = (await rig.t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=job.run` })).json<{ rows: { target: string; actor: string }[] }>();
    expect(audit.rows[0]).toMatchObject({ target: 'job:session-sweep', actor: 'admin' });
  });

  it('hides "Run now" from a credential that cannot run jobs', async () => {
    const page = await rig.page({ token: await rig.t.tokenWith(['read:dashboard']) });
    await openPage(page, '/ops/jobs');
    await page.getByRole('table', { name: JOBS_TABLE }).getByRole('row', { name: /session-sweep/ }).waitFor();
    await expect(page.getByRole('button', { name: /Run now/ }).count()).resolves.toBe(0);
  });
});

describe.skipIf(skip)('settings pages', () => {
  it('lists the admin token, creates a token through the form (shown once) and revokes it', async () => {
    const page = await rig.page();
    await openPage(page, '/settings/tokens');
    // The seeded tokens fill the first pages (newest first); sorted by name, the admin token comes first.
    await page.getByRole('button', { name: /^Name/ }).click();
    await page.getByRole('cell', { name: 'OBSERVATORY_ADMIN_TOKEN' }).waitFor();
    await rig.screenshot(page, 'settings-tokens');

    const form = page.getByRole('form', { name: 'Create a token' });
    await form.getByLabel('Token name').fill('console-made');
    await form.getByRole('checkbox', { name: /read:dashboard/ }).check();
    await form.getByRole('checkbox', { name: /read:events/ }).check();
    await form.getByRole('button', { name: 'Create token' }).click();
    const once = page.getByRole('region', { name: 'Token “console-made” created' });
    await once.waitFor();
    const plaintext = (await once.getByLabel('Secret value').textContent())?.trim() ?? '';
    expect(plaintext).toMatch(/^svctok_/);
    await page.getByRole('cell', { name: 'console-made' }).waitFor();
    await rig.screenshot(page, 'settings-tokens-created');

    const listed = (await rig.t.call({ method: 'GET', url: `${V1}/tokens` })).json<{ tokens: { id: string; name: string; scopes: string[]; revokedAt: string | null }[] }>();
    const made = listed.tokens.find((t) => t.name === 'console-made');
    expect(made).toMatchObject({ revokedAt: null });
    expect([...(made?.scopes ?? [])].sort()).toEqual(['read:dashboard', 'read:events']);
    const asMade = await rig.t.call({ method: 'GET', url: `${V1}/account`, token: plaintext });
    expect(asMade.json()).toMatchObject({ username: 'admin', scopes: ['read:dashboard', 'read:events'] });

    const row = page.getByRole('row', { name: /console-made/ });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.getByText('revoked').waitFor();
    const after = (await rig.t.call({ method: 'GET', url: `${V1}/tokens` })).json<{ tokens: { name: string; revokedAt: string | null }[] }>();
    expect(after.tokens.find((t) => t.name === 'console-made')?.revokedAt).not.toBeNull();
    expect((await rig.t.call({ method: 'GET', url: `${V1}/account`, token: plaintext })).statusCode).toBe(401);
  });

  it('offers only the scopes the caller holds', async () => {
    const page = await rig.page({ token: await rig.t.tokenWith(['write:tokens', 'read:dashboard']) });
    await openPage(page, '/settings/tokens');
    const form = page.getByRole('form', { name: 'Create a token' });
    await expect(form.getByRole('checkbox', { name: /read:dashboard/ }).isEnabled()).resolves.toBe(true);
    await expect(form.getByRole('checkbox', { name: /read:empire/ }).isDisabled()).resolves.toBe(true);
  });

  it('lists operators, adds one through the form and issues a token for them', async () => {
    const page = await rig.page();
    await openPage(page, '/settings/operators');
    await page.getByRole('cell', { name: 'admin', exact: true }).waitFor();

    const add = page.getByRole('form', { name: 'Add an operator' });
    await add.getByLabel('Username').fill('carol');
    await add.getByLabel('Display name').fill('Carol Example');
    await add.getByRole('checkbox', { name: /read:dashboard/ }).check();
    await add.getByRole('checkbox', { name: /read:events/ }).check();
    await add.getByRole('button', { name: 'Add operator' }).click();
    const first = page.getByRole('region', { name: /Operator “carol” added/ });
    await first.waitFor();
    const firstToken = (await first.getByLabel('Secret value').textContent())?.trim() ?? '';
    await page.getByRole('cell', { name: 'Carol Example' }).waitFor();
    const operators = (await rig.t.call({ method: 'GET', url: `${V1}/operators` })).json<{ operators: { username: string; scopes: string[] }[] }>();
    expect([...(operators.operators.find((o) => o.username === 'carol')?.scopes ?? [])].sort()).toEqual(['read:dashboard', 'read:events']);
    expect((await rig.t.call({ method: 'GET', url: `${V1}/account`, token: firstToken })).json()).toMatchObject({ username: 'carol' });
    await first.getByRole('button', { name: 'I have stored it' }).click();

    await page.getByRole('button', { name: 'Issue a token for carol' }).click();
    await page.waitForURL(/issue=carol/);
    const issue = page.getByRole('form', { name: 'Issue a token for carol' });
    await issue.getByLabel('Token name').fill('carol-laptop');
    // carol does not hold read:empire, so a token for her cannot carry it.
    await expect(issue.getByRole('checkbox', { name: /read:empire/ }).count()).resolves.toBe(0);
    await issue.getByRole('checkbox', { name: /read:events/ }).check();
    await rig.screenshot(page, 'settings-operators');
    await issue.getByRole('button', { name: 'Issue token' }).click();
    const issued = page.getByRole('region', { name: 'Token “carol-laptop” issued for carol' });
    await issued.waitFor();
    const laptop = (await issued.getByLabel('Secret value').textContent())?.trim() ?? '';
    expect((await rig.t.call({ method: 'GET', url: `${V1}/account`, token: laptop })).json()).toMatchObject({ username: 'carol', scopes: ['read:events'] });
  });

  it('shows the integrations and sends a chat webhook test line through the form', async () => {
    const page = await rig.page();
    await openPage(page, '/settings/integrations');
    await expect(page.getByRole('row', { name: /Chat webhook/ }).textContent()).resolves.toContain('configured');
    await expect(page.getByRole('row', { name: /Metrics forwarder/ }).textContent()).resolves.toContain('not configured');

    const form = page.getByRole('form', { name: 'Test a chat webhook' });
    await form.getByLabel('Webhook URL').fill(`${receiver.origin}/services/T0/console`);
    await form.getByLabel('Text').fill('Hello from the console');
    await form.getByRole('button', { name: 'Send a test line' }).click();
    await page.getByText('The webhook accepted the line (HTTP 200).').waitFor();
    expect(receiver.to('/services/T0/console').map((r) => JSON.parse(r.body))).toEqual([{ text: 'Hello from the console' }]);
    await rig.screenshot(page, 'settings-integrations');

    // A port outside the allowed ones is refused with the service's reason.
    await form.getByLabel('Webhook URL').fill('http://127.0.0.1:1/hook');
    await form.getByRole('button', { name: 'Send a test line' }).click();
    await expect(form.getByRole('alert').textContent()).resolves.toContain('outbound-refused');
  });

  it('shows the account; registers a passkey with a virtual authenticator, signs in with it, and revokes it', async () => {
    const { origin } = await startPasskeyInstance(rig);
    const { page, context } = await pageWithAuthenticator(rig, origin, ADMIN_TOKEN);
    await openPage(page, '/settings/account');
    await page.getByText('You have no passkeys yet').waitFor();
    await expect(page.locator('dl.facts').textContent()).resolves.toMatch(/admin.*an API token/s);

    await page.getByLabel('Device label').fill('Virtual authenticator');
    await page.getByRole('button', { name: 'Register a passkey' }).click();
    await page.getByText('Passkey “Virtual authenticator” registered.').waitFor();
    await page.getByRole('cell', { name: 'Virtual authenticator' }).waitFor();
    await rig.screenshot(page, 'settings-account');
    const registered = (await rig.t.call({ method: 'GET', url: `${V1}/account/passkeys` })).json<{ passkeys: { deviceLabel: string; revokedAt: string | null; lastUsedAt: string | null }[] }>();
    expect(registered.passkeys).toEqual([expect.objectContaining({ deviceLabel: 'Virtual authenticator', revokedAt: null, lastUsedAt: null })]);

    // Signed out, the sign-in page's passkey button opens a session with it.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByText('(passkey)').waitFor();
    await openPage(page, '/settings/account');
    await expect(page.locator('dl.facts').textContent()).resolves.toContain('a passkey (browser session)');
    const used = (await rig.t.call({ method: 'GET', url: `${V1}/account/passkeys` })).json<{ passkeys: { lastUsedAt: string | null }[] }>();
    expect(used.passkeys[0]?.lastUsedAt).not.toBeNull();

    // Revoked from a token sign-in elsewhere, it ends the passkey's session.
    const admin = await rig.page();
    await openPage(admin, '/settings/account');
    const row = admin.getByRole('row', { name: /Virtual authenticator/ });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.getByText('revoked').waitFor();
    const revoked = (await rig.t.call({ method: 'GET', url: `${V1}/account/passkeys` })).json<{ passkeys: { revokedAt: string | null }[] }>();
    expect(revoked.passkeys[0]?.revokedAt).not.toBeNull();
    await page.reload();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
    await context.close();
  });
});

/** The calls the public agent API has recorded as honeypot events so far. */
async function agentApiEvents(): Promise<number> {
  await rig.t.app.agentApi.recorder.flush();
  const res = await rig.t.call({ method: 'GET', url: `${V1}/honeypot/recent`, query: { tenant: 'agent-api', limit: '100' } });
  expect(res.statusCode).toBe(200);
  return res.json<{ events: unknown[] }>().events.length;
}

describe.skipIf(skip)('agent API page', () => {
  it('lists the topics, opens one, filters by category, and saves topics and a key through the forms', async () => {
    const recordedBefore = await agentApiEvents();
    const page = await rig.page();
    await openPage(page, '/agent-api');
    await page.getByRole('button', { name: 'DNS for operators' }).click();
    await page.waitForURL(/topic=dns-for-operators/);
    await page.getByText('A resolver asks the root, then the TLD').waitFor();

    await page.getByLabel('Category', { exact: true }).selectOption('finance');
    await page.waitForURL(/category=finance/);
    await page.getByRole('button', { name: 'Index funds basics' }).waitFor();
    await page.waitForFunction(() => ![...document.querySelectorAll('main tbody td')].some((td) => td.textContent === 'tech'));
    await rig.screenshot(page, 'agent-api');
    // The page reads with the operator's credential: browsing the bait is no agent call.
    expect(await agentApiEvents()).toBe(recordedBefore);

    // Edit: the open topic is copied into the form, changed and saved under the same slug.
    await page.getByRole('button', { name: 'Edit in the form' }).click();
    const form = page.getByRole('form', { name: 'Add or replace a topic' });
    await expect(form.getByLabel('Slug').inputValue()).resolves.toBe('dns-for-operators');
    await form.getByLabel('Title').fill('DNS for operators, revised');
    await form.getByRole('button', { name: 'Save topic' }).click();
    await page.getByText('Topic “dns-for-operators” replaced.').waitFor();
    const revised = await rig.t.call({ method: 'GET', url: '/api/topics/dns-for-operators', token: null });
    expect(revised.json()).toMatchObject({ topic: { title: 'DNS for operators, revised', category: 'tech' } });

    await form.getByLabel('Slug').fill('console-written');
    await form.getByLabel('Title').fill('Written in the console');
    await form.getByLabel('Category').selectOption('health');
    await form.getByLabel('Summary').fill('A topic added through the form.');
    await form.getByLabel('Body').fill('Its body, long enough to read.');
    await form.getByRole('button', { name: 'Save topic' }).click();
    await page.getByText('Topic “console-written” added.').waitFor();
    const added = await rig.t.call({ method: 'GET', url: '/api/topics/console-written', token: null });
    expect(added.json()).toMatchObject({ topic: { title: 'Written in the console', category: 'health', body: 'Its body, long enough to read.' } });

    const keys = page.getByRole('form', { name: 'Create an agent API key' });
    await keys.getByLabel('Key name').fill('Example crawler');
    await keys.getByRole('button', { name: 'Create key' }).click();
    const once = page.getByRole('region', { name: 'Agent API key for “Example crawler” (paid)' });
    await once.waitFor();
    const key = (await once.getByLabel('Secret value').textContent())?.trim() ?? '';
    const withKey = await rig.t.call({ method: 'GET', url: '/api/topics', token: key });
    expect(withKey.statusCode).toBe(200);
    expect(withKey.headers['x-ratelimit-limit']).toBe('200');
  });
});

describe.skipIf(skip)('API reference page', () => {
  it('lists the manifest, finds an endpoint, shows its examples and links to its console page', async () => {
    const manifest = (await rig.t.call({ method: 'GET', url: `${V1}/manifest` })).json<{ endpoints: unknown[] }>();
    const page = await rig.page();
    await openPage(page, '/docs');
    await page.getByText(`${manifest.endpoints.length} of ${manifest.endpoints.length} endpoints`).waitFor();

    await page.getByRole('searchbox', { name: 'Search' }).fill('manifest');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/q=manifest/);
    await page.getByRole('button', { name: 'Endpoint manifest' }).click();
    const detail = page.getByRole('region', { name: 'Endpoint getManifest' });
    await detail.waitFor();
    await expect(detail.textContent()).resolves.toMatch(/GET.*\/api\/observatory\/v1\/manifest.*svc-observatory-manifest\.v1/s);
    await rig.screenshot(page, 'docs');

    await page.getByRole('searchbox', { name: 'Search' }).fill('operator audit log');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('row', { name: /Operator audit log/ }).getByRole('link', { name: '/ops/audit' }).click();
    await page.waitForURL(/\/console\/ops\/audit$/);
    await page.getByRole('heading', { name: 'Operator audit log' }).waitFor();
  });
});

describe.skipIf(skip)('narrow window', () => {
  it('fits every page in 420 px without a sideways scroll', async () => {
    const page = await rig.page({ width: 420 });
    for (const path of ['/ops/jobs', '/ops/audit', '/settings/account', '/settings/tokens', '/settings/operators', '/settings/integrations', '/agent-api', '/docs']) {
      await openPage(page, path);
      expect(await overflowsSideways(page), path).toBe(false);
    }
    await rig.screenshot(page, 'docs-narrow');
  });
});
