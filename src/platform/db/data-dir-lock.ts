import { randomBytes } from 'node:crypto';
import { linkSync, openSync, readFileSync, closeSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * One process per embedded data directory (docs/operations.md, "Start-up"). PGlite keeps the whole
 * database in the memory of the process that opened it and writes its files back from there: a
 * second process opening the same DATA_DIR sees a copy that the first never learns of, and each
 * overwrites the other's files. So whoever opens DATA_DIR first holds `DATA_DIR/observatory.lock`,
 * a file naming its pid, and every other opener (another `npm start`, an operator command, a second
 * open in the same process) is refused with DataDirLocked, which names the holder.
 *
 * - The lock file appears whole or not at all: it is written under a private name and hard-linked
 *   into place, which fails when the file exists (no two openers can both win).
 * - A lock left by a process that died (SIGKILL, a crash, a power cut) is stale and taken over:
 *   its pid is gone, or the pid now belongs to another process (a different start time in
 *   /proc), or the machine has rebooted since (another boot id), or the pid is this process's own
 *   while this process never took it (a container restarted with the same pid). The stale file is
 *   renamed aside before it is replaced, and put back if what was moved is not what was judged
 *   stale, so two processes taking over one stale lock at once cannot both win.
 * - A lock written on another host (a data directory on a network share) cannot be judged from
 *   here and is never taken over: the message says which host and pid, and the file to remove
 *   once that process is known to be gone.
 * - The lock is released when the database is closed and, failing that, when the process exits.
 *
 * Only Node's own modules are imported: the operator commands read the lock to find the server
 * without loading the database driver.
 */

export const LOCK_FILE = 'observatory.lock';

export interface LockHolder {
  pid: number;
  host: string;
  /** The kernel's boot id when it was taken (Linux), or null. */
  bootId: string | null;
  /** The holder's start time in clock ticks since boot (Linux /proc/<pid>/stat), or null. */
  startTicks: number | null;
  /** When the lock was taken (ISO). */
  since: string;
  /** The holder's command line, to tell the server from an operator command. */
  command: string;
  nonce: string;
}

export class DataDirLocked extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
    readonly sameProcess: boolean,
  ) {
    super(lockedMessage(dataDir, holder, sameProcess));
    this.name = 'DataDirLocked';
  }
}

export interface DataDirLock {
  readonly dataDir: string;
  readonly holder: LockHolder;
  /** Removes the lock file if it is still this lock's; idempotent. */
  release(): void;
}

/** Locks held by this process: lock path → nonce. */
const heldHere = new Map<string, string>();
let exitHookInstalled = false;

/**
 * Takes the lock on `dataDir` (which must exist) or throws DataDirLocked naming the process that
 * holds it. Synchronous: it runs once, before the database is opened.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const lockPath = join(dataDir, LOCK_FILE);
  const holder: LockHolder = {
    pid: process.pid,
    host: hostname(),
    bootId: bootId(),
    startTicks: startTicksOf(process.pid),
    since: new Date().toISOString(),
    command: process.argv.slice(1).join(' ').slice(0, 300),
    nonce: randomBytes(12).toString('hex'),
  };
  const text = `${JSON.stringify(holder)}\n`;
  const staging = join(dataDir, `.${LOCK_FILE}.${process.pid}.${holder.nonce}`);
  writeFileSync(staging, text, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 8; attempt += 1) {
      if (place(staging, lockPath, text)) {
        heldHere.set(lockPath, holder.nonce);
        installExitHook();
        return { dataDir, holder, release: () => releaseLock(lockPath, holder.nonce) };
      }
      const found = readLockText(lockPath);
      if (found === null) continue; // released meanwhile: try again
      const other = parseHolder(found);
      if (other !== null && holderAlive(lockPath, other)) throw new DataDirLocked(dataDir, other, other.pid === process.pid);
      // Stale (or not a lock this service wrote): moved aside, and put back if it changed meanwhile.
      const aside = `${lockPath}.stale.${process.pid}.${holder.nonce}`;
      try {
        renameSync(lockPath, aside);
      } catch (error) {
        if (codeOf(error) === 'ENOENT') continue;
        throw error;
      }
      const moved = readLockText(aside);
      if (moved !== found) {
        try {
          linkSync(aside, lockPath);
        } catch {
          // Someone else placed a lock already; theirs stands.
        }
      }
      unlinkSync(aside);
    }
    throw new Error(`could not take the lock ${lockPath}: other processes keep changing it`);
  } finally {
    try {
      unlinkSync(staging);
    } catch {
      // already gone
    }
  }
}

/**
 * Who holds the lock on `dataDir` now, without taking it: the holder when a live process holds it
 * (or one on another host), null when nobody does (no file, or a stale one).
 */
export function dataDirHolder(dataDir: string): LockHolder | null {
  const lockPath = join(dataDir, LOCK_FILE);
  const text = readLockText(lockPath);
  if (text === null) return null;
  const holder = parseHolder(text);
  return holder !== null && holderAlive(lockPath, holder) ? holder : null;
}

function lockedMessage(dataDir: string, holder: LockHolder, sameProcess: boolean): string {
  if (sameProcess) {
    return `the data directory ${dataDir} is already open in this process (pid ${holder.pid}); one data directory is opened once`;
  }
  const where = holder.host === hostname() ? '' : ` on host ${holder.host}`;
  const remove =
    holder.host === hostname()
      ? ''
      : `; if no process on ${holder.host} uses it any more, remove ${join(dataDir, LOCK_FILE)}`;
  return `the data directory ${dataDir} is in use by process ${holder.pid}${where} (${holder.command || 'unknown command'}, since ${holder.since}); two processes must never open one data directory: stop that process first, or use a PostgreSQL server (DATABASE_URL) for several${remove}`;
}

/** Links the staged file into place; false when a lock file exists. */
function place(staging: string, lockPath: string, text: string): boolean {
  try {
    linkSync(staging, lockPath);
    return true;
  } catch (error) {
    const code = codeOf(error);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
  }
  // A file system without hard links: exclusive create, then write (a reader may briefly find it empty).
  let fd: number;
  try {
    fd = openSync(lockPath, 'wx', 0o600);
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

function releaseLock(lockPath: string, nonce: string): void {
  if (heldHere.get(lockPath) !== nonce) return;
  heldHere.delete(lockPath);
  const text = readLockText(lockPath);
  if (text !== null && parseHolder(text)?.nonce === nonce) {
    try {
      unlinkSync(lockPath);
    } catch {
      // gone already
    }
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const [lockPath, nonce] of [...heldHere]) releaseLock(lockPath, nonce);
  });
}

function holderAlive(lockPath: string, holder: LockHolder): boolean {
  // Another host's process cannot be looked at from here: held, until an operator says otherwise.
  if (holder.host !== hostname()) return true;
  const boot = bootId();
  if (holder.bootId !== null && boot !== null && holder.bootId !== boot) return false;
  if (holder.pid === process.pid) return heldHere.get(lockPath) === holder.nonce;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: the process exists and belongs to another user.
    if (codeOf(error) === 'ESRCH') return false;
  }
  if (holder.startTicks !== null) {
    const now = startTicksOf(holder.pid);
    if (now !== null && now !== holder.startTicks) return false;
  }
  return true;
}

function parseHolder(text: string): LockHolder | null {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (typeof value.pid !== 'number' || !Number.isInteger(value.pid) || value.pid <= 0 || typeof value.nonce !== 'string') return null;
    return {
      pid: value.pid,
      host: typeof value.host === 'string' ? value.host : hostname(),
      bootId: typeof value.bootId === 'string' ? value.bootId : null,
      startTicks: typeof value.startTicks === 'number' ? value.startTicks : null,
      since: typeof value.since === 'string' ? value.since : 'unknown',
      command: typeof value.command === 'string' ? value.command : '',
      nonce: value.nonce,
    };
  } catch {
    return null;
  }
}

function readLockText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return null;
    throw error;
  }
}

let cachedBootId: string | null | undefined;
function bootId(): string | null {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      cachedBootId = null;
    }
  }
  return cachedBootId;
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces). */
function startTicksOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}
