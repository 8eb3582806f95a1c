import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import {
  clientRulesOf,
  createSender,
  type IngestAnswer,
  plainAddress,
  requestEvent,
  type Sender,
  type SenderOptions,
  type SeenRequest,
  verdictTracker,
} from '@observatory/sender';

export interface ObservatoryOptions {
  /** The Observatory service, e.g. `https://observatory.example.org`. */
  url: string;
  tenant: string;
  /** The tenant's signing secret. */
  secret: string;
  /** Proxies in front of the site whose client-address and JA4 headers are believed. */
  trustedProxies?: readonly string[];
  /** The header a proxy names the client in (default `x-forwarded-for`). */
  clientIpHeader?: string;
  /** The header a proxy puts the TLS ClientHello's JA4 in. */
  ja4Header?: string | null;
  /**
   * Tarpit mode: a request from a client the service has tarpitted is held before the site
   * handles it, for the service's delay but never longer than this (ms). Off when unset.
   */
  tarpitMaxWaitMs?: number;
  /** Passed to the sender (spoolDir, batch sizes, hooks…). */
  sender?: Partial<SenderOptions>;
  now?: () => number;
}

export interface ObservatoryStats {
  observed: number;
  /** Requests held by tarpit mode. */
  delayed: number;
  /** Requests the middleware could not record (a bug of ours; the site went on regardless). */
  errors: number;
  sender: ReturnType<Sender['stats']>;
}

type FetchHandler<Rest extends unknown[]> = (request: Request, ...rest: Rest) => Response | Promise<Response>;

export interface Observatory {
  /** Express and Connect: `app.use(observatory.express)`. */
  express: (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;
  /** Fastify: `app.register(observatory.fastify)` (applies to every route, 404s included). */
  fastify: FastifyPluginLike;
  /**
   * A `Request → Response` handler (Hono's `app.fetch`, a Next.js route handler, Bun or Deno's
   * `serve`): `export default { fetch: observatory.wrapFetch(app.fetch) }`. Such servers do not
   * hand the socket's address to the handler: the client is named by `clientAddress` when given,
   * else by the platform's proxy header (`clientIpHeader`, its right-most address).
   */
  wrapFetch<Rest extends unknown[]>(handler: FetchHandler<Rest>, options?: { clientAddress?: (request: Request, ...rest: Rest) => string | undefined }): FetchHandler<Rest>;
  /** Records one request seen by any other server. Returns the delay tarpit mode asks for (0 when off). */
  observe(seen: SeenRequest): number;
  stats(): ObservatoryStats;
  sender: Sender;
  close(timeoutMs?: number): Promise<void>;
}

/** The shape of a Fastify plugin, without depending on Fastify's types. */
export type FastifyPluginLike = ((
  instance: { addHook(name: 'onRequest', hook: (request: { raw: IncomingMessage }, reply: unknown) => Promise<void>): unknown },
  options: unknown,
  done: (error?: Error) => void,
) => void) & { [key: symbol]: unknown };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Records every request an existing site serves, asynchronously: `observe` queues an event and
 * returns at once (the sender batches and delivers it), and anything that goes wrong inside is
 * counted, never thrown at the site. The only wait it ever adds is tarpit mode's, bounded by
 * `tarpitMaxWaitMs`, and only for a client the service's latest answer about it tarpitted (its
 * first request is never held: the middleware does not wait for verdicts).
 */
export function createObservatory(options: ObservatoryOptions): Observatory {
  const now = options.now ?? Date.now;
  const { rules, trusted } = clientRulesOf(options);
  const verdicts = verdictTracker({ maxClients: 100_000 });
  const counts = { observed: 0, delayed: 0, errors: 0 };
  const tarpitMaxWaitMs = options.tarpitMaxWaitMs ?? 0;

  const sender = createSender({
    url: options.url,
    tenant: options.tenant,
    secret: options.secret,
    ...options.sender,
    onAnswers: (answers: IngestAnswer[]) => {
      verdicts.onAnswers(answers);
      options.sender?.onAnswers?.(answers);
    },
  });

  function observe(seen: SeenRequest): number {
    try {
      counts.observed += 1;
      const { event, key } = requestEvent(seen, rules, trusted, now());
      const id = sender.record(event);
      // Only tarpit mode reads answers.
      if (tarpitMaxWaitMs <= 0) return 0;
      if (id !== null) verdicts.expect(id, key);
      const known = verdicts.get(key);
      const delay = known?.tarpit.active ? Math.min(known.tarpit.delayMs, tarpitMaxWaitMs) : 0;
      if (delay > 0) counts.delayed += 1;
      return delay;
    } catch {
      counts.errors += 1;
      return 0;
    }
  }

  const fromNode = (req: IncomingMessage): SeenRequest => ({ method: req.method, url: req.url ?? '/', headers: req.headers, peer: req.socket?.remoteAddress });

  const plugin = (instance: Parameters<FastifyPluginLike>[0], _options: unknown, done: (error?: Error) => void) => {
    instance.addHook('onRequest', async (request) => {
      const delay = observe(fromNode(request.raw));
      if (delay > 0) await sleep(delay);
    });
    done();
  };
  // Like fastify-plugin: the hook applies to the app that registers it, not to a child scope.
  const fastify: FastifyPluginLike = Object.assign(plugin, { [Symbol.for('skip-override')]: true, [Symbol.for('fastify.display-name')]: 'observatory' });

  return {
    express(req, _res, next) {
      const delay = observe(fromNode(req));
      if (delay > 0) setTimeout(next, delay);
      else next();
    },
    fastify,
    wrapFetch(handler, wrapOptions = {}) {
      return async (request, ...rest) => {
        let seen: SeenRequest | null = null;
        try {
          const headers: IncomingHttpHeaders = {};
          request.headers.forEach((value, name) => {
            headers[name] = value;
          });
          const named = wrapOptions.clientAddress?.(request, ...rest);
          const listed = (headers[rules.clientIpHeader] as string | undefined)?.split(',').map((part) => plainAddress(part.trim())).filter((a): a is string => a !== null);
          // Behind the platform's proxy: the address it appended is the right-most one.
          const peer = named ?? listed?.at(-1);
          const url = new URL(request.url);
          seen = { method: request.method, url: `${url.pathname}${url.search}`, headers, peer };
        } catch {
          counts.errors += 1;
        }
        if (seen !== null) {
          const delay = observe(seen);
          if (delay > 0) await sleep(delay);
        }
        return handler(request, ...rest);
      };
    },
    observe,
    stats: () => ({ ...counts, sender: sender.stats() }),
    sender,
    close: (timeoutMs) => sender.close(timeoutMs),
  };
}
