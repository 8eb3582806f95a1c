import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, OpenAIError, RateLimitError } from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { ModelError, type ModelAnswer, type ModelEngine, type ModelFailure, type ModelRequest } from './engine.ts';

/** OpenAI's reasoning models, which take no `temperature`. */
const REASONING_MODEL = /^o\d/;

/**
 * The live engine (spec D8): one Chat Completions call per request to an OpenAI-compatible server
 * (config.llm.live), through the official `openai` client.
 *
 * - The client does the retrying: a 408, 409, 429 or 5xx answer, a timeout or a lost connection is
 *   retried up to `maxRetries` times with exponential backoff (0.5 s, 1 s, 2 s, … at most 8 s, less
 *   up to 25 % jitter), or after the server's own `retry-after-ms` / `Retry-After` when that is
 *   60 s or less. `timeoutMs` bounds each attempt, not the call: the worst case is
 *   (maxRetries + 1) × timeoutMs plus the backoff.
 * - Attempts are counted by a `fetch` wrapper handed to the client, so retries the client makes on
 *   its own are counted too (ModelAnswer.attempts, and the error messages). The client is built
 *   per call so each call has its own counter; building one is a few object allocations.
 * - The answer is asked for as JSON following the request's schema (`response_format:
 *   json_schema`, `strict` only when the request asks), at temperature 0 (none for reasoning models). The text is handed back as it came: malformed or
 *   schema-violating JSON is the caller's to reject (engine.ts), not a failure here.
 * - Every failure is a ModelError with a ModelFailure and a one-sentence message naming the agent.
 *   Messages are written here, never copied from the server or the client (a server may echo the
 *   key it was sent, e.g. "Incorrect API key provided: …"), so they never carry the API key; what
 *   the server said goes to the log, with the key cut out.
 * - Nothing is taken from the environment: the client would otherwise read OPENAI_ADMIN_KEY (whose
 *   Authorization header would replace ours and send that key to the configured server),
 *   OPENAI_ORG_ID, OPENAI_PROJECT_ID and OPENAI_LOG. (OPENAI_CUSTOM_HEADERS cannot be switched
 *   off: the client adds those headers to every request.)
 */

export interface OpenAiEngineOptions {
  /** The server's base URL, e.g. `https://api.openai.com/v1`; requests go to `{baseUrl}/chat/completions`. */
  baseUrl: string;
  model: string;
  /** Null for a local server that wants none; the client then sends `Bearer not-needed`. */
  apiKey: string | null;
  /** One attempt's limit (config OBSERVATORY_LLM_TIMEOUT_MS). */
  timeoutMs: number;
  /** Retries after the first attempt (config OBSERVATORY_LLM_MAX_RETRIES). */
  maxRetries: number;
  /** Retries and failures, with what the server said (pino's `warn(obj, msg)`). */
  log?: { warn(obj: object, msg: string): void };
}

/** The key the client sends when the configuration has none: it refuses to start without one. */
const NO_KEY = 'not-needed';

/** How much of what the server said is logged. */
const DETAIL_CHARS = 300;

export function createOpenAiEngine(options: OpenAiEngineOptions): ModelEngine {
  const { baseUrl, model, apiKey, timeoutMs, maxRetries, log } = options;

  /** `text` made safe for the log: one line, the key replaced, at most DETAIL_CHARS characters. */
  const scrub = (text: string): string => {
    const line = text.replace(/\s+/g, ' ').trim();
    const keyless = apiKey ? line.split(apiKey).join('[api key]') : line;
    return keyless.length > DETAIL_CHARS ? `${keyless.slice(0, DETAIL_CHARS)}…` : keyless;
  };

  return {
    kind: 'live',
    model,
    async complete(request: ModelRequest): Promise<ModelAnswer> {
      const agent = request.agent;
      let attempts = 0;
      let lastOutcome: string | null = null;
      const countingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
        attempts += 1;
        if (attempts > 1) log?.warn({ agent, model, attempt: attempts, previous: lastOutcome }, 'retrying a model call');
        try {
          const response = await fetch(input, init);
          lastOutcome = `HTTP ${response.status}`;
          return response;
        } catch (error) {
          lastOutcome = error instanceof Error && error.name === 'AbortError' ? 'timed out' : 'connection failed';
          throw error;
        }
      };
      const client = new OpenAI({
        baseURL: baseUrl,
        apiKey: apiKey ?? NO_KEY,
        adminAPIKey: null,
        organization: null,
        project: null,
        webhookSecret: null,
        timeout: timeoutMs,
        maxRetries,
        fetch: countingFetch,
        logLevel: 'off',
      });
      const body: ChatCompletionCreateParamsNonStreaming = {
        model,
        messages: [
          { role: 'system', content: request.system },
          { role: 'user', content: request.user },
        ],
        // Deterministic answers where the model allows it; OpenAI's reasoning models (o1, o3, o4-mini…) refuse any temperature but 1.
        ...(REASONING_MODEL.test(model) ? {} : { temperature: 0 }),
        response_format: {
          type: 'json_schema',
          json_schema: { name: request.responseSchema.name, schema: request.responseSchema.schema, strict: request.responseSchema.strict ?? false },
        },
        // `max_completion_tokens`, not the deprecated `max_tokens`: OpenAI rejects `max_tokens` for
        // its reasoning models (o4-mini and later), and current compatible servers (vLLM,
        // llama.cpp) accept the new name.
        ...(request.maxTokens === undefined ? {} : { max_completion_tokens: request.maxTokens }),
      };

      const fail = (failure: ModelFailure, message: string, detail: Record<string, unknown>, usage?: ModelError['usage']): ModelError => {
        log?.warn({ agent, model, failure, attempts, ...detail }, 'model call failed');
        return new ModelError(failure, message, usage, attempts);
      };
      const tries = () => (attempts === 1 ? '1 attempt' : `${attempts} attempts`);

      let completion: ChatCompletion;
      try {
        completion = await client.chat.completions.create(body);
      } catch (error) {
        throw failureOf(error, agent, timeoutMs, tries(), fail, scrub);
      }

      // A 200 whose body is not JSON comes back from the client as a string.
      if (typeof completion !== 'object' || completion === null || !Array.isArray(completion.choices)) {
        throw fail('upstream-error', `The model server answered ${agent} with something other than a chat completion (${tries()}).`, {
          answer: scrub(typeof completion === 'string' ? completion : JSON.stringify(completion) ?? String(completion)),
        });
      }
      const usage = { promptTokens: tokens(completion.usage?.prompt_tokens), completionTokens: tokens(completion.usage?.completion_tokens) };
      const choice = completion.choices[0];
      if (choice === undefined) {
        throw fail('empty-answer', `The model answered ${agent} with no choices.`, {}, usage);
      }
      const refusal = choice.message?.refusal;
      if ((typeof refusal === 'string' && refusal !== '') || choice.finish_reason === 'content_filter') {
        throw fail('refused', `The model refused to answer ${agent}.`, { finishReason: choice.finish_reason, refusal: typeof refusal === 'string' ? scrub(refusal) : null }, usage);
      }
      const text = choice.message?.content;
      if (typeof text !== 'string' || text.trim() === '') {
        throw fail('empty-answer', `The model answered ${agent} with no content.`, { finishReason: choice.finish_reason }, usage);
      }
      if (choice.finish_reason === 'length') {
        // Still handed back: the caller's validation rejects the cut-off JSON and says so.
        log?.warn({ agent, model, maxTokens: request.maxTokens ?? null }, 'the model answer was cut off at the token limit');
      }
      // The call is charged as the configured model. The name the server reports is kept for the
      // record only: a server (or a proxy before it) may name a cheaper or unknown model, and the
      // budget must not follow it down (nor up to the unknown-model price).
      const reportedModel = typeof completion.model === 'string' && completion.model !== '' ? completion.model.slice(0, 200) : null;
      if (reportedModel !== null && reportedModel !== model && !reportedModel.startsWith(`${model}-`)) {
        log?.warn({ agent, model, reportedModel: scrub(reportedModel) }, 'the model server reported another model than the one configured; the call is charged as the configured one');
      }
      return {
        engine: 'live',
        model,
        reportedModel,
        text,
        ...usage,
        attempts,
      };
    },
  };
}

/** A reported token count; anything but a whole number of 0 or more (absent, null, garbage) is 0. */
function tokens(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

/**
 * The ModelError for what the client threw once its retries were spent. The order matters: the
 * timeout error is a kind of connection error, and both are kinds of APIError. Anything that is
 * not the client's (a bug here) is rethrown as it is.
 */
function failureOf(
  error: unknown,
  agent: string,
  timeoutMs: number,
  tries: string,
  fail: (failure: ModelFailure, message: string, detail: Record<string, unknown>) => ModelError,
  scrub: (text: string) => string,
): unknown {
  const said = error instanceof Error ? scrub(error.message) : null;
  if (error instanceof APIConnectionTimeoutError) {
    return fail('timeout', `The model did not answer ${agent} within ${timeoutMs} ms (${tries}).`, { error: said });
  }
  if (error instanceof APIConnectionError) {
    return fail('unreachable', `The model server could not be reached for ${agent} (${tries}).`, { error: said, cause: causes(error, scrub) });
  }
  if (error instanceof RateLimitError) {
    return fail('rate-limited', `The model server rate-limited ${agent} (429 Too Many Requests, ${tries}).`, { status: 429, error: said });
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    return fail('upstream-error', `The model server answered ${agent} with HTTP ${error.status} (${tries}).`, { status: error.status, error: said });
  }
  if (error instanceof OpenAIError || error instanceof SyntaxError) {
    // SyntaxError: a body labelled JSON that is not (the client parses it before we see it).
    return fail('upstream-error', `The model call for ${agent} failed: the server's answer could not be used (${tries}).`, { error: said });
  }
  return error;
}

/**
 * The causes under a connection error, outermost first (`fetch failed: connect ECONNREFUSED
 * 127.0.0.1:9`): Node's fetch says only "fetch failed" and keeps the socket's error as its cause.
 */
function causes(error: Error, scrub: (text: string) => string): string | null {
  const found: string[] = [];
  let cause: unknown = error.cause;
  while (cause instanceof Error && found.length < 4) {
    found.push(cause.message);
    cause = cause.cause;
  }
  return found.length === 0 ? null : scrub(found.join(': '));
}
