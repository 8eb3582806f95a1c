import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where reading a log file stands: which file (its inode, and the hash of its first line, since an
 * inode is reused once its file is deleted; the device is kept for the operator's eye) and the
 * byte offset just past the last line handed to the sender.
 */
export interface FilePosition {
  dev: string;
  ino: string;
  /** SHA-256 (hex) of the file's first line, newline included; null while it has none. */
  head: string | null;
  offset: number;
}

/** The file a log path's position is kept in, under the state directory. */
export function positionFile(stateDir: string, logPath: string): string {
  const key = createHash('sha256').update(path.resolve(logPath)).digest('hex').slice(0, 16);
  return path.join(stateDir, 'positions', `${path.basename(logPath).replace(/[^A-Za-z0-9._-]/g, '_')}-${key}.json`);
}

/** Replaces the saved position atomically (a temporary file renamed over it): a crash leaves the old or the new one, never half. */
export function savePosition(file: string, logPath: string, position: FilePosition): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.tmp`;
  writeFileSync(temporary, `${JSON.stringify({ path: path.resolve(logPath), ...position })}\n`);
  renameSync(temporary, file);
}

/** The saved position, or null when there is none or it cannot be read (then the file is read from its start). */
export function loadPosition(file: string): FilePosition | null {
  if (!existsSync(file)) return null;
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<FilePosition>;
    const isDigits = (v: unknown): v is string => typeof v === 'string' && /^\d+$/.test(v);
    if (!isDigits(value.dev) || !isDigits(value.ino)) return null;
    if (!Number.isSafeInteger(value.offset) || (value.offset as number) < 0) return null;
    if (value.head !== null && (typeof value.head !== 'string' || !/^[0-9a-f]{64}$/.test(value.head))) return null;
    return { dev: value.dev, ino: value.ino, head: value.head, offset: value.offset as number };
  } catch {
    return null;
  }
}

/**
 * The event id of a log line: derived from the file's identity, the line's byte offset and its
 * text, so a line read again after a crash gets the id it was sent with, and the service answers
 * it as a duplicate; the same text at another place (another request in the same second) gets
 * another id.
 */
export function lineId(file: Pick<FilePosition, 'ino' | 'head'>, offset: number, text: string): string {
  // Not the device number, which can change across reboots while the file stays.
  const digest = createHash('sha256').update(`${file.ino}:${file.head ?? ''}\n${offset}\n`).update(text).digest('hex');
  return `log-${digest}`;
}
