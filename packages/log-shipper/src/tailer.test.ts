import { appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTailer, type Tailer, type TailerOptions } from './tailer.ts';

let dir: string;
let log: string;
let clock: number;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tailer-'));
  log = path.join(dir, 'access.log');
  clock = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const tailer = (extra: Partial<TailerOptions> = {}) => createTailer({ path: log, saved: null, now: () => clock, ...extra });

/** Reads and consumes until nothing is new. */
function drain(t: Tailer): string[] {
  const seen: string[] = [];
  for (let i = 0; i < 100; i += 1) {
    const lines = t.read();
    if (lines.length === 0) return seen;
    seen.push(...lines.map((l) => l.text));
    t.consume((lines.at(-1) as { end: number }).end);
  }
  throw new Error('never ran dry');
}

const lines = (prefix: string, from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${prefix}-${from + i}`);
const append = (file: string, texts: string[]) => appendFileSync(file, texts.map((t) => `${t}\n`).join(''));

describe('the tailer', () => {
  it('gives complete lines with their byte offsets, and a line only once its newline is written', () => {
    const t = tailer();
    expect(t.read()).toEqual([]);
    writeFileSync(log, 'first\nsec');
    expect(t.read()).toEqual([{ text: 'first', offset: 0, end: 6 }]);
    t.consume(6);
    expect(t.read()).toEqual([]);
    appendFileSync(log, 'ond\nthird\n');
    expect(t.read()).toEqual([
      { text: 'second', offset: 6, end: 13 },
      { text: 'third', offset: 13, end: 19 },
    ]);
    // Unconsumed lines are given again.
    expect(t.read().map((l) => l.text)).toEqual(['second', 'third']);
    t.consume(13);
    expect(t.position()).toMatchObject({ offset: 13 });
    expect(drain(t)).toEqual(['third']);
  });

  it('follows a rename rotation: finishes the old file, including lines written to it after the rename, then reads the new one from its start', () => {
    append(log, lines('old', 0, 5));
    const t = tailer();
    expect(drain(t)).toEqual(lines('old', 0, 5));
    renameSync(log, `${log}.1`);
    // The server writes to the renamed file until it reopens its log.
    append(`${log}.1`, lines('old', 5, 8));
    writeFileSync(log, '');
    expect(drain(t)).toEqual(lines('old', 5, 8));
    append(`${log}.1`, lines('old', 8, 9));
    append(log, lines('new', 0, 4));
    expect(drain(t)).toEqual([...lines('old', 8, 9), ...lines('new', 0, 4)]);
    expect(t.counters()).toMatchObject({ rotations: 1, truncations: 0 });
    append(log, lines('new', 4, 6));
    expect(drain(t)).toEqual(lines('new', 4, 6));
  });

  it('waits for the new file while the path is missing, and leaves an empty new file only after the grace period', () => {
    append(log, lines('old', 0, 2));
    const t = tailer({ rotationGraceMs: 1000 });
    expect(drain(t)).toEqual(lines('old', 0, 2));
    renameSync(log, `${log}.1`);
    expect(drain(t)).toEqual([]);
    writeFileSync(log, '');
    expect(drain(t)).toEqual([]);
    clock += 999;
    append(`${log}.1`, lines('old', 2, 3));
    expect(drain(t)).toEqual(lines('old', 2, 3));
    expect(t.counters().rotations).toBe(0);
    clock += 1;
    expect(drain(t)).toEqual([]);
    expect(t.counters().rotations).toBe(1);
    append(log, lines('new', 0, 1));
    expect(drain(t)).toEqual(lines('new', 0, 1));
  });

  it('follows copytruncate: a file shorter than the position is read again from 0', () => {
    append(log, lines('before', 0, 10));
    const t = tailer();
    expect(drain(t)).toEqual(lines('before', 0, 10));
    truncateSync(log, 0);
    append(log, lines('after', 0, 2));
    expect(drain(t)).toEqual(lines('after', 0, 2));
    expect(t.counters().truncations).toBe(1);
  });

  it('follows copytruncate also when the file grew past the position before the next poll (its first line changed)', () => {
    append(log, lines('a', 0, 2));
    const t = tailer();
    expect(drain(t)).toEqual(lines('a', 0, 2));
    truncateSync(log, 0);
    append(log, lines('bb', 0, 6));
    expect(drain(t)).toEqual(lines('bb', 0, 6));
    expect(t.counters().truncations).toBe(1);
  });

  it('resumes from a saved position, without giving a consumed line again', () => {
    append(log, lines('x', 0, 6));
    const first = tailer();
    const got = first.read();
    first.consume((got[2] as { end: number }).end);
    const saved = first.position();
    first.close();
    expect(drain(tailer({ saved }))).toEqual(lines('x', 3, 6));
  });

  it('resumes when only the device number changed (a reboot can renumber it)', () => {
    append(log, lines('x', 0, 4));
    const first = tailer();
    const got = first.read();
    first.consume((got[1] as { end: number }).end);
    const saved = first.position();
    first.close();
    expect(drain(tailer({ saved: saved && { ...saved, dev: '999999' } }))).toEqual(lines('x', 2, 4));
  });

  it('after a restart that missed a rename rotation, finishes the rotated copy (<path>.1) before the new file', () => {
    append(log, lines('old', 0, 4));
    const first = tailer();
    const got = first.read();
    first.consume((got[1] as { end: number }).end);
    const saved = first.position();
    first.close();
    renameSync(log, `${log}.1`);
    append(log, lines('new', 0, 3));
    const second = tailer({ saved });
    expect(drain(second)).toEqual([...lines('old', 2, 4), ...lines('new', 0, 3)]);
  });

  it('starts from 0 when the saved file is gone and its inode may be reused by another (another first line)', () => {
    append(log, lines('gone', 0, 3));
    const first = tailer();
    drain(first);
    const saved = first.position();
    first.close();
    unlinkSync(log);
    append(log, lines('fresh', 0, 2));
    expect(drain(tailer({ saved: saved && { ...saved } }))).toEqual(lines('fresh', 0, 2));
  });

  it('reads a file never seen from its end when asked to', () => {
    append(log, lines('history', 0, 3));
    const t = tailer({ startAtEnd: true });
    expect(drain(t)).toEqual([]);
    append(log, lines('live', 0, 1));
    expect(drain(t)).toEqual(lines('live', 0, 1));
  });

  it('bounds each read, and cuts a line longer than a read', () => {
    append(log, ['a'.repeat(40), 'short', 'b'.repeat(10)]);
    const t = tailer({ maxReadBytes: 32 });
    const first = t.read();
    expect(first).toEqual([{ text: 'a'.repeat(32), offset: 0, end: 32 }]);
    t.consume(32);
    expect(drain(t)).toEqual(['a'.repeat(8), 'short', 'b'.repeat(10)]);
    expect(t.counters().oversized).toBe(1);
  });
});
