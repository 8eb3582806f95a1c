import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { consoleBuilt } from '../../src/platform/http/console.ts';
import { type Clock } from '../../src/platform/clock.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * The console's browser tests: a test app listening on a real port, Debian's chromium driven by
 * playwright-core, sign-in through the page, and a screenshot of each page in reports/console/.
 */
const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].filter(
  (p): p is string => typeof p === 'string' && p !== '',
);

export function chromiumPath(): string | null {
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

/**
 * Whether this run can drive a browser. CI (`.ci/run`) installs chromium and builds the console,
 * so there a missing one fails the run; on a developer's machine without chromium the browser
 * tests are skipped with a note saying how to get it.
 */
export function browserSkipReason(): string | null {
  const missing: string[] = [];
  if (!chromiumPath()) missing.push('chromium (apt-get install chromium)');
  if (!consoleBuilt()) missing.push('the built console (npm run build:console)');
  if (missing.length === 0) return null;
  if (process.env.CI) throw new Error(`the console's browser tests need ${missing.join(' and ')}`);
  process.stderr.write(`console browser tests skipped: install ${missing.join(' and ')}\n`);
  return missing.join(', ');
}

export const SCREENSHOT_DIR = join(process.cwd(), 'reports', 'console');

export interface ConsoleRig {
  t: TestApp;
  baseUrl: string;
  browser: Browser;
  /** A fresh page (own context: own sessionStorage and cookies), signed in with `token` unless null. */
  page(options?: { token?: string | null; width?: number }): Promise<Page>;
  /** Saves a full-page screenshot as reports/console/<name>.png. */
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

export async function startConsoleRig(options: { clock?: Clock; env?: Record<string, string> } = {}): Promise<ConsoleRig> {
  const t = await startTestApp({ ...options, env: { OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0', ...options.env } });
  const address = await t.app.server.listen({ port: 0, host: '127.0.0.1' });
  const browser = await chromium.launch({
    executablePath: chromiumPath()!,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const rig: ConsoleRig = {
    t,
    baseUrl: address,
    browser,
    async page({ token = ADMIN_TOKEN, width = 1280 } = {}) {
      const context = await browser.newContext({ viewport: { width, height: 900 }, baseURL: address, timezoneId: 'Europe/Berlin', locale: 'en-GB' });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      if (token !== null) await signInWithToken(page, token);
      return page;
    },
    async screenshot(page, name) {
      const file = join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      await browser.close();
      await t.close();
    },
  };
  return rig;
}

/** Signs in through the sign-in page's token form, as an operator on the first start would. */
export async function signInWithToken(page: Page, token: string): Promise<void> {
  await page.goto('/console/');
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in with the token' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Opens a console page and waits until no panel is loading. */
export async function openPage(page: Page, path: string): Promise<void> {
  await page.goto(`/console${path}`);
  await page.locator('main#main').waitFor();
  await page.waitForFunction(() => document.querySelectorAll('[aria-busy="true"]').length === 0 && !document.querySelector('main .busy'));
}

/**
 * The elements of the page's main area that stick out past the window's right edge (tables scroll
 * in their own `.table-wrap` and are not counted), innermost first and at most five, each named
 * with its parent, so a failing narrow-window check names the culprit.
 */
export async function elementsPastTheWindow(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('main *')]
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1 && !el.closest('.table-wrap'))
      .map((el) => `${el.tagName.toLowerCase()}.${el.className} in ${el.parentElement?.tagName.toLowerCase()}.${el.parentElement?.className} "${(el.textContent ?? '').slice(0, 30)}" ${Math.round(el.getBoundingClientRect().right)}px`)
      .reverse()
      .slice(0, 5),
  );
}
