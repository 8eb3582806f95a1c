import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, unlinkSync, writeFileSync, writeSync, ftruncateSync } from 'node:fs';
import path from 'node:path';

/**
 * A first-in, first-out queue of serialised events (one JSON text per entry, no newline inside:
 * `JSON.stringify` escapes them). The sender reads batches from the head and removes them once
 * the service has answered, so an event leaves the queue only when it was delivered or refused.
 */
export interface EventQueue {
  /**
   * Appends one event; false when the queue is full, and then the event is not kept. `bytes` is
   * the line's UTF-8 size when the caller measured it already.
   */
  push(line: string, bytes?: number): boolean;
  /**
   * Entries from the head, oldest first, at most `maxEvents` and at most `maxBytes` once joined
   * with commas; at least one when the queue is not empty (no entry is larger than the queue's
   * entry limit, which the sender sets to the body limit).
   */
  head(maxEvents: number, maxBytes: number): string[];
  /** Removes `count` entries from the head. */
  shift(count: number): void;
  /** Entries waiting. */
  readonly length: number;
  /** Their size in bytes (UTF-8, one separator each). */
  readonly bytes: number;
  close(): void;
}

export interface QueueLimits {
  /** The most bytes the queue holds; an event that would pass it is refused (and counted). */
  maxBytes: number;
}

const byteSize = (line: string) => Buffer.byteLength(line) + 1;

function takeFitting(lines: readonly string[], sizes: readonly number[], maxEvents: number, maxBytes: number): number {
  let taken = 0;
  let total = 0;
  while (taken < lines.length && taken < maxEvents) {
    // A joined batch has one comma per entry but the first: the entry's size already counts one.
    const next = total + (sizes[taken] as number);
    if (taken > 0 && next - 1 > maxBytes) break;
    total = next;
    taken += 1;
  }
  return taken;
}

/** The queue of a sender without a spool directory: bounded memory, lost with the process. */
export function memoryQueue(limits: QueueLimits): EventQueue {
  let entries: string[] = [];
  let sizes: number[] = [];
  let start = 0;
  let bytes = 0;
  return {
    push(line, lineBytes) {
      const size = lineBytes === undefined ? byteSize(line) : lineBytes + 1;
      if (bytes + size > limits.maxBytes) return false;
      entries.push(line);
      sizes.push(size);
      bytes += size;
      return true;
    },
    head(maxEvents, maxBytes) {
      const lines = entries.slice(start, start + maxEvents);
      return lines.slice(0, takeFitting(lines, sizes.slice(start, start + maxEvents), maxEvents, maxBytes));
    },
    shift(count) {
      const end = Math.min(start + count, entries.length);
      for (let i = start; i < end; i += 1) bytes -= sizes[i] as number;
      start = end;
      // Compact once the consumed prefix is most of the array, so memory follows what waits.
      if (start > 1024 && start * 2 > entries.length) {
        entries = entries.slice(start);
        sizes = sizes.slice(start);
        start = 0;
      }
    },
    get length() {
      return entries.length - start;
    },
    get bytes() {
      return bytes;
    },
    close() {},
  };
}

export interface SpoolOptions extends QueueLimits {
  dir: string;
  /** A segment file is closed and a new one begun past this size. */
  segmentBytes?: number;
}

const SEGMENT = /^(\d{12})\.jsonl$/;
const segmentName = (seq: number) => `${String(seq).padStart(12, '0')}.jsonl`;

interface Cursor {
  segment: number;
  offset: number;
}

/**
 * The queue of a sender with a spool directory: every event is appended to a segment file before
 * it is sent, and the head's position (`cursor.json`, replaced atomically) moves only when the
 * service has answered. A process killed at any point loses no event it had queued (the append
 * is one write system call, in the page cache before `push` returns; an fsync per event is not
 * made, so a power cut can still lose the last ones) and on restart sends from the head again:
 * the service stores an event id once, so an event sent twice counts as a duplicate.
 *
 * Segments wholly behind the head are deleted. A line cut short by a crash mid-write is cut off on
 * open. One process per directory (a `lock` file holding its pid).
 */
export function diskQueue(options: SpoolOptions): EventQueue {
  const { dir, maxBytes } = options;
  const segmentBytes = options.segmentBytes ?? 4 * 1024 * 1024;
  mkdirSync(dir, { recursive: true });
  const lockPath = path.join(dir, 'lock');
  takeLock(lockPath);

  const cursorPath = path.join(dir, 'cursor.json');
  let segments = readdirSync(dir)
    .map((name) => SEGMENT.exec(name)?.[1])
    .filter((seq): seq is string => seq !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  const saved = readCursor(cursorPath);
  // The cursor is written before a consumed segment is deleted: one left behind the cursor was
  // consumed already.
  for (const seq of segments) if (saved !== null && seq < saved.segment) unlinkSync(path.join(dir, segmentName(seq)));
  segments = segments.filter((seq) => saved === null || seq >= saved.segment);
  if (segments.length === 0) segments = [saved?.segment ?? 1];
  const headAt: Cursor = saved !== null && saved.segment === segments[0] ? saved : { segment: segments[0] as number, offset: 0 };

  let tailSeq = segments[segments.length - 1] as number;
  let tailFd = openSync(path.join(dir, segmentName(tailSeq)), 'a+');
  let tailSize = cutTornLine(tailFd);

  let length = 0;
  let bytes = 0;
  for (const seq of segments) {
    const from = seq === headAt.segment ? headAt.offset : 0;
    const counted = countLines(path.join(dir, segmentName(seq)), from);
    length += counted.lines;
    bytes += counted.bytes;
  }

  let headFd: number | null = null;
  let headFdSeq = -1;
  let lastSizes: number[] = [];

  const fdOfHead = () => {
    if (headFdSeq !== headAt.segment || headFd === null) {
      if (headFd !== null && headFd !== tailFd) closeSync(headFd);
      headFd = headAt.segment === tailSeq ? tailFd : openSync(path.join(dir, segmentName(headAt.segment)), 'r');
      headFdSeq = headAt.segment;
    }
    return headFd;
  };
  const saveCursor = () => {
    writeFileSync(`${cursorPath}.tmp`, JSON.stringify(headAt));
    renameSync(`${cursorPath}.tmp`, cursorPath);
  };
  /** Moves the head past a segment read to its end, when a later one exists. */
  const leaveConsumedSegment = (): boolean => {
    if (headAt.segment === tailSeq) return false;
    const size = fstatSync(fdOfHead()).size;
    if (headAt.offset < size) return false;
    const done = headAt.segment;
    if (headFd !== null && headFd !== tailFd) closeSync(headFd);
    headFd = null;
    headAt.segment = segments.find((seq) => seq > done) as number;
    headAt.offset = 0;
    saveCursor();
    unlinkSync(path.join(dir, segmentName(done)));
    segments = segments.filter((seq) => seq > done);
    return true;
  };

  return {
    push(line, lineBytes) {
      const record = `${line}\n`;
      const size = lineBytes === undefined ? Buffer.byteLength(record) : lineBytes + 1;
      if (bytes + size > maxBytes) return false;
      if (tailSize > 0 && tailSize + size > segmentBytes) {
        if (tailFd !== headFd) closeSync(tailFd);
        tailSeq += 1;
        segments.push(tailSeq);
        tailFd = openSync(path.join(dir, segmentName(tailSeq)), 'a+');
        tailSize = 0;
      }
      writeSync(tailFd, record);
      tailSize += size;
      length += 1;
      bytes += size;
      return true;
    },
    head(maxEvents, maxBytesOfBatch) {
      lastSizes = [];
      if (length === 0 || maxEvents < 1) return [];
      while (leaveConsumedSegment());
      // Read what the batch likely needs (the entries' mean size times the count), and more only
      // when that ran short: the most a batch can hold, an entry being at most the body limit,
      // holds at least one whole. Reading the most every time would read a megabyte per batch.
      const most = maxBytesOfBatch + 2;
      let want = Math.min(most, Math.ceil((bytes / length) * maxEvents * 1.25) + 2);
      let lines: string[];
      let sizes: number[];
      for (;;) {
        const buffer = Buffer.allocUnsafe(want);
        const read = readSync(fdOfHead(), buffer, 0, want, headAt.offset);
        lines = [];
        sizes = [];
        let from = 0;
        while (lines.length < maxEvents) {
          const newline = buffer.indexOf(10, from);
          if (newline < 0 || newline >= read) break;
          lines.push(buffer.toString('utf8', from, newline));
          sizes.push(newline + 1 - from);
          from = newline + 1;
        }
        const ranShort = lines.length < maxEvents && read === want && want < most;
        if (!ranShort) break;
        want = Math.min(most, want * 2);
      }
      if (lines.length === 0) {
        // An entry larger than a batch (queued under a larger limit by an earlier run): hand it
        // out whole, for the sender to refuse.
        const whole = readLineAt(fdOfHead(), headAt.offset);
        lastSizes = [whole.size];
        return [whole.line];
      }
      const taken = takeFitting(lines, sizes, maxEvents, maxBytesOfBatch);
      lastSizes = sizes.slice(0, taken);
      return lines.slice(0, taken);
    },
    shift(count) {
      if (count > lastSizes.length) throw new Error(`shift(${count}) past the ${lastSizes.length} entries last read from the head`);
      let advanced = 0;
      for (let i = 0; i < count; i += 1) advanced += lastSizes[i] as number;
      lastSizes = lastSizes.slice(count);
      headAt.offset += advanced;
      length -= count;
      bytes -= advanced;
      saveCursor();
      leaveConsumedSegment();
    },
    get length() {
      return length;
    },
    get bytes() {
      return bytes;
    },
    close() {
      if (headFd !== null && headFd !== tailFd) closeSync(headFd);
      closeSync(tailFd);
      if (existsSync(lockPath)) unlinkSync(lockPath);
    },
  };
}

function readLineAt(fd: number, offset: number): { line: string; size: number } {
  const parts: Buffer[] = [];
  const chunk = Buffer.allocUnsafe(1024 * 1024);
  for (let at = offset; ; ) {
    const read = readSync(fd, chunk, 0, chunk.length, at);
    const newline = chunk.subarray(0, read).indexOf(10);
    if (newline >= 0 || read === 0) {
      parts.push(Buffer.from(chunk.subarray(0, newline >= 0 ? newline : read)));
      const line = Buffer.concat(parts);
      return { line: line.toString('utf8'), size: line.length + 1 };
    }
    parts.push(Buffer.from(chunk.subarray(0, read)));
    at += read;
  }
}

function readCursor(file: string): Cursor | null {
  if (!existsSync(file)) return null;
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<Cursor>;
    if (Number.isSafeInteger(value.segment) && Number.isSafeInteger(value.offset) && (value.offset as number) >= 0) return value as Cursor;
  } catch {
    // A cursor that cannot be read sends the spool again from its first segment: duplicates, not loss.
  }
  return null;
}

/** Cuts a last line that a crash left without its newline; returns the file's size after. */
function cutTornLine(fd: number): number {
  const size = fstatSync(fd).size;
  if (size === 0) return 0;
  const chunk = Buffer.allocUnsafe(Math.min(size, 64 * 1024));
  let end = size;
  while (end > 0) {
    const length = Math.min(chunk.length, end);
    readSync(fd, chunk, 0, length, end - length);
    const newline = chunk.lastIndexOf(10, length - 1);
    if (newline >= 0) {
      const keep = end - length + newline + 1;
      if (keep !== size) ftruncateSync(fd, keep);
      return keep;
    }
    end -= length;
  }
  ftruncateSync(fd, 0);
  return 0;
}

function countLines(file: string, from: number): { lines: number; bytes: number } {
  const content = readFileSync(file);
  let lines = 0;
  for (let i = content.indexOf(10, from); i >= 0; i = content.indexOf(10, i + 1)) lines += 1;
  return { lines, bytes: Math.max(content.length - from, 0) };
}

function takeLock(lockPath: string): void {
  if (existsSync(lockPath)) {
    const pid = Number(readFileSync(lockPath, 'utf8'));
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
      throw new Error(`the spool ${path.dirname(lockPath)} is in use by process ${pid}`);
    }
  }
  writeFileSync(lockPath, String(process.pid));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
