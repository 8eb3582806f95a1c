import type { FastifyBaseLogger } from 'fastify';

/** Defaults: written at this many rows, or this long after the first is buffered; at most this many kept. */
export const FLUSH_COUNT = 500;
export const FLUSH_MS = 250;
export const BUFFER_MAX = 50_000;

/**
 * Rows that may be written a moment late (ingest samples for the SLOs): buffered and written in
 * batches, at `flushCount` rows or `flushMs` after the first, because one write per request would
 * cost a commit each. A failed write keeps its rows for the next one, up to `bufferMax`; beyond
 * that the oldest are dropped. Writes never overlap and never throw to the caller.
 */
export function createBufferedWrites<Row>(options: {
  write: (rows: Row[]) => Promise<void>;
  flushCount?: number;
  flushMs?: number;
  bufferMax?: number;
  log: FastifyBaseLogger;
  /** Names the rows in the warning logged when a write fails. */
  what: string;
}) {
  let rows: Row[] = [];
  let timer: NodeJS.Timeout | null = null;
  let writing: Promise<void> = Promise.resolve();

  function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = rows;
    rows = [];
    writing = writing.then(async () => {
      if (batch.length === 0) return;
      try {
        await options.write(batch);
      } catch (error) {
        options.log.warn({ err: error, rows: batch.length }, `could not record ${options.what}; keeping them for the next write`);
        rows = [...batch, ...rows].slice(-(options.bufferMax ?? BUFFER_MAX));
      }
    });
    return writing;
  }

  return {
    push(row: Row): void {
      rows.push(row);
      if (rows.length >= (options.flushCount ?? FLUSH_COUNT)) void flush();
      else timer ??= setTimeout(() => void flush(), options.flushMs ?? FLUSH_MS).unref();
    },
    /** Writes what is buffered now (before a read that needs it, at shutdown). */
    flush,
  };
}
