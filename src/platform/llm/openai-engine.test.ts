import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../../test/helpers/fake-llm.ts';
import { ModelError, type ModelFailure, type ModelRequest } from './engine.ts';
import { createOpenAiEngine, type OpenAiEngineOptions } from './openai-engine.ts';

const API_KEY = 'sk-test-engine-4f9c2a7e1b8d3c6f0a5e9b2d7c4f1a8e';

const SCHEMA = {
  name: 'incident_class',
  schema: {
    type: 'object',
    properties: { severity: { type: 'string', enum: ['low', 'high'] }, why: { type: 'string' } },
    required: ['severity', 'why'],
    additionalProperties: false,
  },
};

const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  agent: 'incident-classifier',
  system: 'You classify incidents.',
  user: 'Incident 42: 300 requests from a crawler claiming to be GPTBot.',
  responseSchema: SCHEMA,
  builtin: () => '{"severity":"low","why":"builtin"}',
  ...overrides,
});

let fake: FakeLlm;
let warnings: Array<{ obj: object; msg: string }>;
/** Every ModelError message any test saw: none may carry the key (checked at the end). */
const messages: string[] = [];

beforeEach(async () => {
  fake = await startFakeLlm();
  warnings = [];
});

afterEach(async () => {
  await fake.close();
  vi.unstubAllEnvs();
});

afterAll(() => {
  expect(messages.length).toBeGreaterThan(5);
  for (const message of messages) expect(message).not.toContain(API_KEY);
});

function engine(options: Partial<OpenAiEngineOptions> = {}) {
  return createOpenAiEngine({
    baseUrl: fake.baseUrl,
    model: 'gpt-4o-mini',
    apiKey: API_KEY,
    timeoutMs: 2_000,
    maxRetries: 2,
    log: { warn: (obj, msg) => warnings.push({ obj, msg }) },
    ...options,
  });
}

/** The ModelError the call failed with; it must fail with `failure` and a one-sentence message. */
async function failure(call: Promise<unknown>, expected: ModelFailure): Promise<ModelError> {
  const error = await call.then(
    () => expect.unreachable('the call should have failed'),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ModelError);
  const modelError = error as ModelError;
  messages.push(modelError.message);
  expect(modelError.failure).toBe(expected);
  expect(modelError.message).toMatch(/^The model[^\n]*\.$/);
  expect(modelError.message).toContain('incident-classifier');
  expect(modelError.message).not.toContain(API_KEY);
  expect(JSON.stringify(warnings)).not.toContain(API_KEY);
  return modelError;
}

describe('a normal answer', () => {
  it('returns the text, usage, model and one attempt, after sending what the server expects', async () => {
    fake.reply({ content: '{"severity":"high","why":"spoofed user agent"}', usage: { prompt_tokens: 120, completion_tokens: 14 } });
    const answer = await engine().complete(request());

    expect(answer).toEqual({
      engine: 'live',
      model: 'gpt-4o-mini',
      reportedModel: 'gpt-4o-mini',
      text: '{"severity":"high","why":"spoofed user agent"}',
      promptTokens: 120,
      completionTokens: 14,
      attempts: 1,
    });
    expect(fake.requests).toHaveLength(1);
    const seen = fake.requests[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe('/v1/chat/completions');
    expect(seen.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(seen.headers['content-type']).toMatch(/^application\/json/);
    expect(seen.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You classify incidents.' },
        { role: 'user', content: 'Incident 42: 300 requests from a crawler claiming to be GPTBot.' },
      ],
      temperature: 0,
      response_format: { type: 'json_schema', json_schema: { name: 'incident_class', schema: SCHEMA.schema, strict: false } },
    });
    expect(seen.body).not.toHaveProperty('max_tokens');
    expect(seen.body).not.toHaveProperty('max_completion_tokens');
    expect(seen.body).not.toHaveProperty('stream', true);
    expect(warnings).toEqual([]);
  });

  it('sends the token limit as max_completion_tokens when the request has one', async () => {
    fake.reply({ content: '{}' });
    await engine().complete(request({ maxTokens: 300 }));
    expect(fake.requests[0]!.body.max_completion_tokens).toBe(300);
    expect(fake.requests[0]!.body).not.toHaveProperty('max_tokens');
  });

  it('asks for strict schema enforcement only when the request does', async () => {
    fake.reply({ content: '{}' });
    await engine().complete(request({ responseSchema: { ...SCHEMA, strict: true } }));
    expect(fake.requests[0]!.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'incident_class', schema: SCHEMA.schema, strict: true } });
  });

  it('sends no temperature to reasoning models, which refuse any but 1', async () => {
    fake.reply({ content: '{}' }, { content: '{}' });
    await engine({ model: 'o4-mini' }).complete(request());
    await engine({ model: 'gpt-4.1-mini' }).complete(request());
    expect(fake.requests[0]!.body).not.toHaveProperty('temperature');
    expect(fake.requests[1]!.body.temperature).toBe(0);
  });

  it('answers as the configured model whatever the server names, and keeps the name it reported apart', async () => {
    fake.reply({ content: '{}', model: 'gpt-4o-mini-2024-07-18' });
    expect(await engine().complete(request())).toMatchObject({ model: 'gpt-4o-mini', reportedModel: 'gpt-4o-mini-2024-07-18' });
    // Its own snapshot is no surprise; another model is, and is logged (the call is still charged as the configured one).
    expect(warnings).toEqual([]);

    // A server that names a cheaper model, or one no price table knows, does not change what the call is charged as.
    fake.reply({ content: '{}', model: 'gpt-4.1-nano' }, { content: '{}', model: 'totally-free-model' });
    expect(await engine().complete(request())).toMatchObject({ model: 'gpt-4o-mini', reportedModel: 'gpt-4.1-nano' });
    expect(await engine().complete(request())).toMatchObject({ model: 'gpt-4o-mini', reportedModel: 'totally-free-model' });
    expect(warnings.map((w) => w.obj)).toEqual([
      { agent: 'incident-classifier', model: 'gpt-4o-mini', reportedModel: 'gpt-4.1-nano' },
      { agent: 'incident-classifier', model: 'gpt-4o-mini', reportedModel: 'totally-free-model' },
    ]);

    fake.reply({ json: { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: '{}' }, finish_reason: 'stop' }] } });
    const answer = await engine().complete(request());
    expect(answer).toMatchObject({ model: 'gpt-4o-mini', reportedModel: null });
    // No usage reported: no tokens counted.
    expect([answer.promptTokens, answer.completionTokens]).toEqual([0, 0]);
  });

  it('returns malformed JSON as text: the caller validates, not the engine', async () => {
    fake.reply({ content: '{"severity": "high", "why": ', usage: { prompt_tokens: 10, completion_tokens: 5 } });
    const answer = await engine().complete(request());
    expect(answer.text).toBe('{"severity": "high", "why": ');
    expect(answer.completionTokens).toBe(5);

    fake.reply({ content: 'Sure! Here is the JSON you asked for.' });
    expect((await engine().complete(request())).text).toBe('Sure! Here is the JSON you asked for.');
  });

  it('returns JSON that breaks the schema as text', async () => {
    fake.reply({ content: '{"severity":"catastrophic","extra":true}' });
    expect((await engine().complete(request())).text).toBe('{"severity":"catastrophic","extra":true}');
  });

  it('hands back an answer cut off at the token limit, and logs it', async () => {
    fake.reply({ content: '{"severity":"hi', finishReason: 'length', usage: { prompt_tokens: 10, completion_tokens: 3 } });
    expect((await engine().complete(request({ maxTokens: 3 }))).text).toBe('{"severity":"hi');
    expect(warnings.map((w) => w.msg)).toEqual(['the model answer was cut off at the token limit']);
  });

  it('sends `Bearer not-needed` when no key is configured', async () => {
    fake.reply({ content: '{}' });
    await engine({ apiKey: null }).complete(request());
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer not-needed');
  });

  it('takes nothing from the OPENAI_* environment', async () => {
    vi.stubEnv('OPENAI_ADMIN_KEY', 'sk-admin-from-the-environment');
    vi.stubEnv('OPENAI_ORG_ID', 'org-from-the-environment');
    vi.stubEnv('OPENAI_PROJECT_ID', 'proj-from-the-environment');
    vi.stubEnv('OPENAI_BASE_URL', 'http://127.0.0.1:1/v1');
    fake.reply({ content: '{}' });
    await engine().complete(request());
    const seen = fake.requests[0]!;
    expect(seen.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(seen.headers['openai-organization']).toBeUndefined();
    expect(seen.headers['openai-project']).toBeUndefined();
  });

  it('counts the attempts of concurrent calls apart', async () => {
    const rateLimited = new Set<string>();
    fake.setHandler((body) => {
      const system = body.messages[0].content as string;
      if (system === 'first' && !rateLimited.has(system)) {
        rateLimited.add(system);
        return { status: 429, headers: { 'retry-after-ms': '50' } };
      }
      return { content: JSON.stringify({ system }) };
    });
    const live = engine();
    const [first, second] = await Promise.all([live.complete(request({ system: 'first' })), live.complete(request({ system: 'second' }))]);
    expect([first.text, first.attempts]).toEqual(['{"system":"first"}', 2]);
    expect([second.text, second.attempts]).toEqual(['{"system":"second"}', 1]);
  });
});

describe('retries', () => {
  it('retries a 429 after its Retry-After and reports the usage of the answer that came', async () => {
    fake.reply(
      { status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'Rate limit reached', type: 'requests' } } },
      { content: '{"severity":"low","why":"ok"}', usage: { prompt_tokens: 50, completion_tokens: 7 } },
    );
    const answer = await engine().complete(request());
    expect(answer).toMatchObject({ text: '{"severity":"low","why":"ok"}', promptTokens: 50, completionTokens: 7, attempts: 2 });
    expect(fake.requests).toHaveLength(2);
    // The retry is the same request.
    expect(fake.requests[1]!.body).toEqual(fake.requests[0]!.body);
    expect(warnings).toEqual([{ obj: { agent: 'incident-classifier', model: 'gpt-4o-mini', attempt: 2, previous: 'HTTP 429' }, msg: 'retrying a model call' }]);
  });

  it('retries a 500 up to maxRetries times', async () => {
    fake.reply(
      { status: 500, headers: { 'retry-after-ms': '0' } },
      { status: 503, headers: { 'retry-after-ms': '0' } },
      { content: '{}', usage: { prompt_tokens: 3, completion_tokens: 1 } },
    );
    const answer = await engine({ maxRetries: 2 }).complete(request());
    expect([answer.attempts, answer.promptTokens, answer.completionTokens]).toEqual([3, 3, 1]);
  });

  it('gives up on a server that keeps answering 429: rate-limited after maxRetries + 1 attempts', async () => {
    fake.setHandler(() => ({ status: 429, headers: { 'retry-after': '0' } }));
    const error = await failure(engine({ maxRetries: 2 }).complete(request()), 'rate-limited');
    expect(fake.requests).toHaveLength(3);
    expect(error.message).toBe('The model server rate-limited incident-classifier (429 Too Many Requests, 3 attempts).');
    expect(error.attempts).toBe(3);
    expect(error.usage).toEqual({ promptTokens: 0, completionTokens: 0 });
    expect(warnings.at(-1)).toEqual({ obj: expect.objectContaining({ failure: 'rate-limited', attempts: 3, status: 429 }), msg: 'model call failed' });
  });

  it('gives up on 5xx: upstream-error, and makes one attempt when maxRetries is 0', async () => {
    fake.setHandler(() => ({ status: 502, headers: { 'retry-after': '0' } }));
    const error = await failure(engine({ maxRetries: 0 }).complete(request()), 'upstream-error');
    expect(fake.requests).toHaveLength(1);
    expect(error.message).toBe('The model server answered incident-classifier with HTTP 502 (1 attempt).');
  });

  it('does not retry a 400', async () => {
    fake.reply({ status: 400, body: { error: { message: "Invalid schema for response_format 'incident_class'", type: 'invalid_request_error' } } });
    const error = await failure(engine().complete(request()), 'upstream-error');
    expect(fake.requests).toHaveLength(1);
    expect(error.message).toContain('HTTP 400');
    // What the server said is logged, not put in the message.
    expect(warnings.at(-1)!.obj).toMatchObject({ status: 400, error: expect.stringContaining('Invalid schema') });
  });
});

describe('timeouts and connections', () => {
  it('gives up on a silent server: timeout, within a bounded time', async () => {
    fake.reply({ content: '{}', delayMs: 5_000 });
    const started = Date.now();
    const error = await failure(engine({ timeoutMs: 200, maxRetries: 0 }).complete(request()), 'timeout');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(1_500);
    expect(error.message).toBe('The model did not answer incident-classifier within 200 ms (1 attempt).');
  });

  it('retries a timeout, each attempt with its own limit', async () => {
    fake.setHandler(() => ({ content: '{}', delayMs: 5_000 }));
    const started = Date.now();
    const error = await failure(engine({ timeoutMs: 200, maxRetries: 1 }).complete(request()), 'timeout');
    const elapsed = Date.now() - started;
    // Two 200 ms attempts with the client's default backoff (375 to 500 ms) between them.
    expect(elapsed).toBeGreaterThanOrEqual(2 * 190 + 350);
    expect(elapsed).toBeLessThan(3_000);
    expect(fake.requests).toHaveLength(2);
    expect(error.message).toContain('2 attempts');
  });

  it('answers when a retry comes back in time', async () => {
    fake.reply({ content: '{"late":true}', delayMs: 5_000 }, { content: '{"late":false}' });
    const answer = await engine({ timeoutMs: 200, maxRetries: 1 }).complete(request());
    expect([answer.text, answer.attempts]).toEqual(['{"late":false}', 2]);
    expect(warnings[0]).toMatchObject({ obj: { attempt: 2, previous: 'timed out' } });
  });

  it('gives up on a port nobody listens on: unreachable, retried', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const error = await failure(engine({ baseUrl: `http://127.0.0.1:${closedPort}/v1`, maxRetries: 1 }).complete(request()), 'unreachable');
    expect(error.message).toBe('The model server could not be reached for incident-classifier (2 attempts).');
    expect(warnings.at(-1)!.obj).toMatchObject({ failure: 'unreachable', cause: expect.stringContaining('ECONNREFUSED') });
  });
});

describe('unusable answers', () => {
  it('fails an answer without content as empty-answer, with the tokens it spent', async () => {
    fake.reply({ content: '', usage: { prompt_tokens: 100, completion_tokens: 0 } });
    const empty = await failure(engine().complete(request()), 'empty-answer');
    expect(empty.usage).toEqual({ promptTokens: 100, completionTokens: 0 });

    fake.reply({ content: null, usage: { prompt_tokens: 90, completion_tokens: 4 } });
    expect((await failure(engine().complete(request()), 'empty-answer')).usage).toEqual({ promptTokens: 90, completionTokens: 4 });

    fake.reply({ content: '  \n ', usage: { prompt_tokens: 1, completion_tokens: 2 } });
    expect((await failure(engine().complete(request()), 'empty-answer')).usage).toEqual({ promptTokens: 1, completionTokens: 2 });
  });

  it('fails an answer without choices as empty-answer, with the tokens it spent', async () => {
    fake.reply({ json: { id: 'x', object: 'chat.completion', model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 80, completion_tokens: 0 } } });
    const error = await failure(engine().complete(request()), 'empty-answer');
    expect(error.usage).toEqual({ promptTokens: 80, completionTokens: 0 });
    expect(fake.requests).toHaveLength(1);
  });

  it('fails a refusal as refused, with the tokens it spent', async () => {
    fake.reply({ content: null, refusal: "I can't help with that.", usage: { prompt_tokens: 60, completion_tokens: 8 } });
    const refused = await failure(engine().complete(request()), 'refused');
    expect(refused.usage).toEqual({ promptTokens: 60, completionTokens: 8 });
    expect(refused.message).toBe('The model refused to answer incident-classifier.');

    fake.reply({ content: '{"severity":', finishReason: 'content_filter', usage: { prompt_tokens: 60, completion_tokens: 2 } });
    expect((await failure(engine().complete(request()), 'refused')).usage).toEqual({ promptTokens: 60, completionTokens: 2 });
  });

  it('fails a body that is not a chat completion as upstream-error', async () => {
    fake.reply({ raw: '<html>Bad gateway</html>', contentType: 'text/html' });
    await failure(engine().complete(request()), 'upstream-error');

    fake.reply({ raw: '{"choices": [', contentType: 'application/json' });
    await failure(engine().complete(request()), 'upstream-error');

    fake.reply({ json: { hello: 'world' } });
    await failure(engine().complete(request()), 'upstream-error');
    expect(fake.requests).toHaveLength(3);
  });
});

describe('the API key', () => {
  it('never reaches a message or the log, even when the server echoes it', async () => {
    fake.reply({ status: 401, body: { error: { message: `Incorrect API key provided: ${API_KEY}. You can find your API key at …`, type: 'invalid_request_error', code: 'invalid_api_key' } } });
    const error = await failure(engine().complete(request()), 'upstream-error');
    expect(error.message).toBe('The model server answered incident-classifier with HTTP 401 (1 attempt).');
    const logged = JSON.stringify(warnings);
    expect(logged).toContain('Incorrect API key provided: [api key]');
    expect(logged).not.toContain(API_KEY);

    fake.reply({ content: null, refusal: `no, ${API_KEY}` });
    await failure(engine().complete(request()), 'refused');

    fake.reply({ raw: `not json ${API_KEY}` });
    await failure(engine().complete(request()), 'upstream-error');
  });
});
