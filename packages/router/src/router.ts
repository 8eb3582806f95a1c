import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { clean, clientRulesOf, createSender, headerText, type PendingAnswer, requestEvent, type Sender, type SenderOptions, verdictTracker } from '@observatory/sender';
import { createMaze, MAX_PATH_LENGTH, namesOrigin, type Page, type Topic } from './maze.ts';
import { type HelloReader, readHellosBeforeTls } from './tls.ts';

export interface RouterOptions {
  /** The Observatory service (ingest), e.g. `http://127.0.0.1:8080`. */
  serviceUrl: string;
  tenant: string;
  secret: string;
  /** Where pages link the public agent API (default: the service). */
  agentApiBase?: string;
  siteName?: string;
  topics: readonly Topic[];
  /** Proxies whose client-address and JA4 headers are believed (see client.ts). */
  trustedProxies?: readonly string[];
  clientIpHeader?: string;
  ja4Header?: string | null;
  /** How long a client's first request waits for the service's verdict before it is answered (default 1,500 ms). */
  verdictWaitMs?: number;
  /** The most responses held at once by tarpit delays (default 10,000); past it they are answered at once. */
  maxHeld?: number;
  /** No delay is longer than this (default: as the service says, 8 s today). */
  maxDelayMs?: number;
  /** Clients remembered (default 100,000). */
  maxClients?: number;
  /** The most bytes of recently served pages kept ready to send again (default 8 MiB; 0 keeps none). */
  pageCacheBytes?: number;
  /**
   * Terminate TLS here (PEM certificate chain and key): the site is served over HTTPS and each
   * client's JA4 is computed from its own ClientHello instead of read from a proxy's header.
   */
  tls?: { cert: string | Buffer; key: string | Buffer; helloTimeoutMs?: number };
  /** Passed to the sender (spoolDir, batch sizes, hooks…). */
  sender?: Partial<SenderOptions>;
  now?: () => number;
}

export interface RouterStats {
  requests: number;
  /** Responses delayed by a tarpit, in all; held now; the most held at once. */
  delayed: number;
  held: number;
  heldPeak: number;
  /** Responses a full hold answered at once instead of delaying. */
  holdOverflow: number;
  /** First requests answered before their verdict came. */
  verdictTimeouts: number;
  clients: number;
  /** With TLS: connections closed before the handshake (no ClientHello, or too slow to send one). */
  helloRefused: number;
  sender: ReturnType<Sender['stats']>;
}

export interface Router {
  server: Server;
  sender: Sender;
  listen(port: number, host?: string): Promise<string>;
  stats(): RouterStats;
  /** Stops taking requests, cuts held ones, and closes the sender (flushing for up to `timeoutMs`). */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * The honeypot router: answers every request from the maze, records it to the service through
 * the sender, and delays the answer when the service says the client's fingerprint is tarpitted.
 *
 * Delays: a request waits up to `verdictWaitMs` for the service's answer to itself, and is then
 * delayed by that answer's tarpit, when the router knows nothing of its client yet (its first
 * request, or forgotten), or the client's last answer called it a liar or tarpitted it: so a
 * fingerprint already tarpitted is delayed from its first request at a new address, and a liar's
 * request that opens a tarpit is itself delayed. Any other client (verified, or not claiming to
 * be an AI agent) is answered at once, by the verdict of its previous answer, which each answer
 * refreshes. A held response is one timer and the request's own objects; the count is bounded
 * by `maxHeld`.
 */
export function createRouter(options: RouterOptions): Router {
  const now = options.now ?? Date.now;
  const { rules, trusted } = clientRulesOf(options);
  const pageFor = createMaze({ topics: options.topics, agentApiBase: options.agentApiBase ?? options.serviceUrl, siteName: options.siteName ?? 'Open Research Archive' });
  const verdictWaitMs = options.verdictWaitMs ?? 1500;
  const maxHeld = options.maxHeld ?? 10_000;
  const maxDelayMs = options.maxDelayMs ?? Number.POSITIVE_INFINITY;
  const verdicts = verdictTracker({ maxClients: options.maxClients ?? 100_000 });
  const counts = { requests: 0, delayed: 0, held: 0, heldPeak: 0, holdOverflow: 0, verdictTimeouts: 0 };

  const sender = createSender({
    url: options.serviceUrl,
    tenant: options.tenant,
    secret: options.secret,
    // A first request waits for its batch's answer: batches go out quickly.
    batchMaxWaitMs: 20,
    ...options.sender,
    onAnswers: (answers) => {
      verdicts.onAnswers(answers);
      options.sender?.onAnswers?.(answers);
    },
  });

  const pages = pageCache(options.pageCacheBytes ?? 8 * 1024 * 1024);
  /** What a page is sent as: its bytes and the response's headers, made once per page. */
  const ready = (page: Page): ReadyPage => {
    const body = Buffer.from(page.body);
    return { status: page.status, body, headers: ['content-type', page.contentType, 'content-length', String(body.length), 'cache-control', 'public, max-age=3600'] };
  };
  const readyPage = (pagePath: string, origin: string): ReadyPage => {
    if (namesOrigin(pagePath) || pagePath.length > MAX_PATH_LENGTH) return ready(pageFor(pagePath, origin));
    let page = pages.get(pagePath);
    if (page === undefined) {
      page = ready(pageFor(pagePath, origin));
      pages.set(pagePath, page);
    }
    return page;
  };

  /** The page is made when it is sent: a held response keeps only its path (docs: memory per held connection). */
  const respond = (res: ServerResponse, pagePath: string, origin: string) => {
    if (res.writableEnded || res.destroyed) return;
    const page = readyPage(pagePath, origin);
    res.writeHead(page.status, page.headers);
    res.end(page.body);
  };

  const hold = (res: ServerResponse, delayMs: number, pagePath: string, origin: string) => {
    const delay = Math.min(delayMs, maxDelayMs);
    if (delay <= 0) return respond(res, pagePath, origin);
    if (counts.held >= maxHeld) {
      counts.holdOverflow += 1;
      return respond(res, pagePath, origin);
    }
    counts.held += 1;
    counts.delayed += 1;
    counts.heldPeak = Math.max(counts.heldPeak, counts.held);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      counts.held -= 1;
      clearTimeout(timer);
    };
    const timer = setTimeout(() => {
      release();
      respond(res, pagePath, origin);
    }, delay);
    // A client that gives up frees its slot at once.
    res.once('close', release);
  };

  /** Waits up to verdictWaitMs for the answer to this request's event, then holds by it. */
  const awaitVerdict = (res: ServerResponse, pending: PendingAnswer, pagePath: string, origin: string) => {
    const timeout = setTimeout(() => {
      counts.verdictTimeouts += 1;
      pending.waiter = null;
      respond(res, pagePath, origin);
    }, verdictWaitMs);
    pending.waiter = (verdict) => {
      clearTimeout(timeout);
      pending.waiter = null;
      if (res.destroyed || res.writableEnded) return;
      hold(res, verdict.tarpit.active ? verdict.tarpit.delayMs : 0, pagePath, origin);
    };
    res.once('close', () => clearTimeout(timeout));
  };

  const originOf = (req: IncomingMessage, viaProxy: boolean) => {
    const host = clean(headerText(req.headers.host) ?? 'localhost', 255);
    const proto = hellos !== null || (viaProxy && headerText(req.headers['x-forwarded-proto']) === 'https') ? 'https' : 'http';
    return `${proto}://${host}`;
  };

  // The hot path: no closure is made for a request answered at once.
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    counts.requests += 1;
    const { event, client, key } = requestEvent(
      { method: req.method, url: req.url ?? '/', headers: req.headers, peer: req.socket.remoteAddress, ja4: hellos?.ja4Of(req.socket) },
      rules,
      trusted,
      now(),
    );
    const id = sender.record(event);
    // The page is chosen by the path as sent (the event's is cut to what the ingest takes).
    const target = req.url ?? '/';
    const mark = target.indexOf('?');
    const pagePath = mark < 0 ? target : target.slice(0, mark);
    // The origin is read only for the pages that name it (any other page is the path's alone).
    const origin = namesOrigin(pagePath) ? originOf(req, client.viaProxy) : '';
    // A body is never read (the maze answers by URL alone): Node discards it after the response.

    const known = verdicts.get(key);
    const pending = id === null ? null : verdicts.expect(id, key);
    // While the service is unreachable no answer is coming: nobody waits for one.
    const waitForAnswer = pending !== null && (known === undefined || known.uaClass === 'LIAR' || known.tarpit.active) && !sender.failing;
    if (!waitForAnswer) return hold(res, known?.tarpit.active ? known.tarpit.delayMs : 0, pagePath, origin);
    awaitVerdict(res, pending, pagePath, origin);
  };

  const server = options.tls ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handle) : createServer(handle);
  const hellos: HelloReader | null = options.tls ? readHellosBeforeTls(server as ReturnType<typeof createHttpsServer>, options.tls) : null;
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;

  return {
    server,
    sender,
    listen: (port, host = '0.0.0.0') =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address() as AddressInfo;
          resolve(`${hellos ? 'https' : 'http'}://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`);
        });
      }),
    stats: () => ({ ...counts, clients: verdicts.clients, helloRefused: hellos?.refused() ?? 0, sender: sender.stats() }),
    async close(timeoutMs = 5000) {
      server.closeIdleConnections();
      hellos?.destroyPending();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Held responses are not waited for: their connections are cut.
        setTimeout(() => server.closeAllConnections(), 1000).unref();
      });
      await sender.close(timeoutMs);
    },
  };
}

/** A page as sent: its bytes, and its headers as name, value pairs in one list. */
interface ReadyPage {
  status: number;
  body: Buffer;
  headers: string[];
}

/**
 * Recently served pages, least recently served dropped first, at most `maxBytes` of bodies: a
 * crawler that comes back to a page (or many clients to the same ones) is answered without
 * building and encoding it again. A page is at most 16 KiB, so the bound is what it says.
 */
function pageCache(maxBytes: number) {
  const entries = new Map<string, ReadyPage>();
  let bytes = 0;
  let newest: string | null = null;
  return {
    get(path: string): ReadyPage | undefined {
      const found = entries.get(path);
      // Moving an entry to the newest end costs two map operations: not for the newest already.
      if (found !== undefined && path !== newest) {
        entries.delete(path);
        entries.set(path, found);
        newest = path;
      }
      return found;
    },
    set(path: string, page: ReadyPage): void {
      if (page.body.length > maxBytes) return;
      const before = entries.get(path);
      if (before !== undefined) {
        entries.delete(path);
        bytes -= before.body.length;
      }
      entries.set(path, page);
      newest = path;
      bytes += page.body.length;
      for (const [oldest, old] of entries) {
        if (bytes <= maxBytes) break;
        entries.delete(oldest);
        bytes -= old.body.length;
      }
    },
  };
}
