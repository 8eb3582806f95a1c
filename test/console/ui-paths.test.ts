import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsolePage, consolePages } from './pages.ts';
import { startTestApp, type TestApp, V1 } from '../helpers/app.ts';

/**
 * Every `uiPath` the manifest names is a page of the console: the route table
 * (packages/console/src/pages/index.ts) is held against the served manifest, so an endpoint that
 * points at a page nobody built, or a page renamed without its endpoints, fails here.
 */
let t: TestApp;
let PAGES: readonly ConsolePage[];
let uiPaths: Map<string, string[]>;

/** Console routes that are not pages of the table: the sign-in form is the frame's own. */
const FRAME_ROUTES = new Set(['/login']);

beforeAll(async () => {
  PAGES = await consolePages();
  t = await startTestApp();
  const manifest = (await t.call({ method: 'GET', url: `${V1}/manifest` })).json<{ endpoints: { id: string; uiPath: string | null }[] }>();
  uiPaths = new Map();
  for (const e of manifest.endpoints) if (e.uiPath) uiPaths.set(e.uiPath, [...(uiPaths.get(e.uiPath) ?? []), e.id]);
}, 240_000);
afterAll(() => t?.close());

describe('the console route table', () => {
  it('has a page for every uiPath in the manifest', () => {
    const pages = new Set(PAGES.map((p) => p.path));
    const missing = [...uiPaths.entries()].filter(([path]) => !pages.has(path) && !FRAME_ROUTES.has(path)).map(([path, ids]) => `${path} (${ids.join(', ')})`);
    expect(missing).toEqual([]);
  });

  it('lists each page once, under /, with a title and a section', () => {
    const paths = PAGES.map((p) => p.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const page of PAGES) {
      expect(page.path, page.title).toMatch(/^\/[a-z0-9/-]*$/);
      expect(page.title.length, page.path).toBeGreaterThan(0);
      expect(page.section.length, page.path).toBeGreaterThan(0);
      expect(typeof page.load, page.path).toBe('function');
    }
  });

  it('names only scopes the service knows', async () => {
    const { SCOPES } = await import('../../src/platform/http/scopes.ts');
    for (const page of PAGES) for (const scope of page.anyScope ?? []) expect(SCOPES as readonly string[], page.path).toContain(scope);
  });
});
