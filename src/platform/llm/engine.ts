/**
 * The model layer every agent speaks (spec D8; docs/triage/README.md, "Engines"): one request shape, two
 * engines. The live engine sends the system prompt and user message to an OpenAI-compatible
 * Chat Completions server and asks for JSON that follows `responseSchema`; the built-in engine
 * needs no model: it answers with the agent's own deterministic reading of the same data
 * (`builtin`), so a deployment without a model still gets real proposals. Either way the caller
 * gets model text back and parses and validates it itself: an engine never interprets the text.
 */

export interface ModelRequest {
  /** The agent asking (for logs and errors), e.g. `incident-classifier`. */
  agent: string;
  system: string;
  user: string;
  /**
   * The JSON Schema the answer must follow (sent as `response_format: json_schema`). `strict` asks
   * the server to enforce it; it is off by default because strict mode accepts only a subset of
   * JSON Schema (every member required, no length bounds on some servers), and the caller
   * validates every answer anyway.
   */
  responseSchema: { name: string; schema: Record<string, unknown>; strict?: boolean };
  /** The built-in engine's answer: the agent's deterministic text for the same input. */
  builtin: () => string;
  /** Completion tokens at most (live engine). */
  maxTokens?: number;
}

export interface ModelAnswer {
  engine: 'builtin' | 'live';
  /**
   * The model the call is charged as: the live engine's configured model (`builtin` for the
   * built-in one), never the name the server reports, which any server can set to anything.
   */
  model: string;
  /** The model name the server reported, when it reported one (the built-in engine: null). */
  reportedModel: string | null;
  text: string;
  /** Token counts the server reported (0 for the built-in engine, and when the server reports none). */
  promptTokens: number;
  completionTokens: number;
  /** Requests sent, retries included (1 for the built-in engine). */
  attempts: number;
}

/** Why a live model call failed after its retries; the API answers 502 `model-unavailable`. */
export type ModelFailure = 'timeout' | 'rate-limited' | 'upstream-error' | 'unreachable' | 'refused' | 'empty-answer';

export class ModelError extends Error {
  constructor(
    readonly failure: ModelFailure,
    message: string,
    /** Tokens the server reported on a response that was still unusable (they are spent). */
    readonly usage: { promptTokens: number; completionTokens: number } = { promptTokens: 0, completionTokens: 0 },
    /** Requests sent before giving up, retries included. */
    readonly attempts = 1,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

export interface ModelEngine {
  readonly kind: 'builtin' | 'live';
  readonly model: string;
  complete(request: ModelRequest): Promise<ModelAnswer>;
}

/** The engine without a model: the agent's own deterministic answer, free of tokens. */
export const builtinEngine: ModelEngine = {
  kind: 'builtin',
  model: 'builtin',
  async complete(request) {
    return { engine: 'builtin', model: 'builtin', reportedModel: null, text: request.builtin(), promptTokens: 0, completionTokens: 0, attempts: 1 };
  },
};
