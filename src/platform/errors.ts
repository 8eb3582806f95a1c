/**
 * Every failure the service answers is a ServiceError: an HTTP status, a stable machine `reason`
 * and a readable `human` sentence. The HTTP layer renders it as `svc-error.v1`.
 */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly human: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(human);
    this.name = 'ServiceError';
  }
}

export const badRequest = (reason: string, human: string, details?: Record<string, unknown>) =>
  new ServiceError(400, reason, human, details);
export const unauthorized = (human = 'A valid bearer token or operator session is required.') =>
  new ServiceError(401, 'unauthorized', human);
export const forbidden = (human: string) => new ServiceError(403, 'forbidden', human);
export const notFound = (human: string) => new ServiceError(404, 'not-found', human);
export const conflict = (human: string) => new ServiceError(409, 'conflict', human);
export const unavailable = (human = 'The database is unreachable; nothing was written. Try again shortly.') =>
  new ServiceError(503, 'unavailable', human);

/** One-line guard: `assertThat(row, notFound('no such token'))`. */
export function assertThat<T>(value: T | null | undefined | false, error: ServiceError): asserts value is T {
  if (value === null || value === undefined || value === false) throw error;
}
