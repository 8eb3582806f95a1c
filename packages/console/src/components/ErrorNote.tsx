import type { ApiError } from '../api/client';

/** What went wrong, in the service's words, and what to do about the common cases. */
export function ErrorNote({ error, onRetry }: { error: ApiError; onRetry?: () => void }) {
  const hint =
    error.status === 401
      ? 'Your sign-in has ended: sign in again.'
      : error.status === 403
        ? 'Your credential lacks the scope for this; ask an operator with write:tokens for one that has it.'
        : error.status === 429
          ? 'Too many requests: wait a moment and retry.'
          : error.status === 0
            ? 'Check that the service is running and reachable.'
            : error.status >= 500
              ? `The service failed${error.requestId ? `; quote request ${error.requestId} when reporting it` : ''}.`
              : null;
  return (
    <div className="error-note" role="alert">
      <strong>{error.human}</strong>
      <span className="muted"> ({error.status || 'no answer'} {error.reason}{error.field ? `, field ${error.field}` : ''})</span>
      {hint && <p>{hint}</p>}
      {onRetry && (
        <button type="button" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}
