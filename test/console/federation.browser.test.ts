import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../helpers/app.ts';
import { ingestEmpire } from '../helpers/empire.ts';
import { browserSkipReason, type ConsoleRig, elementsPastTheWindow, openPage, startConsoleRig } from './browser.ts';
import { settled } from './ops.seed.ts';
import { freePort } from '../helpers/ports.ts';

/**
 * The federation pages in a real browser over two loopback deployments sharing a bridge token:
 * `alpha` (the rig the browser signs in to) and `bravo` (its own database), plus `charlie`, a
 * registered region nobody listens for. Regions are added and changed through the form; the parity
 * check, the replay against a pinned digest, the region SLO and the federated overview are held
 * against what the API answers.
 */
const skip = browserSkipReason();
const BRIDGE_TOKEN = 'console-bridge-token-0123456789abcdefghijklmn';
let rig: ConsoleRig;
let bravo: TestApp;
let bravoUrl = '';
let charlieUrl = '';

type Json = Record<string, any>;
async function call(t: TestApp, method: 'GET' | 'POST', url: string, payload?: object): Promise<Json> {
  const res = await t.call({ method, url: `${V1}${url}`, ...(payload ? { payload } : {}) });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(200);
  return res.json();
}
const get = (url: string) => call(rig.t, 'GET', url);

/** Every body row of a table (by its caption) as its cells' text. */
async function rowsOf(page: Page, table: string): Promise<string[][]> {
  return page
    .getByRole('table', { name: table })
    .evaluate((el) => [...el.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => (td as HTMLElement).innerText.trim())));
}

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
const events = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, eventType: 'crawl.page', ts: minutesAgo(10 + i), tenant: 'docs-mirror' }));

beforeAll(async () => {
  if (skip) return;
  const bravoPort = await freePort();
  const charliePort = await freePort();
  const env = {
    OBSERVATORY_BRIDGE_TOKEN: BRIDGE_TOKEN,
    OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
    OBSERVATORY_BRIDGE_PEER_HOSTS: '127.0.0.1',
    OBSERVATORY_OUTBOUND_ALLOWED_PORTS: `${bravoPort},${charliePort}`,
    OBSERVATORY_FEDERATION_TIMEOUT_MS: '5000',
  };
  rig = await startConsoleRig({ env: { ...env, OBSERVATORY_REGION: 'alpha' } });
  bravo = await startTestApp({ env: { ...env, OBSERVATORY_REGION: 'bravo' } });
  await bravo.app.server.listen({ host: '127.0.0.1', port: bravoPort });
  bravoUrl = `http://127.0.0.1:${bravoPort}`;
  charlieUrl = `http://127.0.0.1:${charliePort}`;
  // crawler-lab sends to both regions, probe-kit to bravo only.
  expect((await ingestEmpire(rig.t, 'crawler-lab', events('alpha-crawl', 3))).statusCode).toBe(200);
  expect((await ingestEmpire(bravo, 'crawler-lab', events('bravo-crawl', 2))).statusCode).toBe(200);
  expect((await ingestEmpire(bravo, 'probe-kit', [{ id: 'bravo-probe-0', eventType: 'probe.sent', ts: minutesAgo(5), tenant: 'acme' }])).statusCode).toBe(200);
}, 240_000);
afterAll(async () => {
  await bravo?.close();
  await rig?.close();
});

describe.skipIf(skip)('regions', () => {
  it('shows the seed, adds and changes regions through the form, and marks this deployment', async () => {
    const page = await rig.page();
    await openPage(page, '/federation/regions');
    const seed = await get('/empire/regions');
    expect(seed).toMatchObject({ currentRegion: 'alpha', seeded: true });
    await page.getByText('The registry is empty: this is the built-in seed row').waitFor();
    await expect(page.getByTestId('current-region').innerText()).resolves.toBe('alpha');
    expect((await rowsOf(page, 'Regions, by key')).map((r) => r[0])).toEqual(['alpha this deployment']);

    const form = page.getByRole('form', { name: 'Add or update a region' });
    const add = async (key: string, baseUrl: string, name: string, primary = false) => {
      await form.getByLabel('Region key').fill(key);
      await form.getByLabel('Display name').fill(name);
      await form.getByLabel('Base URL').fill(baseUrl);
      await form.getByLabel('Latency tier (seconds)').fill('600');
      if (primary) await form.getByLabel(/Primary region/).check();
      await form.getByRole('button', { name: 'Save the region' }).click();
      await page.getByRole('status').filter({ hasText: `${key} saved.` }).waitFor();
      await expect.poll(() => form.getByLabel('Region key').inputValue()).toBe('');
    };
    await add('alpha', rig.baseUrl, 'Alpha', true);
    await add('bravo', bravoUrl, 'Bravo');
    await add('charlie', charlieUrl, 'Charlie');

    const listed = await get('/empire/regions');
    expect(listed.seeded).toBe(false);
    expect(listed.rows.map((r: Json) => [r.key, r.displayName, r.status, r.isPrimary, r.isCurrent, r.latencyTierSec])).toEqual([
      ['alpha', 'Alpha', 'active', true, true, 600],
      ['bravo', 'Bravo', 'active', false, false, 600],
      ['charlie', 'Charlie', 'active', false, false, 600],
    ]);
    await expect
      .poll(async () => (await rowsOf(page, 'Regions, by key')).map((r) => r.slice(0, 6)))
      .toEqual([
        ['alpha this deployment', 'Alpha', listed.rows[0].baseUrl, 'active', 'primary', '600 s'],
        ['bravo', 'Bravo', listed.rows[1].baseUrl, 'active', '—', '600 s'],
        ['charlie', 'Charlie', listed.rows[2].baseUrl, 'active', '—', '600 s'],
      ]);

    // Changing a row starts from its values; the key picks the row.
    await page.getByRole('button', { name: 'Change bravo' }).click();
    await page.getByRole('heading', { name: 'Change bravo' }).waitFor();
    await expect(form.getByLabel('Display name').inputValue()).resolves.toBe('Bravo');
    await form.getByLabel('Display name').fill('Bravo (Frankfurt)');
    await form.getByLabel('Database host').fill('db-bravo.internal');
    await form.getByRole('button', { name: 'Save the region' }).click();
    await page.getByRole('status').filter({ hasText: 'bravo saved.' }).waitFor();
    const changed = ((await get('/empire/regions')).rows as Json[]).find((r) => r.key === 'bravo')!;
    expect(changed).toMatchObject({ displayName: 'Bravo (Frankfurt)', databaseHost: 'db-bravo.internal', baseUrl: listed.rows[1].baseUrl });
    await expect.poll(async () => (await rowsOf(page, 'Regions, by key'))[1]!.slice(0, 2)).toEqual(['bravo', 'Bravo (Frankfurt)']);
    await rig.screenshot(page, 'federation-regions');
  }, 120_000);

  it('shows this deployment\'s tuple, checks parity over the regions, and replays against the pinned digest', async () => {
    const page = await rig.page();
    await openPage(page, '/federation/regions');
    const local = await get('/empire/region-digest');
    const tuple = await rowsOf(page, 'Digest tuple of this deployment');
    expect(tuple).toEqual([[local.tuple.regionKey, local.tuple.migrationDigest, local.tuple.graphDigest, local.tuple.complianceDigest]]);

    const [checked] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/empire/region-digest') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Check parity' }).click(),
    ]);
    expect(checked.status()).toBe(200);
    const parity = (await checked.json()) as Json;
    expect(parity).toMatchObject({ participating: ['alpha', 'bravo'], failed: [{ region: 'charlie', reason: 'unreachable' }], migrationParity: 'matched', migrationDriftDetails: [] });
    const box = page.getByRole('region', { name: 'Parity check' });
    await box.waitFor();
    await expect(box.getByTestId('federation-digest').innerText()).resolves.toBe(parity.federationDigest);
    await expect(box.getByTestId('migration-parity').innerText()).resolves.toBe('matched');
    await expect(box.getByTestId('participating').innerText()).resolves.toMatch(/alpha\s+bravo/);
    await expect(box.getByTestId('failed').innerText()).resolves.toMatch(/charlie\s+unreachable/);
    expect((await rowsOf(page, 'Digest tuples of the participating regions')).map((r) => r[0])).toEqual(['alpha (this deployment)', 'bravo']);
    expect((await rowsOf(page, 'Digest tuples of the participating regions')).map((r) => r[1])).toEqual((parity.tuples as Json[]).map((t) => t.migrationDigest));
    await rig.screenshot(page, 'federation-parity');

    // Pin it, and replay: nothing changed, so the live digest matches and no region drifted.
    await box.getByRole('button', { name: 'Pin this digest for a replay' }).click();
    const replayForm = page.getByRole('form', { name: 'Federation replay' });
    await expect.poll(() => replayForm.getByLabel('Pinned federation digest').inputValue()).toBe(parity.federationDigest);
    expect(JSON.parse(await replayForm.getByLabel('Pinned tuples (optional JSON)').inputValue())).toEqual(parity.tuples);
    await replayForm.getByRole('button', { name: 'Replay against the pinned digest' }).click();
    const replay = page.getByRole('region', { name: 'Federation replay' });
    await replay.waitFor();
    await expect(replay.innerText()).resolves.toContain('digest matches');
    await expect(replay.getByTestId('live-digest').innerText()).resolves.toBe(parity.federationDigest);
    expect((await rowsOf(page, 'Region by region against the pinned tuples')).map((r) => r.slice(0, 2))).toEqual([
      ['alpha', 'same'],
      ['bravo', 'same'],
    ]);

    // A pinned digest from another time, bravo's tuple changed in it: the replay says so, region by region.
    const other = (parity.tuples as Json[]).map((t) => (t.regionKey === 'bravo' ? { ...t, graphDigest: 'f'.repeat(64) } : t));
    await replayForm.getByLabel('Pinned federation digest').fill('0'.repeat(64));
    await replayForm.getByLabel('Pinned tuples (optional JSON)').fill('[not json');
    await replayForm.getByRole('button', { name: 'Replay against the pinned digest' }).click();
    await replayForm.getByText('The pinned tuples are not JSON').waitFor();
    await replayForm.getByLabel('Pinned tuples (optional JSON)').fill(JSON.stringify(other));
    await replayForm.getByRole('button', { name: 'Replay against the pinned digest' }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Federation replay' }).innerText()).toContain('digest differs');
    await expect
      .poll(async () => (await rowsOf(page, 'Region by region against the pinned tuples')).map((r) => r.slice(0, 2)))
      .toEqual([
        ['alpha', 'same'],
        ['bravo', 'drifted'],
      ]);
    const api = await call(rig.t, 'POST', '/empire/federation-replay', { pinnedDigest: '0'.repeat(64), pinnedTuples: other });
    expect(api).toMatchObject({ matches: false, liveDigest: parity.federationDigest, failed: [{ region: 'charlie', reason: 'unreachable' }] });

    // "Pin the current digest" asks the regions itself.
    await replayForm.getByLabel('Pinned federation digest').fill('');
    await page.getByRole('button', { name: 'Pin the current digest' }).click();
    await expect.poll(() => replayForm.getByLabel('Pinned federation digest').inputValue()).toBe(parity.federationDigest);
    await rig.screenshot(page, 'federation-replay');
  }, 120_000);

  it('lists the region SLO of every active region, and this deployment alone on request', async () => {
    const page = await rig.page();
    await openPage(page, '/federation/regions');
    const slo = await get('/empire/region-slo');
    expect((slo.rows as Json[]).map((r) => r.regionKey)).toEqual(['alpha', 'bravo']);
    expect(slo.failed).toEqual([{ region: 'charlie', reason: 'unreachable' }]);
    const rows = await rowsOf(page, 'Region SLO per region');
    expect(rows.map((r) => r[0]!.split(/\s/)[0])).toEqual(['alpha', 'bravo']);
    for (const [i, r] of (slo.rows as Json[]).entries()) {
      const cells = rows[i]!;
      expect(cells[1], r.regionKey).toBe({ green: 'ok', yellow: 'warn', red: 'bad', unknown: 'too few samples' }[r.badge as string]);
      expect(cells[2]).toBe(r.p95LatencyMs === null ? '—' : `${r.p95LatencyMs.toLocaleString('en-GB', { maximumFractionDigits: 1 })} ms`);
      expect(cells[3]).toBe(r.okRatePct === null ? '—' : `${r.okRatePct.toLocaleString('en-GB', { maximumFractionDigits: 2 })}%`);
      expect(cells[7]).toBe(r.replayParity);
    }
    await expect(page.getByRole('list', { name: 'Regions the SLO could not ask' }).innerText()).resolves.toMatch(/charlie\s+unreachable/);

    await page.getByLabel('This deployment only').click();
    await page.waitForURL(/local=1/);
    await expect.poll(async () => (await rowsOf(page, 'Region SLO per region')).map((r) => [r[0]!.split(/\s/)[0], r[7]])).toEqual([['alpha', 'unknown']]);
    await settled(page);
    await rig.screenshot(page, 'federation-region-slo');
  }, 120_000);
});

describe.skipIf(skip)('the federated overview', () => {
  it('merges every region\'s toolsets with per-region counts and lists the failed region', async () => {
    const page = await rig.page();
    await openPage(page, '/federation/overview');
    const overview = await get('/empire/overview/federated');
    expect(overview.participatingRegions).toEqual(['alpha', 'bravo']);
    expect(overview.failedRegions).toEqual([{ region: 'charlie', reason: 'unreachable' }]);
    await expect(page.getByTestId('participating').innerText()).resolves.toMatch(/alpha\s+bravo/);
    await expect(page.getByTestId('failed').innerText()).resolves.toMatch(/charlie\s+unreachable/);

    const crawler = (overview.toolsets as Json[]).find((t) => t.toolset === 'crawler-lab')!;
    expect(crawler).toMatchObject({ events24h: 5, perRegion: { alpha: 3, bravo: 2 } });
    const probe = (overview.toolsets as Json[]).find((t) => t.toolset === 'probe-kit')!;
    expect(probe).toMatchObject({ events24h: 1, perRegion: { bravo: 1 } });
    const rows = await rowsOf(page, 'Toolsets merged over the regions');
    expect(rows.map((r) => [r[0], r[2], r[3], r[4]!.replace(/\s+/g, ' ')])).toEqual([
      ['crawler-lab', '5', String(crawler.events7d), 'alpha 3 bravo 2'],
      ['probe-kit', '1', String(probe.events7d), 'bravo 1'],
    ]);
    // The sparkline carries the merged hours.
    await expect(page.getByRole('img', { name: /^crawler-lab, events per hour/ }).getAttribute('aria-label')).resolves.toContain((crawler.sparkline24h as number[]).join(', '));
    await rig.screenshot(page, 'federation-overview');
  }, 120_000);
});

describe.skipIf(skip)('in a narrow window', () => {
  it('the federation pages fit 420 pixels without scrolling sideways (wide tables scroll inside their box)', async () => {
    const page = await rig.page({ width: 420 });
    for (const path of ['/federation/regions', '/federation/overview']) {
      await openPage(page, path);
      if (path === '/federation/regions') {
        await page.getByRole('button', { name: 'Check parity' }).click();
        await page.getByRole('region', { name: 'Parity check' }).waitFor();
      }
      const wide = await elementsPastTheWindow(page);
      expect(wide, path).toEqual([]);
    }
    await rig.screenshot(page, 'federation-narrow');
  }, 120_000);
});
