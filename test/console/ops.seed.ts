import { createServer } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import type { App } from '../../src/app.ts';
import { type TestApp, V1 } from '../helpers/app.ts';
import { type ConsoleRig, signInWithToken } from './browser.ts';
import { freePort } from '../helpers/ports.ts';

/** Seeding and browser helpers for the ops, settings, agent API and docs pages' browser tests. */

/** Adds or replaces agent API topics through the operator endpoint. */
export async function upsertTopics(
  t: TestApp,
  topics: { slug: string; title: string; category: string; summary: string; body: string; createdAt?: string }[],
): Promise<void> {
  const res = await t.call({ method: 'POST', url: `${V1}/agent-api/topics`, payload: { topics } });
  if (res.statusCode !== 200) throw new Error(`topic upsert failed: ${res.statusCode} ${res.body}`);
}

/** Creates `count` tokens through the API: each is one `token.create` audit row. */
export async function createTokens(t: TestApp, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const res = await t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name: `${prefix}-${i}`, scopes: ['read:dashboard'] } });
    if (res.statusCode !== 200) throw new Error(`token create failed: ${res.statusCode} ${res.body}`);
  }
}

/**
 * A second instance on the rig's database whose WebAuthn relying party is `localhost` on its
 * own port: a passkey ceremony needs the page's origin to be the configured one, which the rig's
 * 127.0.0.1 address (under a public URL of localhost:8080) is not.
 */
export async function startPasskeyInstance(rig: ConsoleRig): Promise<{ app: App; origin: string }> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const app = await rig.t.secondInstance({ OBSERVATORY_PUBLIC_URL: origin });
  await app.server.listen({ port, host: 'localhost' });
  return { app, origin };
}

/** A page at `origin` with Chromium's virtual authenticator (CTAP2, resident keys, user verification) attached. */
export async function pageWithAuthenticator(rig: ConsoleRig, origin: string, token: string | null): Promise<{ page: Page; context: BrowserContext }> {
  const context = await rig.browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: origin, timezoneId: 'Europe/Berlin', locale: 'en-GB' });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  if (token !== null) await signInWithToken(page, token);
  return { page, context };
}

/** Waits until no panel on the page is loading. */
export async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelectorAll('[aria-busy="true"]').length === 0 && !document.querySelector('main .busy'));
}

/** The text of one column of the page's (first) table body, top to bottom. */
export async function columnText(page: Page, column: number): Promise<string[]> {
  return page.locator(`main table >> nth=0`).locator(`tbody tr td:nth-child(${column})`).allTextContents();
}

/** Whether the page is wider than its window (something forces a sideways scroll). */
export async function overflowsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);
}
