import { appendFileSync, existsSync, mkdtempSync, renameSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTailer, type Tailer } from './tailer.ts';

/**
 * Any sequence of writes, polls that take part of what they read, restarts from the saved
 * position, rename rotations (with lines written to the renamed file before the server reopens
 * its log) and copytruncate: every line written is given exactly once, in order.
 */
type Op =
  | { kind: 'write'; lines: number }
  | { kind: 'poll'; take: number }
  | { kind: 'restart' }
  | { kind: 'rename' }
  | { kind: 'reopen' }
  | { kind: 'copytruncate' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 5 }).map((lines) => ({ kind: 'write' as const, lines })) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 6 }).map((take) => ({ kind: 'poll' as const, take })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'rename' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reopen' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'copytruncate' as const }) },
);

const GRACE = 100;

describe('the tailer under any sequence of writes, restarts and rotations', () => {
  it('gives every line once, in order', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const dir = mkdtempSync(path.join(tmpdir(), 'tailer-prop-'));
        try {
          const log = path.join(dir, 'access.log');
          let clock = 0;
          const open = (t: Tailer | null) => createTailer({ path: log, saved: t?.position() ?? null, rotationGraceMs: GRACE, now: () => clock });
          let tailer = open(null);
          const written: string[] = [];
          const given: string[] = [];
          /** The file the server writes to: the renamed one until it reopens its log. */
          let serverFile = log;
          let count = 0;
          writeFileSync(log, '');
          const take = (limit: number) => {
            const lines = tailer.read().slice(0, limit);
            given.push(...lines.map((l) => l.text));
            if (lines.length > 0) tailer.consume((lines.at(-1) as { end: number }).end);
          };
          /** Polls until nothing is left, past the rotation grace. */
          const settle = () => {
            for (let i = 0; i < 4; i += 1) {
              for (let j = 0; j < 50 && tailer.read().length > 0; j += 1) take(Infinity);
              clock += GRACE + 1;
            }
          };
          for (const step of ops) {
            switch (step.kind) {
              case 'write':
                for (let i = 0; i < step.lines; i += 1) {
                  const text = `line-${(count += 1)}-${'x'.repeat(count % 7)}`;
                  written.push(text);
                  appendFileSync(serverFile, `${text}\n`);
                }
                break;
              case 'poll':
                take(step.take);
                break;
              case 'restart':
                tailer.close();
                tailer = open(tailer);
                break;
              case 'rename':
                if (serverFile !== log) break;
                // logrotate moves the previous rotated file on before this one; the tailer finished it.
                settle();
                if (existsSync(`${log}.1`)) unlinkSync(`${log}.1`);
                renameSync(log, `${log}.1`);
                serverFile = `${log}.1`;
                break;
              case 'reopen':
                if (serverFile === log) break;
                writeFileSync(log, '', { flag: 'a' });
                serverFile = log;
                break;
              case 'copytruncate':
                if (serverFile !== log) break;
                // The copy holds what the tailer had not read yet: it finishes it from there first.
                settle();
                truncateSync(log, 0);
                break;
            }
          }
          if (serverFile !== log) writeFileSync(log, '', { flag: 'a' });
          settle();
          tailer.close();
          expect(given).toEqual(written);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 150 },
    );
  });
});
