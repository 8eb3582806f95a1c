import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V1 } from '../helpers/app.ts';
import { browserSkipReason, type ConsoleRig, elementsPastTheWindow, openPage, startConsoleRig } from './browser.ts';
import { settled } from './ops.seed.ts';

/**
 * The compliance pages in a real browser over a seeded instance: the evaluation run from the
 * posture page and its badges; controls with their outcome, evidence and replay, and an override
 * that is then in force; an evidence bundle made and one of its files downloaded through its
 * signed link; the narrator's paragraphs; subprocessors registered, changed, reviewed and
 * archived. What the pages show is held against what the API answers.
 */
const skip = browserSkipReason();
let rig: ConsoleRig;

type Json = Record<string, any>;
async function call(method: 'GET' | 'POST', url: string, payload?: object): Promise<Json> {
  const res = await rig.t.call({ method, url: `${V1}${url}`, ...(payload ? { payload } : {}) });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(200);
  return res.json();
}
const get = (url: string) => call('GET', url);
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** Every body row of a table (by its caption) as its cells' text. */
async function rowsOf(page: Page, table: string): Promise<string[][]> {
  return page
    .getByRole('table', { name: table })
    .evaluate((el) => [...el.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => (td as HTMLElement).innerText.trim())));
}

/** The cells of the row whose first cell is `first` (or, for a framework, ends with its key's line). */
async function rowOf(page: Page, table: string, first: string | RegExp): Promise<string[]> {
  const rows = await rowsOf(page, table);
  const row = rows.find((cells) => (typeof first === 'string' ? cells[0] === first : first.test(cells[0] ?? '')));
  expect(row, `a row ${String(first)} in ${table}: ${JSON.stringify(rows)}`).toBeDefined();
  return row!;
}

beforeAll(async () => {
  if (skip) return;
  rig = await startConsoleRig();
  // A verified audit chain: the controls that read it pass, the backup controls (nothing restored yet) fail.
  expect((await call('POST', '/audit/chain/verify', {})).intact).toBe(true);
}, 240_000);
afterAll(() => rig?.close());

describe.skipIf(skip)('compliance posture and controls', () => {
  it('runs the evaluation from the posture page and shows each framework\'s badge, pass rate and counts', async () => {
    const page = await rig.page();
    await openPage(page, '/compliance');
    const before = (await get('/compliance/posture')).frameworks as Json[];
    expect(before.map((f) => f.badge)).toEqual(['unknown', 'unknown']);
    await page.getByText('No evaluation yet').waitFor();

    await page.getByRole('button', { name: 'Run the evaluation now' }).click();
    const run = page.getByRole('region', { name: 'Run of compliance-evaluate' });
    await run.waitFor({ timeout: 60_000 });
    const recorded = ((await get('/honeypot/ops/cron-health')).recent as Json[]).find((r) => r.job === 'compliance-evaluate')!;
    // Every predicate's input could be read: the run is ok, and the page says so with what it counted.
    expect(recorded).toMatchObject({ outcome: 'ok', trigger: 'manual' });
    await expect(run.getByText('ok', { exact: true }).count()).resolves.toBe(1);
    await expect(run.innerText()).resolves.toContain(`evaluated ${recorded.stats.evaluated}`);
    await page.getByText('No evaluation yet').waitFor({ state: 'detached' });
    await settled(page);

    const posture = (await get('/compliance/posture')).frameworks as Json[];
    expect(posture.map((f) => f.framework)).toEqual(['soc2', 'iso27001']);
    for (const f of posture) {
      expect(f.asOf).not.toBeNull();
      expect(f.badge).not.toBe('unknown');
      const cells = await rowOf(page, 'Posture per framework', new RegExp(`\\s${f.framework}\\n`));
      expect(cells.slice(1, 8)).toEqual([f.badge, `${f.ratePct}%`, String(f.passing), String(f.failing), String(f.manualReview), String(f.nA), String(f.totalControls)]);
    }
    await rig.screenshot(page, 'compliance-posture');

    await page.getByRole('link', { name: `Controls of ${posture[1]!.title}` }).click();
    await page.waitForURL(/\/compliance\/controls\?framework=iso27001$/);
    await settled(page);
    await page.getByRole('table', { name: 'Controls of iso27001 with the outcome in force' }).waitFor();
  }, 120_000);

  it('lists a framework\'s controls with the outcome in force, evidence and replay, and overrides one', async () => {
    const page = await rig.page();
    await openPage(page, '/compliance/controls?framework=soc2');
    const table = 'Controls of soc2 with the outcome in force';
    const view = await get('/compliance/frameworks/soc2');
    const controls = view.controls as Json[];
    expect(await page.getByRole('table', { name: table }).locator('tbody tr').count()).toBe(controls.length);
    for (const c of controls) {
      const cells = await rowOf(page, table, c.controlId);
      expect(cells.slice(0, 5), c.id).toEqual([c.controlId, c.title, c.category, c.severity, c.latestOutcome ?? 'not evaluated']);
      expect(cells[5], c.id).toBe(c.latestSummary ?? '—');
      expect(cells[6], c.id).toBe(c.latestEvaluatedBy ?? '—');
    }

    // A1.2 (a restore verified within 7 days) fails: nothing was restored. Its evidence is the
    // backups ladder, which the console shows on /backups.
    const a12 = controls.find((c) => c.controlId === 'A1.2')!;
    expect(a12).toMatchObject({ latestOutcome: 'fail', latestEvaluatedBy: 'job', latestEvidenceUrl: expect.stringMatching(/\/backups\/ladder$/) });
    const evidence = page.getByRole('table', { name: table }).getByRole('link', { name: 'Evidence of A1.2' });
    await expect(evidence.getAttribute('href')).resolves.toBe('/console/backups');
    await expect(evidence.getAttribute('title')).resolves.toBe(a12.latestEvidenceUrl);

    // The outcome filter lives in the address.
    await page.getByLabel('Outcome').selectOption('fail');
    await page.waitForURL(/outcome=fail/);
    const failing = controls.filter((c) => c.latestOutcome === 'fail').map((c) => c.controlId);
    await expect.poll(() => page.getByRole('table', { name: table }).locator('tbody tr td:first-child').allInnerTexts()).toEqual(failing);

    // Its detail: the replay recomputes the stored evaluation.
    await page.getByRole('link', { name: 'Open A1.2' }).click();
    await page.waitForURL(/control=A1\.2/);
    const replay = await get(`/compliance/replay/${a12.latestEvaluationId}`);
    expect(replay).toMatchObject({ storedOutcome: 'fail', replayedOutcome: 'fail', matches: true, digestMatches: true });
    const replayBox = page.getByRole('region', { name: `Replay of evaluation ${a12.latestEvaluationId}` });
    await replayBox.waitFor();
    await expect(replayBox.innerText()).resolves.toContain('replay matches');
    await expect(replayBox.innerText()).resolves.toContain('digest matches');
    await expect(replayBox.getByTestId('stored-outcome').innerText()).resolves.toBe(`fail ${replay.storedSummary}`);
    await expect(replayBox.getByTestId('replayed-outcome').innerText()).resolves.toBe(`fail ${replay.replayedSummary}`);
    await expect(replayBox.innerText()).resolves.toContain(replay.observedSha256);
    await replayBox.getByText('Observed input (JSON)').click();
    expect(JSON.parse(await replayBox.getByTestId('observed').innerText())).toEqual(replay.observed);
    await rig.screenshot(page, 'compliance-controls-replay');

    // The override: pass, with why and evidence; it is the outcome in force at once.
    const form = page.getByRole('form', { name: 'Override A1.2' });
    await form.getByLabel('Outcome').selectOption('pass');
    await form.getByLabel('Note').fill('Restores are rehearsed in the staging region; see ticket OPS-2211.');
    await form.getByLabel('Evidence (optional JSON)').fill('{ticket: OPS-2211}');
    await form.getByRole('button', { name: 'Override the outcome' }).click();
    await form.getByText('The evidence is not JSON').waitFor();
    await form.getByLabel('Evidence (optional JSON)').fill('{"ticket": "OPS-2211"}');
    await form.getByRole('button', { name: 'Override the outcome' }).click();
    const stored = await page.getByText(/^Override stored as evaluation /).innerText();
    const evaluationId = stored.replace(/^Override stored as evaluation /, '').replace(/\.$/, '');

    const after = ((await get('/compliance/frameworks/soc2')).controls as Json[]).find((c) => c.controlId === 'A1.2')!;
    expect(after).toMatchObject({ latestOutcome: 'pass', latestEvaluationId: evaluationId, latestEvaluatedBy: expect.stringMatching(/^operator:/) });
    expect(after.latestSummary).toContain('Restores are rehearsed in the staging region');
    await expect.poll(() => page.getByTestId('outcome-in-force').innerText()).toBe(`pass override by ${after.latestEvaluatedBy}`);
    // The table follows (the filter still shows failing controls only: A1.2 has left it).
    await expect.poll(() => page.getByRole('table', { name: table }).locator('tbody tr td:first-child').allInnerTexts()).toEqual(failing.filter((id) => id !== 'A1.2'));
    // The replay follows the evaluation now in force: the override's own input.
    const overrideReplay = await get(`/compliance/replay/${evaluationId}`);
    expect(overrideReplay).toMatchObject({ storedOutcome: 'pass', observed: { ticket: 'OPS-2211' }, digestMatches: true });
    const newReplay = page.getByRole('region', { name: `Replay of evaluation ${evaluationId}` });
    await newReplay.waitFor();
    await expect(newReplay.getByTestId('replayed-outcome').innerText()).resolves.toBe(`${overrideReplay.replayedOutcome} ${overrideReplay.replayedSummary}`);
    await expect(newReplay.innerText()).resolves.toContain(overrideReplay.matches ? 'replay matches' : 'replay differs');
    await rig.screenshot(page, 'compliance-controls-override');

    // The posture counts it.
    await openPage(page, '/compliance');
    const soc2 = ((await get('/compliance/posture')).frameworks as Json[]).find((f) => f.framework === 'soc2')!;
    const cells = await rowOf(page, 'Posture per framework', /\ssoc2\n/);
    expect(cells[3]).toBe(String(soc2.passing));

    // The evidence link opens the console's backups page.
    await openPage(page, '/compliance/controls?framework=soc2&control=CC7.2');
    await page.getByRole('region', { name: 'Control CC7.2' }).getByRole('link', { name: 'Evidence of CC7.2' }).click();
    await page.waitForURL(/\/console\/audit$/);
  }, 120_000);
});

describe.skipIf(skip)('evidence bundles', () => {
  it('makes a bundle of a framework, lists its files with their digests, and downloads one through its signed link', async () => {
    const page = await rig.page();
    await openPage(page, '/compliance/bundles?framework=iso27001');
    await page.getByText('No bundle made on this page yet').waitFor();
    const [made] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/compliance/bundle') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Make a bundle of iso27001' }).click(),
    ]);
    expect(made.status()).toBe(200);
    const bundle = (await made.json()) as Json;
    const box = page.getByRole('region', { name: `Bundle ${bundle.bundleId}` });
    await box.waitFor();

    const rows = await rowsOf(page, 'Files of the bundle, in manifest order');
    expect(rows.map((r) => [r[0], r[3]])).toEqual((bundle.artifacts as Json[]).map((a) => [a.name, a.sha256]));
    expect(rows.map((r) => r[0])).toEqual(['iso27001-snapshot.json', 'iso27001-controls.csv', 'iso27001-summary.pdf']);
    const manifest = await box.getByTestId('manifest').innerText();
    expect(manifest.trim()).toBe(bundle.manifestText.trim());
    for (const a of bundle.artifacts as Json[]) expect(manifest).toContain(`${a.sha256}  ${a.name}  ${a.bytes}`);
    await expect(box.getByTestId('manifest-sha256').innerText()).resolves.toBe(sha256(bundle.manifestText));
    await rig.screenshot(page, 'compliance-bundles');

    // The PDF through its link: the bytes hash to the digest listed beside it.
    const pdf = (bundle.artifacts as Json[]).find((a) => a.kind === 'pdf')!;
    const link = box.getByRole('link', { name: `Download ${pdf.name}` });
    await expect(link.getAttribute('title')).resolves.toBe(pdf.url);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe(pdf.name);
    const bytes = await readFile((await download.path())!);
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(bytes.length).toBe(pdf.bytes);
    expect(sha256(bytes)).toBe(pdf.sha256);
    expect(rows.find((r) => r[0] === pdf.name)![3]).toBe(sha256(bytes));

    // The manifest's own link gives the text shown, whose digest is manifestSha256.
    const [manifestFile] = await Promise.all([page.waitForEvent('download'), box.getByRole('link', { name: 'Download manifest.txt' }).click()]);
    expect(sha256(await readFile((await manifestFile.path())!))).toBe(bundle.manifestSha256);
  }, 120_000);
});

describe.skipIf(skip)('the narrator', () => {
  it('shows the built-in paragraph at once, and the asked one with its scrub and its run\'s replay', async () => {
    const page = await rig.page();
    await openPage(page, '/compliance/narrator');
    const template = await get('/compliance/narrator');
    expect(template.text.length).toBeGreaterThan(40);
    const builtIn = page.getByRole('region', { name: 'Built-in paragraph' });
    await expect(builtIn.getByTestId('paragraph').innerText()).resolves.toBe(template.text);
    await expect(builtIn.getByTestId('cited-frameworks').locator('code').allInnerTexts()).resolves.toEqual(template.citedFrameworks);
    await expect(builtIn.getByTestId('cited-controls').locator('code').allInnerTexts()).resolves.toEqual(template.citedControlIds);
    await expect(builtIn.innerText()).resolves.toContain(template.inputDigest);
    await expect(builtIn.innerText()).resolves.toContain('none recorded');

    const [asked] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/compliance/narrator') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Ask the model' }).click(),
    ]);
    expect(asked.status()).toBe(200);
    const answer = (await asked.json()) as Json;
    const box = page.getByRole('region', { name: 'Asked paragraph' });
    await box.waitFor();
    await expect(box.getByTestId('paragraph').innerText()).resolves.toBe(answer.text);
    await expect(box.innerText()).resolves.toContain(answer.modelOrStub);
    await expect(box.getByTestId('cited-controls').locator('code').allInnerTexts()).resolves.toEqual(answer.citedControlIds);
    await expect(box.getByTestId('stripped-frameworks').locator('code').allInnerTexts()).resolves.toEqual(answer.strippedFrameworks);
    await expect(box.getByTestId('scrubbed').innerText()).resolves.toBe(answer.scrubbedText || 'none');
    expect(answer.replayUrl).toMatch(new RegExp(`/empire/triage/replay/${answer.runId}$`));
    const replay = box.getByRole('link', { name: `Replay of run ${answer.runId}` });
    await expect(replay.getAttribute('href')).resolves.toBe(`/console/empire/triage/runs?run=${answer.runId}`);
    await rig.screenshot(page, 'compliance-narrator');
    await replay.click();
    await page.waitForURL(new RegExp(`/empire/triage/runs\\?run=${answer.runId}$`));
    await settled(page);
  }, 120_000);
});

describe.skipIf(skip)('subprocessors', () => {
  it('registers, changes, reviews and archives subprocessors through the page', async () => {
    const page = await rig.page();
    await openPage(page, '/compliance/subprocessors');
    await page.getByText('No subprocessor is registered').waitFor();
    const form = page.getByRole('form', { name: 'Register or change a subprocessor' });
    const table = 'Subprocessors, by name';

    await form.getByLabel('Name').fill('Postmark');
    await form.getByLabel('Role').selectOption('email');
    await form.getByLabel('Data it can reach').fill('Operator email addresses and alert texts');
    await form.getByLabel('Region').fill('US');
    await form.getByLabel('Notes').fill('Sends alert notifications.');
    await form.getByLabel('Website URL').fill('https://postmarkapp.com');
    await form.getByLabel('Contract or DPA URL').fill('https://postmarkapp.com/eu-privacy');
    await form.getByLabel('Record a review by me now').check();
    await form.getByRole('button', { name: 'Save the subprocessor' }).click();
    await page.getByRole('status').filter({ hasText: 'Postmark saved.' }).waitFor();
    let rows = (await get('/compliance/subprocessors')).rows as Json[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      name: 'Postmark',
      role: 'email',
      dataAccess: 'Operator email addresses and alert texts',
      region: 'US',
      notes: 'Sends alert notifications.',
      websiteUrl: 'https://postmarkapp.com',
      contractUrl: 'https://postmarkapp.com/eu-privacy',
      archivedAt: null,
    });
    expect(rows[0]!.lastReviewedAt).not.toBeNull();
    await expect.poll(async () => (await rowOf(page, table, 'Postmark')).slice(0, 4)).toEqual(['Postmark', 'email', 'Operator email addresses and alert texts', 'US']);
    // The form starts empty again.
    await expect(form.getByLabel('Name').inputValue()).resolves.toBe('');

    await form.getByLabel('Name').fill('Sentry');
    await form.getByLabel('Role').selectOption('observability');
    await form.getByLabel('Region').fill('US');
    await form.getByRole('button', { name: 'Save the subprocessor' }).click();
    await page.getByRole('status').filter({ hasText: 'Sentry saved.' }).waitFor();
    await expect.poll(async () => (await rowOf(page, table, 'Sentry'))[5]).toBe('never');

    // Changing a row starts from its values; the name picks the row.
    await page.getByRole('button', { name: 'Change Sentry' }).click();
    await page.getByRole('heading', { name: 'Change Sentry' }).waitFor();
    await expect(form.getByLabel('Region').inputValue()).resolves.toBe('US');
    await expect(form.getByLabel('Role').inputValue()).resolves.toBe('observability');
    await form.getByLabel('Region').fill('EU');
    await form.getByRole('button', { name: 'Save the subprocessor' }).click();
    await page.getByRole('status').filter({ hasText: 'Sentry saved.' }).waitFor();
    await expect.poll(async () => (await rowOf(page, table, 'Sentry'))[3]).toBe('EU');

    await page.getByRole('button', { name: 'Review Sentry' }).click();
    await page.getByRole('status').filter({ hasText: 'Sentry reviewed.' }).waitFor();
    const sentry = ((await get('/compliance/subprocessors')).rows as Json[]).find((r) => r.name === 'Sentry')!;
    expect(sentry).toMatchObject({ region: 'EU', role: 'observability', archivedAt: null });
    expect(sentry.lastReviewedAt).not.toBeNull();
    expect(sentry.reviewerOperatorId).toEqual(expect.any(String));
    await expect.poll(async () => (await rowOf(page, table, 'Sentry'))[5]).not.toBe('never');

    await page.getByRole('button', { name: 'Archive Sentry' }).click();
    await page.getByRole('status').filter({ hasText: 'Sentry archived.' }).waitFor();
    await expect.poll(async () => (await rowsOf(page, table)).map((r) => r[0])).toEqual(['Postmark']);
    rows = (await call('GET', '/compliance/subprocessors?includeArchived=1')).rows as Json[];
    expect(rows.find((r) => r.name === 'Sentry')!.archivedAt).not.toBeNull();

    // The box follows the address, which React Router changes in a transition: click, then wait for the address.
    await page.getByLabel('Show archived').click();
    await page.waitForURL(/archived=1/);
    await expect.poll(() => page.getByLabel('Show archived').isChecked()).toBe(true);
    await settled(page);
    await expect.poll(async () => (await rowsOf(page, table)).map((r) => [r[0], r[6]!.split(/\s/)[0]])).toEqual([
      ['Postmark', 'in'],
      ['Sentry', 'archived'],
    ]);
    await expect(page.getByRole('button', { name: 'Archive Sentry' }).count()).resolves.toBe(0);
    await rig.screenshot(page, 'compliance-subprocessors');
  }, 120_000);
});

describe.skipIf(skip)('in a narrow window', () => {
  it('every compliance page fits 420 pixels without scrolling sideways (wide tables scroll inside their box)', async () => {
    const page = await rig.page({ width: 420 });
    for (const path of ['/compliance', '/compliance/controls?framework=soc2&control=A1.2', '/compliance/bundles', '/compliance/narrator', '/compliance/subprocessors?archived=1']) {
      await openPage(page, path);
      if (path === '/compliance/bundles') {
        await page.getByRole('button', { name: 'Make a bundle of soc2' }).click();
        await page.getByRole('table', { name: 'Files of the bundle, in manifest order' }).waitFor();
      }
      const wide = await elementsPastTheWindow(page);
      expect(wide, path).toEqual([]);
    }
    await rig.screenshot(page, 'compliance-narrow');
  }, 120_000);
});
