import { fileURLToPath } from 'node:url';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Db } from '../../../../platform/db/client.ts';
import { ServiceError } from '../../../../platform/errors.ts';
import type { CompiledQuery } from '../compile.ts';
import { cutsOf, type GraphQueryRunner, queryTimeout, READ_CUTS, transactionSettings, valueRefused } from '../runner.ts';
import * as repo from './repository.ts';

/**
 * Graph queries on the embedded database (docs/graph/query.md, "Where a query runs"). PGlite runs
 * each statement to its end on the thread that calls it and cannot cancel one, so a query that
 * runs for a minute would stop every request of the service for that minute. Here queries run on a
 * worker thread (worker.mjs) over its own in-memory copy of the live graph: the HTTP thread keeps
 * answering, and a query still running at its statement timeout is abandoned by terminating the
 * thread (400 `query-timeout`, as on PostgreSQL); the next query starts a fresh worker and copies
 * the graph again.
 *
 * The copy catches up before every query: graph rows carry `change_seq` (every write takes the
 * next value of graph_change_seq), and the rows written since the copy's position are read in
 * batches and applied. Queries run one at a time, in arrival order, each on a copy as recent as the
 * moment it started.
 */

const WORKER_FILE = fileURLToPath(new URL('./worker.mjs', import.meta.url));
const dialect = new PgDialect();

/** Rows read from the database and sent to the worker per batch (the HTTP thread is free between batches). */
export const REPLICA_BATCH_ROWS = 2000;

export interface ReplicaRunnerOptions {
  db: Db;
  statementTimeoutMs: number;
  batchRows?: number;
}

type Reply = { type: 'ready'; emptyDataDir: ArrayBuffer | null } | { type: 'applied' } | { type: 'result'; results: Record<string, unknown>[][] } | { type: 'failed'; code: string | null; message: string };

/** One worker thread and the requests waiting for its answers. */
class ReplicaWorker {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  private nextId = 1;
  private stopped: Error | null = null;
  /** Resolves with the empty, schema-ready data directory when this worker made one (the first does). */
  readonly ready: Promise<ArrayBuffer | null>;

  constructor(emptyDataDir: ArrayBuffer | null) {
    this.worker = new Worker(WORKER_FILE, { workerData: { emptyDataDir } });
    this.worker.unref();
    this.ready = new Promise((resolve, reject) => {
      this.waiting.set(0, { resolve: (reply) => resolve(reply.type === 'ready' ? reply.emptyDataDir : null), reject });
    });
    this.ready.catch(() => {});
    this.worker.on('message', (reply: Reply & { id?: number }) => {
      const id = reply.id ?? 0;
      this.waiting.get(id)?.resolve(reply);
      this.waiting.delete(id);
    });
    this.worker.on('error', (error) => this.stop(error));
    this.worker.on('exit', (code) => this.stop(new Error(`the graph query worker exited (code ${code})`)));
  }

  get alive(): boolean {
    return this.stopped === null;
  }

  request(message: Record<string, unknown>): Promise<Reply> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...message, id });
    });
  }

  /** Stops the thread (a statement running there stops with it) and fails whatever waits. */
  async terminate(reason: Error): Promise<void> {
    this.stop(reason);
    await this.worker.terminate();
  }

  private stop(reason: Error): void {
    this.stopped ??= reason;
    for (const waiting of this.waiting.values()) waiting.reject(reason);
    this.waiting.clear();
  }
}

const workerStopped = () => new ServiceError(503, 'unavailable', 'The graph query worker stopped; nothing was lost. Try again.');

export function createReplicaRunner(options: ReplicaRunnerOptions): GraphQueryRunner {
  const { db, statementTimeoutMs } = options;
  const batchRows = options.batchRows ?? REPLICA_BATCH_ROWS;
  let current: ReplicaWorker | null = null;
  /** The first worker's empty data directory, which later workers start from (worker.mjs). */
  let emptyDataDir: ArrayBuffer | null = null;
  /** The change_seq up to which the current worker's copy holds every write. */
  let copiedUpTo = 0;
  let closed = false;

  // One query at a time: the worker's single connection would serialise them anyway, and the
  // catching up before each must not interleave with another's.
  let tail: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const turn = tail.then(work, work);
    tail = turn.catch(() => {});
    return turn;
  };

  async function worker(): Promise<ReplicaWorker> {
    if (current?.alive) return current;
    current = new ReplicaWorker(emptyDataDir);
    copiedUpTo = 0;
    try {
      const made = await current.ready;
      emptyDataDir ??= made;
    } catch {
      current = null;
      throw workerStopped();
    }
    return current;
  }

  async function apply(target: ReplicaWorker, table: 'nodes' | 'edges', changes: repo.Changes<unknown>): Promise<void> {
    if (changes.live.length === 0 && changes.removed.length === 0) return;
    const reply = await target.request({ type: 'apply', table, live: changes.live, removed: changes.removed });
    if (reply.type === 'failed') throw new Error(`the graph query replica could not apply ${table}: ${reply.message}`);
  }

  /** Copies every graph write since `copiedUpTo` to the worker, a batch at a time. */
  async function catchUp(target: ReplicaWorker): Promise<void> {
    const latest = await repo.latestChange(db);
    if (latest <= copiedUpTo) return;
    const first = copiedUpTo === 0;
    for (const read of [repo.nodesChangedSince, repo.edgesChangedSince] as const) {
      const table = read === repo.nodesChangedSince ? 'nodes' : 'edges';
      let after = copiedUpTo;
      for (;;) {
        const changes = await read(db, after, batchRows, first);
        await apply(target, table, changes);
        after = changes.last;
        if (changes.read < batchRows) break;
        await yieldToEventLoop();
      }
    }
    // Writes committed while this ran carry later numbers: they are read again next time (an
    // upsert of the same row is harmless), never skipped.
    copiedUpTo = latest;
  }

  const statementOf = (statement: SQL) => {
    const { sql: text, params } = dialect.sqlToQuery(statement);
    return { text, params };
  };

  return {
    run(compiled: CompiledQuery) {
      return inTurn(async () => {
        if (closed) throw workerStopped();
        const target = await worker();
        const statements = [transactionSettings(statementTimeoutMs, compiled.anchored), compiled.statement, READ_CUTS].map(statementOf);
        let timer: NodeJS.Timeout | undefined;
        try {
          await catchUp(target);
          // The timeout counts the query only, from when it is sent: a first copy of a large graph is not its time.
          const timedOut = new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              const error = queryTimeout(statementTimeoutMs);
              void target.terminate(error);
              reject(error);
            }, statementTimeoutMs);
          });
          const reply = await Promise.race([target.request({ type: 'query', statements }), timedOut]);
          if (reply.type === 'failed') {
            if (reply.code?.startsWith('22')) throw valueRefused();
            throw new Error(`graph query failed in the replica: ${reply.message}`);
          }
          if (reply.type !== 'result') throw new Error(`unexpected reply ${reply.type}`);
          const [, rows, cuts] = reply.results;
          return { rows: rows ?? [], cuts: cutsOf(cuts?.[0]) };
        } catch (error) {
          if (error instanceof ServiceError) throw error;
          if (!target.alive) throw workerStopped();
          throw error;
        } finally {
          clearTimeout(timer);
        }
      });
    },
    async close() {
      closed = true;
      await current?.terminate(new Error('closed'));
      current = null;
    },
  };
}
