import type { ReactNode } from 'react';
import type { QueryState } from '../app/useQuery';
import { Busy } from './Busy';
import { ErrorNote } from './ErrorNote';

interface PanelProps<T> {
  title?: ReactNode;
  state: QueryState<T>;
  /** What to say when the answer holds nothing, and what to do about it. */
  empty?: ReactNode;
  isEmpty?: (data: T) => boolean;
  actions?: ReactNode;
  /** Keeps the panel's height while loading, so a refresh does not move the page. */
  minHeight?: number;
  children: (data: T) => ReactNode;
}

/** A titled box that shows loading, error and empty states in words, never a blank area. */
export function Panel<T>({ title, state, empty, isEmpty, actions, minHeight = 80, children }: PanelProps<T>) {
  const { data, error, loading, reload } = state;
  let body: ReactNode;
  if (error && data === null) body = <ErrorNote error={error} onRetry={reload} />;
  else if (data === null) body = <Busy label="Loading…" />;
  else if (isEmpty?.(data)) body = <p className="empty">{empty ?? 'Nothing here yet.'}</p>;
  else body = children(data);
  return (
    <section className="panel" aria-busy={loading} style={{ minHeight }}>
      {(title || actions) && (
        <header className="panel-head">
          {title && <h2>{title}</h2>}
          <div className="panel-actions">
            {loading && data !== null && <span className="spinner small" aria-label="Refreshing" />}
            {actions}
          </div>
        </header>
      )}
      {error && data !== null && <ErrorNote error={error} onRetry={reload} />}
      {body}
    </section>
  );
}
