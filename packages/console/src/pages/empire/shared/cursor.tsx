import { useCallback, useState } from 'react';

/**
 * Server-side paging with the service's `nextCursor`: the cursors of the pages walked so far, so
 * "Newer" goes back without asking the service where it was. `reset` when a filter changes.
 */
export function useCursorStack() {
  const [stack, setStack] = useState<string[]>([]);
  const cursor = stack[stack.length - 1];
  const older = useCallback((next: string) => setStack((s) => [...s, next]), []);
  const newer = useCallback(() => setStack((s) => s.slice(0, -1)), []);
  const reset = useCallback(() => setStack([]), []);
  return { cursor, page: stack.length + 1, older, newer, reset };
}

export function CursorPager({ pager, nextCursor, label }: { pager: ReturnType<typeof useCursorStack>; nextCursor: string | null; label: string }) {
  if (pager.page === 1 && nextCursor === null) return null;
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" onClick={pager.newer} disabled={pager.page === 1}>
        Newer
      </button>
      <span>Page {pager.page}</span>
      <button type="button" onClick={() => nextCursor && pager.older(nextCursor)} disabled={nextCursor === null}>
        Older
      </button>
    </nav>
  );
}
