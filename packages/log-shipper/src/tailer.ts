import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, type BigIntStats, statSync } from 'node:fs';
import type { FilePosition } from './position.ts';

/** One complete line and where it lies in its file (bytes; `end` is past its newline). */
export interface TailedLine {
  text: string;
  offset: number;
  end: number;
}

export interface TailerOptions {
  path: string;
  /** The position saved by an earlier run, if any. */
  saved: FilePosition | null;
  /** Where the file's rotated copy goes, to finish it after a restart that missed a rotation (default `<path>.1`). */
  rotatedPaths?: readonly string[];
  /** The most bytes read per poll (default 1 MiB); a longer line is cut there. */
  maxReadBytes?: number;
  /**
   * After the path names a new file, the old one is read until it stays at its end; it is left
   * once the new file has lines, or this long after the rotation was seen (default 5,000 ms).
   */
  rotationGraceMs?: number;
  /** Without a saved position: read the file from its end instead of its start. */
  startAtEnd?: boolean;
  now?: () => number;
}

export interface TailerCounters {
  /** Switches to a new file after the old one was renamed (or removed). */
  rotations: number;
  /** Times the file was found shorter than the position, or with another first line: copied and truncated. */
  truncations: number;
  /** Lines cut at `maxReadBytes`. */
  oversized: number;
}

export interface Tailer {
  /** Complete lines from the position on (at most `maxReadBytes`), not yet consumed. Empty when there are none. */
  read(): TailedLine[];
  /** Consumes lines up to `end` (the `end` of the last one the caller accepted). */
  consume(end: number): void;
  /** The position to save: where the next read starts, in which file; null before the file exists. */
  position(): FilePosition | null;
  counters(): TailerCounters;
  close(): void;
}

interface OpenFile {
  fd: number;
  dev: string;
  ino: string;
  head: string | null;
  /** Bytes of the first line, once known. */
  headBytes: number;
  offset: number;
}

const identityOf = (stats: BigIntStats) => ({ dev: String(stats.dev), ino: String(stats.ino) });

function statOrNull(file: string): BigIntStats | null {
  try {
    return statSync(file, { bigint: true });
  } catch {
    return null;
  }
}

/**
 * Follows one log file by polling (stat and read; no watchers, no native code). Survives the two
 * ways logs are rotated: renamed (logrotate's default: the path then names a new file; the old
 * one is read to its end first, since the server writes to it until it reopens its log), and
 * copied then truncated in place (the file shrinks below the position, or its first line changes:
 * reading starts again from 0).
 */
export function createTailer(options: TailerOptions): Tailer {
  const now = options.now ?? Date.now;
  const maxReadBytes = options.maxReadBytes ?? 1024 * 1024;
  const graceMs = options.rotationGraceMs ?? 5000;
  const rotatedPaths = options.rotatedPaths ?? [`${options.path}.1`];
  const counters: TailerCounters = { rotations: 0, truncations: 0, oversized: 0 };
  let saved = options.saved;
  let current: OpenFile | null = null;
  let rotationSeenAt: number | null = null;

  const firstLine = (fd: number): { head: string; bytes: number } | null => {
    const buffer = Buffer.allocUnsafe(Math.min(maxReadBytes, 64 * 1024));
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const newline = buffer.subarray(0, read).indexOf(10);
    // A first line longer than the buffer is identified by the buffer: it is long enough to tell files apart.
    const bytes = newline >= 0 ? newline + 1 : read === buffer.length ? read : 0;
    if (bytes === 0) return null;
    return { head: createHash('sha256').update(buffer.subarray(0, bytes)).digest('hex'), bytes };
  };

  const openAt = (file: string, expected: FilePosition | null, fallbackOffset: (size: number) => number): OpenFile | null => {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (error) {
      // Not there (yet): wait for it. Anything else (no permission) is the operator's to fix: say so.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    let stats: BigIntStats;
    let first: { head: string; bytes: number } | null;
    try {
      stats = fstatSync(fd, { bigint: true });
      first = firstLine(fd);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    const identity = identityOf(stats);
    // The device number is left out: it can change across reboots (and container restarts) while
    // the file stays; the inode with the first line's hash tells files apart.
    const same = expected !== null && expected.ino === identity.ino && (expected.head === null || expected.head === first?.head);
    const size = Number(stats.size);
    if (expected !== null && !same) {
      closeSync(fd);
      return null;
    }
    const offset = same && expected !== null ? (expected.offset <= size ? expected.offset : 0) : fallbackOffset(size);
    return { fd, ...identity, head: first?.head ?? null, headBytes: first?.bytes ?? 0, offset };
  };

  const open = (): OpenFile | null => {
    if (saved !== null) {
      const resumed = openAt(options.path, saved, () => 0);
      if (resumed !== null) return resumed;
      // The file was rotated while nothing read it: finish the rotated copy first.
      for (const rotated of rotatedPaths) {
        const old = openAt(rotated, saved, () => 0);
        if (old !== null) {
          // Known rotated already: once at its end, it is left for the new file as soon as that has lines.
          rotationSeenAt = now();
          return old;
        }
      }
      return openAt(options.path, null, () => 0);
    }
    return openAt(options.path, null, (size) => (options.startAtEnd ? size : 0));
  };

  /** The file was copied and truncated: shorter than the position, or its first line is another. */
  const checkTruncated = (file: OpenFile) => {
    const size = Number(fstatSync(file.fd, { bigint: true }).size);
    let truncated = size < file.offset;
    if (!truncated && file.head !== null) {
      const buffer = Buffer.allocUnsafe(file.headBytes);
      const read = readSync(file.fd, buffer, 0, file.headBytes, 0);
      truncated = read < file.headBytes || createHash('sha256').update(buffer).digest('hex') !== file.head;
    }
    if (!truncated) return;
    counters.truncations += 1;
    file.offset = 0;
    file.head = null;
    file.headBytes = 0;
  };

  const readLines = (file: OpenFile): TailedLine[] => {
    if (file.head === null) {
      const first = firstLine(file.fd);
      if (first === null) return [];
      file.head = first.head;
      file.headBytes = first.bytes;
    }
    const buffer = Buffer.allocUnsafe(maxReadBytes);
    const read = readSync(file.fd, buffer, 0, maxReadBytes, file.offset);
    const lines: TailedLine[] = [];
    let from = 0;
    for (let newline = buffer.indexOf(10); newline >= 0 && newline < read; newline = buffer.indexOf(10, from)) {
      lines.push({ text: buffer.toString('utf8', from, newline), offset: file.offset + from, end: file.offset + newline + 1 });
      from = newline + 1;
    }
    if (lines.length === 0 && read === maxReadBytes) {
      counters.oversized += 1;
      lines.push({ text: buffer.toString('utf8', 0, read), offset: file.offset, end: file.offset + read });
    }
    return lines;
  };

  /** At the end of the open file: whether the path names another file now, and whether to move to it. */
  const followRotation = (file: OpenFile): boolean => {
    const stats = statOrNull(options.path);
    const moved = stats === null || String(stats.dev) !== file.dev || String(stats.ino) !== file.ino;
    if (!moved) {
      rotationSeenAt = null;
      return false;
    }
    if (stats === null) return false; // renamed, and the server has not created the new file yet
    if (rotationSeenAt === null) {
      // Seen now: read the old file once more before leaving it.
      rotationSeenAt = now();
      return false;
    }
    if (stats.size === 0n && now() - rotationSeenAt < graceMs) return false;
    closeSync(file.fd);
    current = null;
    rotationSeenAt = null;
    counters.rotations += 1;
    saved = null;
    current = openAt(options.path, null, () => 0);
    return true;
  };

  return {
    read() {
      if (current === null) {
        current = open();
        if (current === null) return [];
        saved = null;
      }
      checkTruncated(current);
      const lines = readLines(current);
      if (lines.length > 0) return lines;
      if (followRotation(current) && current !== null) return readLines(current);
      return [];
    },
    consume(end) {
      if (current !== null && end > current.offset) current.offset = end;
    },
    position() {
      if (current === null) return saved;
      return { dev: current.dev, ino: current.ino, head: current.head, offset: current.offset };
    },
    counters: () => ({ ...counters }),
    close() {
      if (current === null) return;
      // The position stays readable after close, to be saved.
      saved = { dev: current.dev, ino: current.ino, head: current.head, offset: current.offset };
      closeSync(current.fd);
      current = null;
    },
  };
}
