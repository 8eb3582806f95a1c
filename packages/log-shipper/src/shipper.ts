import path from 'node:path';
import { createSender, type Sender, type SenderOptions, type SenderStats } from '@observatory/sender';
import { caddyParser } from './caddy.ts';
import { apacheLogFormat, COMBINED, compileLogFormat, type LineParser } from './log-format.ts';
import { lineId, loadPosition, positionFile, savePosition } from './position.ts';
import { eventOf } from './record.ts';
import { createTailer, type Tailer, type TailerCounters } from './tailer.ts';

export type LogFormatName = 'combined' | 'caddy' | 'nginx' | 'apache';

export interface FormatOptions {
  format: LogFormatName;
  /** For `nginx`: the `log_format` string; for `apache`: the `LogFormat` string. */
  logFormat?: string;
  /** For `caddy`: the request header holding the JA4 (default `x-ja4`). */
  ja4Header?: string;
  /** For `nginx` and `apache`: the variables read as the JA4. */
  ja4Variables?: readonly string[];
}

/** The parser for a format; throws a message for an operator when the format is unusable. */
export function parserFor(options: FormatOptions): LineParser {
  const ja4 = options.ja4Variables === undefined ? {} : { ja4Variables: options.ja4Variables };
  switch (options.format) {
    case 'combined':
      // Servers often add fields after combined's (nginx's "main" adds X-Forwarded-For): allowed.
      return compileLogFormat(COMBINED, { allowTrailing: true, ...ja4 });
    case 'caddy':
      return caddyParser(options.ja4Header === undefined ? {} : { ja4Header: options.ja4Header });
    case 'nginx':
    case 'apache': {
      if (options.logFormat === undefined || options.logFormat.trim() === '') throw new Error(`the ${options.format} format needs its log format string`);
      const format = options.format === 'apache' ? apacheLogFormat(options.logFormat) : options.logFormat;
      return compileLogFormat(format, ja4);
    }
    default:
      throw new Error(`unknown format ${String(options.format)} (combined, caddy, nginx or apache)`);
  }
}

export interface ShipperOptions extends FormatOptions {
  paths: readonly string[];
  /** Positions (`positions/`) and the sender's spool (`spool/`) live here. */
  stateDir: string;
  sender: Omit<SenderOptions, 'spoolDir'>;
  /** Between polls when the files had nothing new (default 250 ms). */
  pollMs?: number;
  maxReadBytes?: number;
  rotationGraceMs?: number;
  startAtEnd?: boolean;
  /** Called when reading a log fails (it is tried again every poll); log it, it must not throw. */
  onReadProblem?: (message: string) => void;
  now?: () => number;
}

export interface ShipperStats {
  /** Complete lines read. */
  lines: number;
  /** Of those, handed to the sender as events. */
  shipped: number;
  /** Lines that are not a request in the format (or lack a valid address, method or path): skipped. */
  unparsed: number;
  /** Polls that stopped early because the sender's queue was full (the lines wait in the file). */
  backpressure: number;
  /** Failures to read a log (no permission…), each counted and reported once until reading works again. */
  readFailures: number;
  files: Array<{ path: string } & TailerCounters & { offset: number | null }>;
  sender: SenderStats;
}

export interface Shipper {
  /** Reads what is new in every file once and hands it to the sender; true when something was read. */
  poll(): boolean;
  stats(): ShipperStats;
  readonly sender: Sender;
  /** Stops polling, saves the positions, flushes the sender for up to `timeoutMs` (the spool keeps the rest). */
  close(timeoutMs?: number): Promise<void>;
}

interface FollowedFile {
  path: string;
  tailer: Tailer;
  stateFile: string;
  savedOffset: string | null;
}

/**
 * Tails access logs and delivers each request through the sender. A line's position is saved only
 * after its event is in the sender's spool, and each event's id is derived from its line: a
 * process killed at any moment, started again, re-reads at most the lines after the last saved
 * position and sends them with the ids they had, which the service answers as duplicates.
 */
export function createShipper(options: ShipperOptions): Shipper {
  if (options.paths.length === 0) throw new Error('no log file to follow');
  const parse = parserFor(options);
  const pollMs = options.pollMs ?? 250;
  const sender = createSender({ ...options.sender, spoolDir: path.join(options.stateDir, 'spool') });
  const counts = { lines: 0, shipped: 0, unparsed: 0, backpressure: 0, readFailures: 0 };
  const highWater = 0.9 * (options.sender.maxQueueBytes ?? 64 * 1024 * 1024);
  const files: FollowedFile[] = options.paths.map((logPath) => {
    const stateFile = positionFile(options.stateDir, logPath);
    return {
      path: logPath,
      stateFile,
      savedOffset: null,
      tailer: createTailer({
        path: logPath,
        saved: loadPosition(stateFile),
        ...(options.maxReadBytes === undefined ? {} : { maxReadBytes: options.maxReadBytes }),
        ...(options.rotationGraceMs === undefined ? {} : { rotationGraceMs: options.rotationGraceMs }),
        ...(options.startAtEnd === undefined ? {} : { startAtEnd: options.startAtEnd }),
        ...(options.now === undefined ? {} : { now: options.now }),
      }),
    };
  });

  const save = (file: FollowedFile) => {
    const position = file.tailer.position();
    if (position === null) return;
    const key = JSON.stringify(position);
    if (key === file.savedOffset) return;
    savePosition(file.stateFile, file.path, position);
    file.savedOffset = key;
  };

  /** Ships one file's new lines; false when the sender's queue filled up. */
  const shipFile = (file: FollowedFile): { read: boolean; full: boolean } => {
    const lines = file.tailer.read();
    const position = file.tailer.position();
    let consumed = -1;
    let stalled = false;
    for (const line of lines) {
      const request = parse(line.text);
      const event = request === null || position === null ? null : eventOf(request, lineId(position, line.offset, line.text));
      if (event === null) {
        counts.unparsed += 1;
      } else {
        const { pendingBytes, dropped } = sender.stats();
        // Stop short of the queue's bound, so that lines wait in the file rather than be refused.
        // A null from record is a drop (queue full) or a refusal; only the drop counter tells them apart.
        const full = pendingBytes >= highWater || (sender.record(event) === null && sender.stats().dropped > dropped);
        if (full) {
          // The queue is full: this line and the rest stay in the file for a later poll.
          stalled = true;
          counts.backpressure += 1;
          break;
        }
        counts.shipped += 1;
      }
      counts.lines += 1;
      consumed = line.end;
    }
    if (consumed >= 0) file.tailer.consume(consumed);
    // The position moves only now, after the events are in the spool.
    save(file);
    return { read: lines.length > 0, full: stalled };
  };

  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  /** The last failure reported, so that one failing every poll is reported once. */
  let lastFailure: string | null = null;
  const poll = () => {
    let read = false;
    let full = false;
    for (const file of files) {
      const result = shipFile(file);
      read ||= result.read;
      full ||= result.full;
    }
    return read && !full;
  };
  const loop = () => {
    timer = null;
    if (closed) return;
    let again = false;
    try {
      again = poll();
      lastFailure = null;
    } catch (error) {
      const message = (error as Error).message;
      if (message !== lastFailure) {
        lastFailure = message;
        counts.readFailures += 1;
        options.onReadProblem?.(message);
      }
    }
    // More may be waiting right behind a full read: go on at once, else wait for the next poll.
    timer = setTimeout(loop, again ? 0 : pollMs);
  };
  timer = setTimeout(loop, 0);

  return {
    poll,
    sender,
    stats() {
      return {
        ...counts,
        files: files.map((file) => ({ path: file.path, offset: file.tailer.position()?.offset ?? null, ...file.tailer.counters() })),
        sender: sender.stats(),
      };
    },
    async close(timeoutMs = 5000) {
      if (closed) return;
      closed = true;
      if (timer !== null) clearTimeout(timer);
      for (const file of files) {
        save(file);
        file.tailer.close();
      }
      await sender.close(timeoutMs);
    },
  };
}
