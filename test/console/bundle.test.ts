import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CONSOLE_DIST, consoleBuilt } from '../../src/platform/http/console.ts';
import { browserSkipReason } from './browser.ts';

/**
 * The console's first load stays under 500 kB of compressed script: the scripts index.html loads
 * (the entry and the chunks it preloads), gzipped. Pages, charts' data and the graph library load
 * later, when a page needs them.
 */
const BUDGET_BYTES = 500 * 1024;

function firstLoadScripts(): string[] {
  const html = readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8');
  const sources = [...html.matchAll(/<script[^>]+src="([^"]+)"/g), ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g)].map((m) => m[1]!);
  return [...new Set(sources)].map((src) => join(CONSOLE_DIST, src.replace(/^\/console\//, '')));
}

describe.skipIf(!consoleBuilt() && browserSkipReason() !== null)('the console bundle', () => {
  it('loads under 500 kB of gzipped script on first load', () => {
    const scripts = firstLoadScripts();
    expect(scripts.length).toBeGreaterThan(0);
    const gzipped = scripts.reduce((sum, file) => sum + gzipSync(readFileSync(file)).length, 0);
    expect(gzipped).toBeLessThan(BUDGET_BYTES);
  });

  it('keeps the graph library out of the first load', () => {
    const first = firstLoadScripts().map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(first).not.toMatch(/cytoscape/i);
  });
});
