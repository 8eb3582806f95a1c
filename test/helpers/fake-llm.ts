import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback OpenAI-compatible Chat Completions server for tests: the live model engine talks to
 * it over real HTTP (the `openai` client, its retries and timeouts included), and a test scripts
 * what it answers. It speaks `POST {baseUrl}/chat/completions` only; anything else is a 404.
 *
 * Answers come from the queue (`reply`, first in first out), else from the handler
 * (`setHandler`, for end-to-end tests that answer by looking at the prompt), else a 500 saying
 * that nothing was scripted, so a test that forgot to script an answer fails loudly. Every request
 * is recorded (`requests`) before it is answered, whatever the answer.
 */

/** Token counts as the server reports them (`usage`). */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** Holds the answer back this long (to provoke the client's timeout); any answer kind may carry it. */
interface Delayed {
  delayMs?: number;
}

/** A normal `chat.completion` with one choice. */
export interface FakeCompletion extends Delayed {
  /** The assistant message's content; null for a message without content. */
  content: string | null;
  usage?: FakeUsage;
  /** The model the answer names; the requested model when absent. */
  model?: string;
  /** `stop` when absent. */
  finishReason?: string;
  /** The message's `refusal` (a model declining to answer); null when absent. */
  refusal?: string;
  headers?: Record<string, string>;
}

/** An error status (429 with `retry-after: 0`, 500, 401, …) with an optional JSON body. */
export interface FakeStatus extends Delayed {
  status: number;
  /** `{"error": {"message": …}}` when absent. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** Status 200 with this exact body, not JSON (or JSON that is not a completion, with `contentType`). */
export interface FakeRaw extends Delayed {
  raw: string;
  /** `text/plain` when absent. */
  contentType?: string;
}

/** Status 200 with any JSON body (a completion without choices, without `model`, …). */
export interface FakeJson extends Delayed {
  json: unknown;
}

export type FakeAnswer = FakeCompletion | FakeStatus | FakeRaw | FakeJson;

export interface FakeLlmRequest {
  method: string;
  /** The request path, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; the raw text when it was not JSON. */
  body: any;
}

/** Answers a request the queue has no answer for; `body` is the parsed request body. */
export type FakeHandler = (body: any, request: FakeLlmRequest) => FakeAnswer | Promise<FakeAnswer>;

export interface FakeLlm {
  /** The base URL to configure, e.g. `http://127.0.0.1:40123/v1`. */
  readonly baseUrl: string;
  /** Every request received, in order. */
  readonly requests: FakeLlmRequest[];
  /** Queues answers, used one per request before the handler. */
  reply(...answers: FakeAnswer[]): void;
  /** Answers requests the queue has no answer for; null removes it. */
  setHandler(handler: FakeHandler | null): void;
  /** Answers still queued. */
  pending(): number;
  /** Stops listening: delayed answers are dropped and open connections cut, so it never hangs on them. */
  close(): Promise<void>;
}

const CHAT_PATH = '/v1/chat/completions';

export async function startFakeLlm(): Promise<FakeLlm> {
  const requests: FakeLlmRequest[] = [];
  const queue: FakeAnswer[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let handler: FakeHandler | null = null;
  let served = 0;

  const send = (res: ServerResponse, status: number, headers: Record<string, string>, body: string) => {
    if (res.destroyed || res.writableEnded) return; // the client gave up (timeout) and hung up
    res.writeHead(status, { 'content-length': String(Buffer.byteLength(body)), ...headers });
    res.end(body);
  };

  const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) =>
    send(res, status, { 'content-type': 'application/json', ...headers }, JSON.stringify(value));

  const answer = (res: ServerResponse, request: FakeLlmRequest, scripted: FakeAnswer) => {
    if ('status' in scripted) {
      json(res, scripted.status, scripted.body ?? { error: { message: `scripted status ${scripted.status}`, type: 'fake_error' } }, scripted.headers);
    } else if ('raw' in scripted) {
      send(res, 200, { 'content-type': scripted.contentType ?? 'text/plain' }, scripted.raw);
    } else if ('json' in scripted) {
      json(res, 200, scripted.json);
    } else {
      served += 1;
      json(
        res,
        200,
        {
          id: `chatcmpl-fake-${served}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: scripted.model ?? (typeof request.body?.model === 'string' ? request.body.model : 'fake-model'),
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: scripted.content, refusal: scripted.refusal ?? null },
              finish_reason: scripted.finishReason ?? 'stop',
              logprobs: null,
            },
          ],
          ...(scripted.usage === undefined
            ? {}
            : { usage: { ...scripted.usage, total_tokens: scripted.usage.prompt_tokens + scripted.usage.completion_tokens } }),
        },
        scripted.headers,
      );
    }
  };

  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // recorded as text; answered 400 below
    }
    const request: FakeLlmRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
    requests.push(request);

    if (req.method !== 'POST' || request.path !== CHAT_PATH) {
      json(res, 404, { error: { message: `the fake model server only serves POST ${CHAT_PATH}, not ${req.method} ${request.path}`, type: 'not_found' } });
      return;
    }
    if (typeof body !== 'object' || body === null) {
      json(res, 400, { error: { message: 'the request body is not JSON', type: 'invalid_request_error' } });
      return;
    }
    const scripted = queue.shift() ?? (handler === null ? null : await handler(body, request));
    if (scripted === null) {
      json(res, 500, { error: { message: 'the fake model server has no scripted answer (queue empty, no handler)', type: 'fake_unscripted' } });
      return;
    }
    const delayMs = scripted.delayMs ?? 0;
    if (delayMs <= 0) {
      answer(res, request, scripted);
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      answer(res, request, scripted);
    }, delayMs);
    timers.add(timer);
    res.on('close', () => {
      clearTimeout(timer);
      timers.delete(timer);
    });
  };

  const server = createServer((req, res) => {
    onRequest(req, res).catch((error: unknown) => {
      json(res, 500, { error: { message: `the fake model server failed: ${String(error)}`, type: 'fake_error' } });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (...answers) => {
      queue.push(...answers);
    },
    setHandler: (next) => {
      handler = next;
    },
    pending: () => queue.length,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
