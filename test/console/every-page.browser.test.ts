import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsolePage, consolePages } from './pages.ts';
import { browserSkipReason, type ConsoleRig, openPage, startConsoleRig } from './browser.ts';

/**
 * Every page of the route table opens on a fresh instance (nothing seeded) without a script
 * error, draws a heading, and says something where it has no data: no page is blank, none fails.
 * The domain files (test/console/*.browser.test.ts) check each page against seeded data.
 */
const skip = browserSkipReason();
let rig: ConsoleRig;
let PAGES: readonly ConsolePage[];

beforeAll(async () => {
  PAGES = await consolePages();
  if (skip) return;
  rig = await startConsoleRig();
}, 240_000);
afterAll(() => rig?.close());

describe.skipIf(skip)('every console page', () => {
  it('opens without a script error and draws a heading', async () => {
    const page = await rig.page();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(`${page.url()}: ${error.message}`));
    for (const def of PAGES) {
      await openPage(page, def.path);
      await expect(page.locator('main h1').first().isVisible(), def.path).resolves.toBe(true);
      await expect(page.getByText('This page failed to draw').count(), def.path).resolves.toBe(0);
      const text = (await page.locator('main').innerText()).trim();
      expect(text.length, def.path).toBeGreaterThan(20);
    }
    expect(failures).toEqual([]);
  }, 180_000);
});
