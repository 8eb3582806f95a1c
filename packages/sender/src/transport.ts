import { Agent as HttpAgent, type ClientRequest, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** What came back for one POST: the status and the body as text. */
export interface PostAnswer {
  status: number;
  text: string;
}

/**
 * Sends one request body and reads the whole answer, or rejects (no connection, reset, timeout,
 * cut by `signal`). Whatever it rejects with is a failed attempt to the sender: retried.
 */
export type Post = (body: Buffer, headers: Record<string, string>, signal: AbortSignal) => Promise<PostAnswer>;

export interface Transport {
  post: Post;
  /** Closes the idle connections it keeps. */
  close(): void;
}

/**
 * POSTs over node:http(s) on one kept-alive connection: the sender has one request in flight at a
 * time, and a connection per batch, or fetch's per-call machinery (streams, promises, a Request
 * and a Response per batch), would cost a busy site more than the batch's own bytes.
 *
 * `timeoutMs` bounds the whole exchange, from the request to the last byte of the answer. An idle
 * kept connection is closed before the service's keep-alive hint runs out, so a request seldom
 * meets one the service has closed; one that does fails like any other attempt and is retried with
 * backoff, as with fetch.
 */
export function nodeTransport(url: string, timeoutMs: number): Transport {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  // An idle connection is closed after 4 s, or sooner when the service's `Keep-Alive: timeout=`
  // says so (Node's agent applies that hint only below a timeout of its own): as undici does.
  const agentOptions = { keepAlive: true, maxSockets: 1, timeout: 4000 };
  const agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const send = secure ? httpsRequest : httpRequest;

  const post: Post = (body, headers, signal) =>
    new Promise<PostAnswer>((resolve, reject) => {
      const request: ClientRequest = send(target, {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': String(body.length) },
        signal,
      });
      const timer = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      request.on('response', (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        });
        response.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
        response.on('close', () => {
          if (response.complete) return;
          clearTimeout(timer);
          reject(new Error('the answer was cut short'));
        });
      });
      request.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      request.end(body);
    });

  return {
    post,
    close: () => agent.destroy(),
  };
}

/** The same over a `fetch` function (one a caller passes in: tests, a custom dispatcher). */
export function fetchTransport(url: string, timeoutMs: number, fetchFn: typeof fetch): Transport {
  return {
    async post(body, headers, signal) {
      const response = await fetchFn(url, { method: 'POST', headers, body: new Uint8Array(body), signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), signal]) });
      const text = await response.text().catch(() => '');
      return { status: response.status, text };
    },
    close() {},
  };
}
