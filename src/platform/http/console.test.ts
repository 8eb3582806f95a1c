import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consolePlugin } from './console.ts';

/** The console's static serving (http/console.ts) over a small built tree and over none. */
let built: FastifyInstance;
let missing: FastifyInstance;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-dist-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title>');
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  built = Fastify();
  await built.register(consolePlugin(dir));
  missing = Fastify();
  await missing.register(consolePlugin(join(dir, 'not-built')));
});
afterAll(async () => {
  await built.close();
  await missing.close();
});

describe('the built console', () => {
  it('sends /console on to /console/', async () => {
    const res = await built.inject({ url: '/console' });
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe('/console/');
  });

  it('answers the page for any address under /console/, never cached, under a same-origin CSP', async () => {
    for (const url of ['/console/', '/console/honeypot/fleet', '/console/empire/lineage?event=x']) {
      const res = await built.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toContain('<title>console</title>');
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.headers['content-security-policy'], url).toContain("script-src 'self'");
      expect(res.headers['content-security-policy'], url).toContain("frame-ancestors 'none'");
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  it('serves a built asset cached for a year, and a missing one as 404, not the page', async () => {
    const asset = await built.inject({ url: '/console/assets/index-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.body).toBe('console.log(1)');
    expect(asset.headers['cache-control']).toMatch(/max-age=31536000.*immutable/);
    const gone = await built.inject({ url: '/console/assets/index-old999.js' });
    expect(gone.statusCode).toBe(404);
    expect(gone.body).not.toContain('<title>');
  });

  it('serves only the files of the build, not a path a caller climbs out with', async () => {
    for (const url of ['/console/../package.json', '/console/%2e%2e/%2e%2e/package.json', '/console/assets/../../index.html']) {
      const res = await built.inject({ url });
      expect(res.body, url).not.toContain('"name"');
    }
  });
});

describe('a console that was not built', () => {
  it('answers 503 with how to build it', async () => {
    const res = await missing.inject({ url: '/console/' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('npm run build:console');
  });
});
