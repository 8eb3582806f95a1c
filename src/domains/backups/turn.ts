import { AsyncLocalStorage } from 'node:async_hooks';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { Database } from '../../platform/db/client.ts';
import { conflict } from '../../platform/errors.ts';
import { serverUrlOf } from './engines.ts';

/**
 * One snapshot or restore verification at a time per deployment (docs/backups/README.md, "One at a
 * time"). A dump or a restore holds a copy of the database's worth of disk, a second PGlite or
 * a scratch database, and minutes of work; two at once only double that.
 *
 * - On a PostgreSQL server the turn is a session advisory lock (`pg_try_advisory_lock`) held on a
 *   connection of its own for as long as the work lasts, so it holds across every instance on the
 *   database and is released by the server if the instance holding it dies.
 * - On PGlite one process owns the database, so the turn is that process's (shared by every
 *   service built on the same PGlite).
 *
 * A request that finds the turn taken is answered 409 `conflict` at once; jobs (the nightly
 * snapshot and verify, the failover drill) wait for it, at most TURN_WAIT_MS. The turn is
 * re-entrant: work holding it (a drill, the snapshot job) may take snapshots and verify them.
 */
export interface BackupTurn {
  run<T>(work: () => Promise<T>, options: { wait: boolean }): Promise<T>;
}

/** The advisory-lock key of the turn (per database: advisory locks are scoped to one). */
export const BACKUP_TURN_LOCK_KEY = 7_264_026;
/** How long a job waits for the turn before it gives up. */
export const TURN_WAIT_MS = 15 * 60 * 1000;

/** Takes the turn; answers its release, or null when it is taken (and `wait` ran out or was not asked for). */
type Acquire = (wait: boolean) => Promise<(() => Promise<void>) | null>;

const TAKEN = 'Another backup snapshot or restore verification is running on this deployment, and they run one at a time: try again when it has finished.';

function turnOf(acquire: Acquire): BackupTurn {
  const holding = new AsyncLocalStorage<true>();
  return {
    async run(work, { wait }) {
      if (holding.getStore() === true) return work();
      const release = await acquire(wait);
      if (release === null) {
        throw conflict(wait ? `${TAKEN} (waited ${TURN_WAIT_MS / 60_000} minutes for it)` : TAKEN);
      }
      try {
        return await holding.run(true, work);
      } finally {
        await release();
      }
    },
  };
}

const pgliteTurns = new WeakMap<object, BackupTurn>();

export function createBackupTurn(database: Database): BackupTurn {
  const client = (database.db as unknown as { $client: unknown }).$client;
  if (database.driver === 'pglite') {
    const key = client as PGlite;
    let turn = pgliteTurns.get(key);
    if (turn === undefined) {
      turn = turnOf(processTurn());
      pgliteTurns.set(key, turn);
    }
    return turn;
  }
  return turnOf(advisoryTurn(serverUrlOf(client)));
}

/** The turn inside this process: a flag and a queue of waiters. */
function processTurn(): Acquire {
  let held = false;
  const waiters: (() => void)[] = [];
  const release = async () => {
    const next = waiters.shift();
    // Handed straight to the next waiter: nobody can slip in between.
    if (next) next();
    else held = false;
  };
  return async (wait) => {
    if (!held) {
      held = true;
      return release;
    }
    if (!wait) return null;
    return new Promise((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        resolve(release);
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        resolve(null);
      }, TURN_WAIT_MS);
      waiters.push(waiter);
    });
  };
}

/** The turn across instances: a session advisory lock on a connection held while the work runs. */
function advisoryTurn(serverUrl: string): Acquire {
  return async (wait) => {
    const client = new pg.Client({ connectionString: serverUrl });
    client.on('error', () => {});
    await client.connect();
    try {
      let taken: boolean;
      if (wait) {
        await client.query(`SET lock_timeout = ${TURN_WAIT_MS}`);
        try {
          await client.query('SELECT pg_advisory_lock($1)', [BACKUP_TURN_LOCK_KEY]);
          taken = true;
        } catch (error) {
          // 55P03 lock_not_available: lock_timeout ran out.
          if ((error as { code?: string }).code !== '55P03') throw error;
          taken = false;
        }
      } else {
        const { rows } = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1) AS taken', [BACKUP_TURN_LOCK_KEY]);
        taken = rows[0]!.taken;
      }
      if (!taken) {
        await client.end().catch(() => {});
        return null;
      }
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    // Ending the session releases the lock too; unlocking first says so explicitly.
    return async () => {
      await client.query('SELECT pg_advisory_unlock($1)', [BACKUP_TURN_LOCK_KEY]).catch(() => {});
      await client.end().catch(() => {});
    };
  };
}
