import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Where `npm run build:console` (run by `npm ci`'s prepare) leaves the built console. */
export const CONSOLE_DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../../../packages/console/dist');

/** The console's address; its pages live under it (`/console/honeypot`, …). */
export const CONSOLE_PATH = '/console';

/**
 * The console's pages are one document whose script routes in the browser, so every address
 * under /console that is not a built file answers index.html. Scripts load only from this origin,
 * and no other site may frame the console.
 */
const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

function builtFiles(dir: string): Set<string> {
  const files = new Set<string>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const full = join(at, name);
      if (statSync(full).isDirectory()) walk(full);
      else files.add(relative(dir, full).split(sep).join('/'));
    }
  };
  walk(dir);
  return files;
}

/** Whether the console was built (dist/index.html exists). */
export function consoleBuilt(dir: string = CONSOLE_DIST): boolean {
  return existsSync(join(dir, 'index.html'));
}

/**
 * Serves the built console at /console with @fastify/static. Only files present at start-up are
 * served (a fixed set, so no path a caller sends reaches the file system); hashed assets are
 * cached for a year, index.html never. Without a build it answers a page that says how to build
 * it. The routes carry `console: true` so the API's registry contract leaves them out.
 */
export function consolePlugin(dir: string = CONSOLE_DIST) {
  return async (app: FastifyInstance): Promise<void> => registerConsole(app, dir);
}

async function registerConsole(app: FastifyInstance, dir: string): Promise<void> {
  const built = consoleBuilt(dir);
  const files = built ? builtFiles(dir) : new Set<string>();
  if (built) await app.register(fastifyStatic, { root: dir, serve: false });

  const answer = async (path: string, reply: FastifyReply) => {
    void reply.header('content-security-policy', CONSOLE_CSP).header('x-content-type-options', 'nosniff').header('referrer-policy', 'same-origin');
    if (!built) {
      return reply
        .status(503)
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(
          '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head><body><h1>The console is not built</h1><p>Run <code>npm run build:console</code> (<code>npm ci</code> runs it) and restart the service. The API is unaffected.</p></body></html>',
        );
    }
    if (files.has(path) && path !== 'index.html') {
      const immutable = path.startsWith('assets/');
      return reply.sendFile(path, { cacheControl: true, immutable, maxAge: immutable ? 31_536_000_000 : 0 });
    }
    // A missing asset is a 404, not the page: a stale tab asking for last build's script must not get HTML.
    if (path.startsWith('assets/')) return reply.status(404).type('text/plain; charset=utf-8').send('Not found');
    return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
  };

  app.route({ method: 'GET', url: CONSOLE_PATH, config: { console: true }, handler: (_request, reply) => reply.redirect(`${CONSOLE_PATH}/`, 301) });
  app.route({
    method: 'GET',
    url: `${CONSOLE_PATH}/*`,
    config: { console: true },
    handler: (request, reply) => answer((request.params as { '*': string })['*'], reply),
  });
}
