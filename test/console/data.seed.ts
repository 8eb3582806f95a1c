import { expect } from 'vitest';
import { runJob, type TestApp, V1 } from '../helpers/app.ts';
import { CHROME_UA, createTenant, GPTBOT_IP, GPTBOT_UA, signedIngest } from '../helpers/honeypot.ts';

/**
 * Real data for the analytics, cost, backups and audit pages, made through the API and the jobs
 * that roll it up: honeypot events of two tenants, cost records of two toolsets, a budget the
 * spend has passed (so the evaluator opens its alerts), and a used API token (the token cohort).
 * Every audited write among these is also an audit fact.
 */

export const TODAY = new Date().toISOString().slice(0, 10);

/** What the pages must show, known from the dataset. */
export const SEEDED = {
  honeypotEvents: { 'docs-mirror': 4, 'shop-eu': 2 },
  cost: {
    records: [
      { date: TODAY, toolset: 'crawler-lab', vendor: 'openai', sku: 'gpt-4o-mini-input', workspace: 'proj-triage', region: 'us', amountUsd: 12.345678, units: 82304520 },
      { date: TODAY, toolset: 'crawler-lab', vendor: 'aws', sku: 'ec2-t4g-small', amountUsd: 0.4032, units: 24 },
      { date: TODAY, toolset: 'probe-kit', vendor: 'aws', sku: 'lambda-requests', amountUsd: 3.5, units: 1_000_000 },
    ],
    /** crawler-lab's spend: 12.345678 + 0.4032. */
    crawlerLabUsd: '12.748878',
    budget: { scope: 'toolset', scopeKey: 'crawler-lab', monthlyUsd: 10, alertAtPct: [50, 80, 100], destinations: [] },
  },
} as const;

export async function seedData(t: TestApp): Promise<void> {
  const now = Date.now();
  const tenants = Object.entries(SEEDED.honeypotEvents);
  for (const [slug, count] of tenants) {
    const secret = await createTenant(t, slug, slug === 'docs-mirror' ? 'Docs mirror' : 'Shop EU');
    const events = Array.from({ length: count }, (_, i) => ({
      ts: new Date(now - (i + 1) * 60_000).toISOString(),
      ua: i % 2 === 0 ? GPTBOT_UA : CHROME_UA,
      ip: i % 2 === 0 ? GPTBOT_IP : '198.51.100.7',
      path: '/honeypot/topics/llm-pricing',
    }));
    const res = await signedIngest(t, { slug, secret, unixSeconds: Math.floor(now / 1000), body: { events } });
    expect(res.statusCode, res.body).toBe(200);
  }

  const records = await t.call({ method: 'POST', url: `${V1}/cost/records`, payload: { records: SEEDED.cost.records } });
  expect(records.statusCode, records.body).toBe(200);
  const budget = await t.call({ method: 'POST', url: `${V1}/cost/budgets`, payload: SEEDED.cost.budget });
  expect(budget.statusCode, budget.body).toBe(200);
  await runJob(t, 'cost-budget-evaluate');

  // A token created and used today: a member of the developer-token cohort, retained on day 0.
  const reader = await t.tokenWith(['read:empire']);
  expect((await t.call({ method: 'GET', url: `${V1}/analytics/metrics`, token: reader })).statusCode).toBe(200);

  await runJob(t, 'analytics-rollup');
}
