import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { diskQueue, type EventQueue, memoryQueue } from './queue.ts';

const opened: EventQueue[] = [];
const made: string[] = [];
const spoolDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sender-spool-'));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
const open = (dir: string, maxBytes = 1 << 20, segmentBytes?: number) => {
  const queue = diskQueue({ dir, maxBytes, ...(segmentBytes === undefined ? {} : { segmentBytes }) });
  opened.push(queue);
  return queue;
};
afterEach(() => {
  for (const queue of opened.splice(0)) {
    try {
      queue.close();
    } catch {
      // closed by the test
    }
  }
});

const line = (n: number) => JSON.stringify({ id: `e-${n}`, path: '/x', ip: '192.0.2.1' });

describe.each([
  ['memory', () => memoryQueue({ maxBytes: 1 << 20 })],
  ['disk', () => open(spoolDir())],
])('%s queue', (_name, make) => {
  it('hands entries out oldest first and keeps them until shifted', () => {
    const queue = make();
    for (let i = 0; i < 5; i += 1) expect(queue.push(line(i))).toBe(true);
    expect(queue.head(3, 1 << 20)).toEqual([line(0), line(1), line(2)]);
    expect(queue.head(3, 1 << 20)).toEqual([line(0), line(1), line(2)]);
    queue.shift(2);
    expect(queue.head(10, 1 << 20)).toEqual([line(2), line(3), line(4)]);
    expect(queue.length).toBe(3);
    queue.shift(3);
    expect(queue.length).toBe(0);
    expect(queue.bytes).toBe(0);
    expect(queue.head(10, 1 << 20)).toEqual([]);
  });

  it('fits a batch to the byte limit once joined with commas, but always hands out one entry', () => {
    const queue = make();
    for (let i = 0; i < 4; i += 1) queue.push('x'.repeat(9));
    // 9 + 1 + 9 = 19 bytes for two; three need 29.
    expect(queue.head(10, 19)).toHaveLength(2);
    expect(queue.head(10, 28)).toHaveLength(2);
    expect(queue.head(10, 29)).toHaveLength(3);
    expect(queue.head(10, 5)).toHaveLength(1);
  });

  it('counts bytes in UTF-8 with one separator per entry', () => {
    const queue = make();
    queue.push('"é"');
    expect(queue.bytes).toBe(5);
  });

  it('behaves as a FIFO for any sequence of pushes and shifts (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ maxLength: 20 }).map((s) => ({ push: JSON.stringify(s) })), fc.nat(4).map((n) => ({ shift: n }))), { maxLength: 40 }), (ops) => {
        const queue = make();
        const model: string[] = [];
        for (const op of ops) {
          if ('push' in op) {
            queue.push(op.push);
            model.push(op.push);
          } else {
            const taken = queue.head(op.shift, 1 << 20);
            expect(taken).toEqual(model.slice(0, Math.min(op.shift, model.length)));
            queue.shift(taken.length);
            model.splice(0, taken.length);
          }
          expect(queue.length).toBe(model.length);
        }
        expect(queue.head(1000, 1 << 20)).toEqual(model);
        queue.shift(model.length);
        if (queue !== undefined && 'close' in queue) queue.close();
      }),
      { numRuns: 60 },
    );
  });
});

describe('memory queue', () => {
  it('refuses an entry that would pass its byte limit, and takes more once room is made', () => {
    const queue = memoryQueue({ maxBytes: 20 });
    expect(queue.push('x'.repeat(9))).toBe(true);
    expect(queue.push('x'.repeat(9))).toBe(true);
    expect(queue.push('x')).toBe(false);
    queue.head(1, 100);
    queue.shift(1);
    expect(queue.push('y'.repeat(9))).toBe(true);
    expect(queue.head(5, 100)).toEqual(['x'.repeat(9), 'y'.repeat(9)]);
  });
});

describe('disk queue', () => {
  it('keeps what was not shifted across a close and a reopen, and forgets what was', () => {
    const dir = spoolDir();
    const first = open(dir);
    for (let i = 0; i < 4; i += 1) first.push(line(i));
    first.head(2, 1 << 20);
    first.shift(2);
    first.close();
    const second = open(dir);
    expect(second.length).toBe(2);
    expect(second.bytes).toBe(Buffer.byteLength(line(2)) + 1 + Buffer.byteLength(line(3)) + 1);
    expect(second.head(10, 1 << 20)).toEqual([line(2), line(3)]);
  });

  it('survives a process that died without closing: the lock of a dead pid is taken over', () => {
    const dir = spoolDir();
    const first = open(dir);
    first.push(line(1));
    // No close(): a killed process leaves its lock. The pid below is not running.
    writeFileSync(path.join(dir, 'lock'), '2147483646');
    const second = open(dir);
    expect(second.head(5, 1 << 20)).toEqual([line(1)]);
  });

  it('refuses a directory another live process holds', () => {
    const dir = spoolDir();
    writeFileSync(path.join(dir, 'lock'), String(process.ppid));
    expect(() => diskQueue({ dir, maxBytes: 1000 })).toThrow(/in use by process/);
  });

  it('cuts a line a crash left half written, keeping every whole one', () => {
    const dir = spoolDir();
    const first = open(dir);
    first.push(line(1));
    first.close();
    const segment = readdirSync(dir).find((name) => name.endsWith('.jsonl')) as string;
    appendFileSync(path.join(dir, segment), '{"id":"e-2","pa');
    const second = open(dir);
    expect(second.length).toBe(1);
    expect(second.head(5, 1 << 20)).toEqual([line(1)]);
    second.push(line(3));
    expect(second.head(5, 1 << 20)).toEqual([line(1), line(3)]);
  });

  it('starts new segments past the segment size and deletes the ones wholly read', () => {
    const dir = spoolDir();
    const queue = open(dir, 1 << 20, 100);
    for (let i = 0; i < 10; i += 1) queue.push(line(i));
    const segments = () => readdirSync(dir).filter((name) => name.endsWith('.jsonl')).length;
    expect(segments()).toBeGreaterThan(3);
    const before = segments();
    const got: string[] = [];
    while (queue.length > 0) {
      const batch = queue.head(3, 1 << 20);
      got.push(...batch);
      queue.shift(batch.length);
    }
    expect(got).toEqual(Array.from({ length: 10 }, (_, i) => line(i)));
    expect(segments()).toBeLessThan(before);
    expect(segments()).toBe(1);
    queue.close();
    const reopened = open(dir, 1 << 20, 100);
    expect(reopened.length).toBe(0);
    reopened.push(line(99));
    expect(reopened.head(5, 1 << 20)).toEqual([line(99)]);
  });

  it('reads the spool from its start again when the cursor is unreadable: duplicates, never loss', () => {
    const dir = spoolDir();
    const first = open(dir);
    for (let i = 0; i < 3; i += 1) first.push(line(i));
    first.head(1, 1 << 20);
    first.shift(1);
    first.close();
    writeFileSync(path.join(dir, 'cursor.json'), '{not json');
    const second = open(dir);
    expect(second.head(5, 1 << 20)).toEqual([line(0), line(1), line(2)]);
  });

  it('is bounded: past maxBytes an entry is refused, and the bound counts what reopened', () => {
    const dir = spoolDir();
    const first = open(dir, 30);
    expect(first.push('x'.repeat(14))).toBe(true);
    expect(first.push('x'.repeat(14))).toBe(true);
    expect(first.push('x')).toBe(false);
    first.close();
    const second = open(dir, 30);
    expect(second.push('x')).toBe(false);
    second.head(1, 100);
    second.shift(1);
    expect(second.push('x')).toBe(true);
  });

  it('hands out whole an entry larger than the batch limit (queued by a run with a larger one)', () => {
    const dir = spoolDir();
    const queue = open(dir);
    const big = JSON.stringify('z'.repeat(3000));
    queue.push(big);
    queue.push(line(1));
    expect(queue.head(10, 100)).toEqual([big]);
    queue.shift(1);
    expect(queue.head(10, 100)).toEqual([line(1)]);
  });

  it('writes the cursor atomically and removes its lock on close', () => {
    const dir = spoolDir();
    const queue = open(dir);
    queue.push(line(1));
    queue.head(1, 1000);
    queue.shift(1);
    expect(JSON.parse(readFileSync(path.join(dir, 'cursor.json'), 'utf8'))).toEqual({ segment: 1, offset: Buffer.byteLength(line(1)) + 1 });
    expect(existsSync(path.join(dir, 'cursor.json.tmp'))).toBe(false);
    queue.close();
    expect(existsSync(path.join(dir, 'lock'))).toBe(false);
  });
});
