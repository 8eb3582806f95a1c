import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

/** The API's own prefix, as every path in the generated schema spells it. */
export const V1 = '/api/observatory/v1';

const TOKEN_KEY = 'observatory.token';

/**
 * A token typed into the sign-in form lives in this tab's sessionStorage (gone when the tab
 * closes) and is sent as a bearer header; a passkey sign-in uses the HttpOnly session cookie
 * the server sets instead, which scripts never see.
 */
export const tokenStore = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

const bearer: Middleware = {
  onRequest({ request }) {
    const token = tokenStore.get();
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
};

/** Typed from the served OpenAPI document: a changed endpoint breaks the console's build. */
export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
api.use(bearer);

/** The service's `svc-error.v1` answer, or one made up for a network failure. */
export interface ApiError {
  status: number;
  reason: string;
  human: string;
  field?: string;
  requestId?: string;
}

export class ApiFailure extends Error {
  constructor(readonly detail: ApiError) {
    super(detail.human);
  }
}

function asApiError(status: number, body: unknown): ApiError {
  if (body && typeof body === 'object' && 'reason' in body && 'human' in body) {
    const e = body as { reason: string; human: string; field?: string; requestId?: string };
    return { status, reason: e.reason, human: e.human, ...(e.field ? { field: e.field } : {}), ...(e.requestId ? { requestId: e.requestId } : {}) };
  }
  return { status, reason: 'unexpected-answer', human: `The service answered ${status} without an explanation.` };
}

/**
 * Unwraps an openapi-fetch result: the data, or an ApiFailure carrying the service's reason.
 * `await unwrap(api.GET(...))` keeps the typed answer and turns every failure into one shape.
 */
export async function unwrap<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result;
  try {
    result = await pending;
  } catch (cause) {
    throw new ApiFailure({ status: 0, reason: 'network', human: `The service could not be reached (${String(cause)}).` });
  }
  if (result.error !== undefined || !result.response.ok) throw new ApiFailure(asApiError(result.response.status, result.error));
  return result.data as T;
}
