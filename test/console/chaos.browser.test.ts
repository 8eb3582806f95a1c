import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chaosRuns } from '../../src/domains/chaos/schema.ts';
import { V1 } from '../helpers/app.ts';
import { browserSkipReason, type ConsoleRig, elementsPastTheWindow, openPage, startConsoleRig } from './browser.ts';
import { settled } from './ops.seed.ts';

/**
 * The chaos pages in a real browser over a seeded instance where chaos may act on HTTP routes
 * only (OBSERVATORY_CHAOS_ALLOW=http). Experiments are registered through the page's form (and
 * a refused one shows the service's sentence), paused, resumed and retired with its buttons; the
 * freeze switch is thrown and released from its page; a manual run is started with "Run now" and
 * aborted by the freeze; finished runs (seeded straight into chaos_runs, as a schedule would have
 * left them) are listed with their measured recovery against the SLO and filtered.
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
const experimentsNow = async (query = '') => (await get(`/chaos/experiments${query}`)).experiments as Json[];
const bySlug = async (slug: string) => (await experimentsNow('?limit=200')).find((e) => e.slug === slug)!;

/** Every body row of a table (by its caption) as its cells' text. */
async function rowsOf(page: Page, table: string): Promise<string[][]> {
  return page
    .getByRole('table', { name: table })
    .evaluate((el) => [...el.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => (td as HTMLElement).innerText.trim())));
}

const EXPERIMENTS = 'Chaos experiments, newest first';
const RUNS = 'Chaos runs, newest first';
/** A scheduled job a cron-skip-one experiment may name (its blast radius, scheduler, is not allowed here). */
let scheduledJob = '';

/** Fills the register form and submits it. */
async function register(page: Page, fields: { slug: string; kind: string; target: string; description?: string; recoverySloSec?: string; severity?: string }) {
  const form = page.getByRole('form', { name: 'Register a chaos experiment' });
  await form.getByLabel('Slug').fill(fields.slug);
  await form.getByRole('combobox', { name: 'Kind' }).selectOption(fields.kind);
  await form.getByLabel('Target').fill(fields.target);
  await form.getByLabel('Description').fill(fields.description ?? '');
  await form.getByLabel('Recovery SLO (seconds)').fill(fields.recoverySloSec ?? '');
  await form.getByRole('combobox', { name: 'Severity' }).selectOption(fields.severity ?? '');
  await form.getByRole('button', { name: 'Register' }).click();
}

beforeAll(async () => {
  if (skip) return;
  rig = await startConsoleRig({ env: { OBSERVATORY_CHAOS_ALLOW: 'http' } });
  const jobs = (await get('/honeypot/ops/cron-health')).latestPerJob as Json[];
  scheduledJob = jobs.find((j) => j.schedule && j.job !== 'chaos-schedule')!.job;
  expect(scheduledJob, 'a scheduled job').toBeTruthy();
}, 240_000);
afterAll(() => rig?.close());

describe.skipIf(skip)('the experiments page', () => {
  it('registers experiments through the form and shows a refused registration in the service\'s words', async () => {
    const page = await rig.page();
    await openPage(page, '/chaos/experiments');
    await page.getByText('No experiment registered yet.').waitFor();

    await register(page, { slug: 'latency-search', kind: 'synthetic-latency', target: 'searchTopics', description: 'Slow topic search down.', severity: 'major' });
    await page.getByTestId('done').filter({ hasText: 'Experiment latency-search registered (synthetic-latency, blast radius http' }).waitFor();
    await register(page, { slug: 'skip-one-job', kind: 'cron-skip-one', target: scheduledJob, recoverySloSec: '600' });
    await page.getByTestId('done').filter({ hasText: 'Experiment skip-one-job registered (cron-skip-one, blast radius scheduler, recovery SLO 600 s)' }).waitFor();

    const listed = await experimentsNow();
    expect(listed.map((e) => e.slug)).toEqual(['skip-one-job', 'latency-search']);
    expect(listed[1]).toMatchObject({ kind: 'synthetic-latency', target: 'searchTopics', description: 'Slow topic search down.', severity: 'major', status: 'active', blastRadius: 'http' });
    await expect.poll(async () => (await rowsOf(page, EXPERIMENTS)).length).toBe(2);
    const rows = await rowsOf(page, EXPERIMENTS);
    expect(rows.map((r) => r.slice(0, 9))).toEqual(
      listed.map((e) => [e.slug, e.kind, e.target, e.description || '—', e.blastRadius, `${e.recoverySloSec} s`, `${e.cooldownMinutes} min`, e.severity, e.status]),
    );
    await rig.screenshot(page, 'chaos-experiments-registered');

    // The same slug again: 400, and the page shows the service's sentence; the fields keep what was typed.
    const body = { slug: 'latency-search', kind: 'synthetic-latency', target: '/v1/agent-api/' };
    const refused = await rig.t.call({ method: 'POST', url: `${V1}/chaos/experiments`, payload: body });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ ok: false, reason: 'slug-taken' });
    await register(page, body);
    const form = page.getByRole('form', { name: 'Register a chaos experiment' });
    const note = form.getByRole('alert');
    await note.waitFor();
    await expect(note.innerText()).resolves.toContain(refused.json().human);
    await expect(note.innerText()).resolves.toContain('400 slug-taken');
    await expect(form.getByLabel('Target').inputValue()).resolves.toBe('/v1/agent-api/');

    // A target the kind cannot act on: refused with its own sentence.
    const unknown = await rig.t.call({ method: 'POST', url: `${V1}/chaos/experiments`, payload: { slug: 'skip-nothing', kind: 'cron-skip-one', target: 'no-such-job' } });
    expect(unknown.statusCode).toBe(400);
    await register(page, { slug: 'skip-nothing', kind: 'cron-skip-one', target: 'no-such-job' });
    await expect.poll(() => note.innerText()).toContain(unknown.json().human);
    expect((await experimentsNow()).length).toBe(2);
    await rig.screenshot(page, 'chaos-experiments-refused');
  }, 180_000);

  it('pauses, resumes and retires an experiment with its buttons', async () => {
    await call('POST', '/chaos/experiments', { slug: 'readonly-primary', kind: 'prisma-readonly-window', target: 'primary' });
    const page = await rig.page();
    await openPage(page, '/chaos/experiments');
    const rowOf = async () => (await rowsOf(page, EXPERIMENTS)).find((r) => r[0] === 'readonly-primary')!;

    await page.getByRole('button', { name: 'Pause readonly-primary' }).click();
    await page.getByTestId('done').filter({ hasText: 'Experiment readonly-primary paused.' }).waitFor();
    expect((await bySlug('readonly-primary')).status).toBe('paused');
    await expect.poll(async () => (await rowOf())[8]).toBe('paused');
    await expect(page.getByRole('button', { name: 'Run readonly-primary now' }).count()).resolves.toBe(0);

    await page.getByRole('button', { name: 'Resume readonly-primary' }).click();
    await page.getByTestId('done').filter({ hasText: 'Experiment readonly-primary resumed.' }).waitFor();
    expect((await bySlug('readonly-primary')).status).toBe('active');
    await expect.poll(async () => (await rowOf())[8]).toBe('active');

    // Retire asks first; cancelling changes nothing.
    await page.getByRole('button', { name: 'Retire readonly-primary' }).click();
    const question = page.getByRole('group', { name: 'Retire readonly-primary? It never runs again.' });
    await question.getByRole('button', { name: 'Cancel' }).click();
    expect((await bySlug('readonly-primary')).status).toBe('active');
    await page.getByRole('button', { name: 'Retire readonly-primary' }).click();
    await question.getByRole('button', { name: 'Retire' }).click();
    await page.getByTestId('done').filter({ hasText: 'Experiment readonly-primary retired.' }).waitFor();
    expect((await bySlug('readonly-primary')).status).toBe('retired');
    await expect.poll(async () => (await rowOf())[8]).toBe('retired');
    await expect(page.getByRole('button', { name: /readonly-primary/ }).count()).resolves.toBe(0);
    await rig.screenshot(page, 'chaos-experiments-moved');

    // The filters live in the address.
    await page.getByLabel('Status', { exact: true }).selectOption('retired');
    await page.waitForURL(/status=retired/);
    await settled(page);
    await expect.poll(async () => (await rowsOf(page, EXPERIMENTS)).map((r) => r[0])).toEqual(['readonly-primary']);
    await page.getByLabel('Status', { exact: true }).selectOption('');
    await page.getByLabel('Kind', { exact: true }).selectOption('cron-skip-one');
    await page.waitForURL(/kind=cron-skip-one/);
    await settled(page);
    await expect.poll(async () => (await rowsOf(page, EXPERIMENTS)).map((r) => r[0])).toEqual(['skip-one-job']);
  }, 180_000);
});

describe.skipIf(skip)('the freeze page', () => {
  it('freezes with a reason, shows who and when, warns on the other chaos pages, and thaws', async () => {
    const page = await rig.page();
    await openPage(page, '/chaos/freeze');
    await expect(page.getByTestId('freeze-state').innerText()).resolves.toBe('not frozen');
    await expect(page.getByTestId('freeze-by').innerText()).resolves.toBe((await get('/chaos/freeze')).freeze.updatedBy ?? 'nobody yet');

    const form = page.getByRole('form', { name: 'Freeze chaos' });
    await form.getByLabel('Reason').fill('Release day: no chaos until the release is out.');
    await form.getByRole('button', { name: 'Freeze' }).click();
    await page.getByTestId('done').filter({ hasText: 'Chaos frozen.' }).waitFor();
    const frozen = (await get('/chaos/freeze')).freeze as Json;
    expect(frozen).toMatchObject({ scope: 'global', frozen: true, reason: 'Release day: no chaos until the release is out.' });
    await expect.poll(() => page.getByTestId('freeze-state').innerText()).toBe('frozen');
    await expect(page.getByTestId('freeze-reason').innerText()).resolves.toBe(frozen.reason);
    await expect(page.getByTestId('freeze-by').innerText()).resolves.toBe(frozen.updatedBy);
    await expect(page.getByTestId('freeze-at').locator('time').getAttribute('datetime')).resolves.toBe(frozen.updatedAt);
    await rig.screenshot(page, 'chaos-freeze-frozen');

    for (const path of ['/chaos/experiments', '/chaos/runs']) {
      await openPage(page, path);
      const banner = page.getByTestId('freeze-banner');
      await banner.waitFor();
      await expect(banner.innerText(), path).resolves.toContain(`Chaos is frozen: ${frozen.reason}`);
    }

    await openPage(page, '/chaos/freeze');
    const thaw = page.getByRole('form', { name: 'Thaw chaos' });
    await thaw.getByLabel('Reason for thawing').fill('Release is out.');
    await thaw.getByRole('button', { name: 'Thaw' }).click();
    await page.getByTestId('done').filter({ hasText: 'Chaos thawed.' }).waitFor();
    expect((await get('/chaos/freeze')).freeze).toMatchObject({ frozen: false, reason: 'Release is out.' });
    await expect.poll(() => page.getByTestId('freeze-state').innerText()).toBe('not frozen');
    await page.getByRole('form', { name: 'Freeze chaos' }).waitFor();
    await rig.screenshot(page, 'chaos-freeze');

    await openPage(page, '/chaos/experiments');
    await expect(page.getByTestId('freeze-banner').count()).resolves.toBe(0);
  }, 180_000);
});

describe.skipIf(skip)('run now', () => {
  it('is refused in the service\'s words for a blast radius not allowed, starts a run otherwise, and the freeze aborts it', async () => {
    const page = await rig.page();
    await openPage(page, '/chaos/experiments');

    // cron-skip-one acts on the scheduler, which OBSERVATORY_CHAOS_ALLOW=http does not allow.
    const skipOne = await bySlug('skip-one-job');
    const refused = await rig.t.call({ method: 'POST', url: `${V1}/chaos/experiments/${skipOne.id}/run`, payload: {} });
    expect(refused.statusCode).toBe(409);
    await page.getByRole('button', { name: 'Run skip-one-job now' }).click();
    const note = page.getByRole('alert');
    await note.waitFor();
    await expect(note.innerText()).resolves.toContain(refused.json().human);
    await expect(note.innerText()).resolves.toContain('409');

    const latency = await bySlug('latency-search');
    const [started] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/chaos/experiments/${latency.id}/run`) && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Run latency-search now' }).click(),
    ]);
    expect(started.status()).toBe(200);
    const run = ((await started.json()) as Json).run as Json;
    expect(run).toMatchObject({ experimentId: latency.id, trigger: 'manual', endedAt: null });
    await page.getByTestId('done').filter({ hasText: 'Run of latency-search started' }).waitFor();
    await expect(page.getByRole('alert').count()).resolves.toBe(0);

    // The run, in progress, on the runs page the message links to.
    await page.getByRole('link', { name: 'See the run' }).click();
    await page.waitForURL(new RegExp(`/chaos/runs\\?experiment=${latency.id}`));
    await settled(page);
    await expect.poll(async () => (await rowsOf(page, RUNS)).map((r) => [r[1], r[4], r[6]])).toEqual([['latency-search', 'manual', 'in progress']]);
    await rig.screenshot(page, 'chaos-runs-in-progress');

    // Freezing aborts it, with the freeze's reason.
    await call('POST', '/chaos/freeze', { frozen: true, reason: 'Stop the experiment now.' });
    const aborted = ((await get(`/chaos/runs?experimentId=${latency.id}`)).runs as Json[])[0]!;
    expect(aborted).toMatchObject({ id: run.id, outcome: 'aborted', phase: 'ended' });
    expect(aborted.abortReason).toContain('Stop the experiment now.');
    await openPage(page, `/chaos/runs?experiment=${latency.id}`);
    const rows = await rowsOf(page, RUNS);
    expect(rows.map((r) => [r[1], r[5], r[6]])).toEqual([['latency-search', 'ended', 'aborted']]);
    expect(rows[0]![9]).toContain(aborted.abortReason);

    // While frozen, run now is refused, in the service's words.
    await openPage(page, '/chaos/experiments');
    await page.getByRole('button', { name: 'Run latency-search now' }).click();
    await page.getByRole('alert').waitFor();
    const frozenRefusal = await rig.t.call({ method: 'POST', url: `${V1}/chaos/experiments/${latency.id}/run`, payload: {} });
    expect(frozenRefusal.statusCode).toBe(409);
    await expect(page.getByRole('alert').innerText()).resolves.toContain(frozenRefusal.json().human);
    await call('POST', '/chaos/freeze', { frozen: false, reason: 'Done.' });
  }, 180_000);
});

describe.skipIf(skip)('the runs page', () => {
  /** Finished runs as the schedule would have left them, hours ago (older than any run this file starts). */
  const seeded: Json[] = [];

  beforeAll(async () => {
    if (skip) return;
    const latency = await bySlug('latency-search');
    const skipOne = await bySlug('skip-one-job');
    const hoursAgo = (h: number, plusSec = 0) => new Date(Date.now() - h * 3_600_000 + plusSec * 1000);
    const row = (experiment: Json, h: number, fields: Json) => ({
      id: randomUUID(),
      experimentId: experiment.id,
      kind: experiment.kind,
      target: experiment.target,
      recoverySloSec: experiment.recoverySloSec,
      trigger: 'schedule',
      phase: 'ended',
      startedAt: hoursAgo(h),
      windowEndsAt: hoursAgo(h, 30),
      undoneAt: hoursAgo(h, 30),
      expiresAt: hoursAgo(h, 30 + experiment.recoverySloSec * 2),
      heartbeatAt: hoursAgo(h, 40),
      instanceId: 'seed',
      endedAt: hoursAgo(h, 60),
      errorText: null,
      abortReason: null,
      ...fields,
    });
    seeded.push(
      row(latency, 3, { outcome: 'ok', observedRecoverySec: 12.5, measurements: { inject: { injectedMs: 800, probeUrl: '/v1/agent-api/search?q=crawler', duringWindowMs: 845, duringWindowStatus: 200 }, probe: { afterWindowMs: 4, afterWindowStatus: 200 } } }),
      row(latency, 2, { outcome: 'sla-breach', observedRecoverySec: 45, errorText: 'The probe answered slowly for 45 s.', measurements: { inject: { injectedMs: 800, duringWindowMs: 812, duringWindowStatus: 200 }, probe: { afterWindowMs: 900, afterWindowStatus: 200 } } }),
      row(skipOne, 1, { outcome: 'ok', observedRecoverySec: 240, measurements: { skipped: { job: scheduledJob, at: hoursAgo(1, 10).toISOString() }, probe: { nextRunOutcome: 'ok' } } }),
    );
    await rig.t.app.database.db.insert(chaosRuns).values(seeded as (typeof chaosRuns.$inferInsert)[]);
  });

  it('lists runs newest first with outcome, phase, the observed recovery against the SLO, the abort reason and the measurements', async () => {
    const page = await rig.page();
    await openPage(page, '/chaos/runs');
    const served = (await get('/chaos/runs')).runs as Json[];
    const byId = new Map(served.map((r) => [r.id, r]));
    for (const s of seeded) expect(byId.get(s.id), s.id).toMatchObject({ outcome: s.outcome, observedRecoverySec: s.observedRecoverySec, measurements: s.measurements });

    const rows = await rowsOf(page, RUNS);
    expect(rows.length).toBe(served.length);
    expect(rows.map((r) => [r[1], r[4], r[5]])).toEqual(served.map((r) => [r.experimentSlug, r.trigger, r.phase]));
    const shown = (s: Json) => rows[served.findIndex((r) => r.id === s.id)]!;
    const [ok, breach, skipOk] = seeded.map(shown) as [string[], string[], string[]];
    expect([ok[1], ok[2], ok[3], ok[6], ok[7]]).toEqual(['latency-search', 'synthetic-latency', 'searchTopics', 'ok', '12.5 s of 30 s']);
    expect([breach[6], breach[7], breach[9]]).toEqual(['sla-breach', '45 s of 30 s: over the SLO', 'The probe answered slowly for 45 s.']);
    expect([skipOk[1], skipOk[3], skipOk[6], skipOk[7]]).toEqual(['skip-one-job', scheduledJob, 'ok', '240 s of 600 s']);

    // The measurements, unfolded, are the run's own.
    const first = seeded[0]!;
    await page.getByLabel(`Measurements of run ${first.id}`).click();
    expect(JSON.parse(await page.getByTestId(`measurements-${first.id}`).innerText())).toEqual(first.measurements);
    await rig.screenshot(page, 'chaos-runs');

    // By outcome, then by experiment: the filters live in the address.
    await page.getByLabel('Outcome', { exact: true }).selectOption('sla-breach');
    await page.waitForURL(/outcome=sla-breach/);
    await settled(page);
    await expect.poll(async () => (await rowsOf(page, RUNS)).map((r) => [r[1], r[6]])).toEqual([['latency-search', 'sla-breach']]);
    await page.getByLabel('Outcome', { exact: true }).selectOption('');
    const skipOne = await bySlug('skip-one-job');
    await page.getByLabel('Experiment', { exact: true }).selectOption(skipOne.id);
    await page.waitForURL(new RegExp(`experiment=${skipOne.id}`));
    await settled(page);
    await expect.poll(async () => (await rowsOf(page, RUNS)).map((r) => [r[1], r[7]])).toEqual([['skip-one-job', '240 s of 600 s']]);
    await expect(page.locator('main h2').first().innerText()).resolves.toContain('Runs of skip-one-job');
  }, 180_000);
});

describe.skipIf(skip)('in a narrow window', () => {
  it('the chaos pages fit 420 pixels without scrolling sideways (wide tables scroll inside their box)', async () => {
    const page = await rig.page({ width: 420 });
    for (const path of ['/chaos/experiments', '/chaos/runs', '/chaos/freeze']) {
      await openPage(page, path);
      const wide = await elementsPastTheWindow(page);
      expect(wide, path).toEqual([]);
      await rig.screenshot(page, `chaos-narrow${path.replace(/\//g, '-')}`);
    }
  }, 120_000);
});

describe.skipIf(skip)('paging the experiments', () => {
  it('shows 50 a page, newest first, and walks older and newer', async () => {
    for (let i = 1; i <= 50; i += 1) await call('POST', '/chaos/experiments', { slug: `latency-page-${String(i).padStart(2, '0')}`, kind: 'synthetic-latency', target: `/v1/page-${i}/` });
    const first = await get('/chaos/experiments');
    expect(first.nextCursor).not.toBeNull();
    const second = await get(`/chaos/experiments?cursor=${encodeURIComponent(first.nextCursor)}`);

    const page = await rig.page();
    await openPage(page, '/chaos/experiments');
    await expect.poll(async () => (await rowsOf(page, EXPERIMENTS)).map((r) => r[0])).toEqual((first.experiments as Json[]).map((e) => e.slug));
    const pager = page.getByRole('navigation', { name: 'Experiment pages' });
    await pager.getByRole('button', { name: 'Older' }).click();
    await expect.poll(async () => (await rowsOf(page, EXPERIMENTS)).map((r) => r[0])).toEqual((second.experiments as Json[]).map((e) => e.slug));
    await expect(pager.innerText()).resolves.toContain('Page 2');
    await rig.screenshot(page, 'chaos-experiments-page-2');
    await pager.getByRole('button', { name: 'Newer' }).click();
    await expect.poll(async () => (await rowsOf(page, EXPERIMENTS)).map((r) => r[0])).toEqual((first.experiments as Json[]).map((e) => e.slug));
  }, 180_000);
});
