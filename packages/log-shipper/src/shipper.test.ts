import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { HoneypotEvent } from '@observatory/sender';
import { createShipper, type ShipperOptions } from './shipper.ts';

/**
 * The shipper with the real sender against a stand-in ingest that stores each id once and counts
 * the rest as duplicates, as the service does.
 */
let server: Server;
let url: string;
const stored = new Map<string, HoneypotEvent>();
let duplicates = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += String(chunk)));
    req.on('end', () => {
      const { events } = JSON.parse(body) as { events: HoneypotEvent[] };
      let dup = 0;
      for (const event of events) {
        if (stored.has(event.id as string)) dup += 1;
        else stored.set(event.id as string, event);
      }
      duplicates += dup;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ accepted: events.length, duplicates: dup, events: [] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

let dir: string;
let log: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'shipper-'));
  log = path.join(dir, 'access.log');
  stored.clear();
  duplicates = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const options = (extra: Partial<ShipperOptions> = {}): ShipperOptions => ({
  paths: [log],
  stateDir: path.join(dir, 'state'),
  format: 'combined',
  pollMs: 10,
  sender: { url, tenant: 'site', secret: 'secret', batchMaxWaitMs: 5 },
  ...extra,
});
const line = (i: number, ua = 'GPTBot/1.1') => `198.51.100.${i % 250} - - [29/Nov/2026:00:00:${String(i % 60).padStart(2, '0')} +0000] "GET /q/${i}?n=${i} HTTP/1.1" 200 10 "-" "${ua}"\n`;
const write = (from: number, to: number) => appendFileSync(log, Array.from({ length: to - from }, (_, k) => line(from + k)).join(''));
const paths = () => [...stored.values()].map((e) => e.path).sort();
const expected = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => `/q/${from + k}`).sort();

describe('the shipper', () => {
  it('delivers each line as an event, skips and counts lines that do not parse, and saves its position', async () => {
    write(0, 5);
    appendFileSync(log, 'garbage that is no request\n\n');
    write(5, 8);
    const shipper = createShipper(options());
    await expect.poll(() => stored.size).toBe(8);
    await shipper.close();
    expect(paths()).toEqual(expected(0, 8));
    expect([...stored.values()][0]).toMatchObject({ method: 'GET', path: '/q/0', query: 'n=0', ip: '198.51.100.0', ua: 'GPTBot/1.1', ts: '2026-11-29T00:00:00.000Z' });
    expect(shipper.stats()).toMatchObject({ lines: 10, shipped: 8, unparsed: 2, sender: { sent: 8, pending: 0 } });
    expect(readdirSync(path.join(dir, 'state', 'positions'))).toHaveLength(1);
  });

  it('resumes where it stopped: a new process sends only the new lines', async () => {
    write(0, 4);
    const first = createShipper(options());
    await expect.poll(() => stored.size).toBe(4);
    await first.close();
    write(4, 7);
    const second = createShipper(options());
    await expect.poll(() => stored.size).toBe(7);
    await second.close();
    expect(second.stats()).toMatchObject({ lines: 3, shipped: 3 });
    expect(duplicates).toBe(0);
    expect(paths()).toEqual(expected(0, 7));
  });

  it('sends a line read again (its position lost) with the id it had, so the service counts a duplicate, not a new event', async () => {
    write(0, 6);
    const first = createShipper(options());
    await expect.poll(() => stored.size).toBe(6);
    await first.close();
    const positions = path.join(dir, 'state', 'positions');
    for (const name of readdirSync(positions)) unlinkSync(path.join(positions, name));
    const second = createShipper(options());
    await expect.poll(() => duplicates).toBe(6);
    await second.close();
    expect(stored.size).toBe(6);
    expect(second.stats().sender.duplicates).toBe(6);
  });

  it('follows several files, each with its own position', async () => {
    const other = path.join(dir, 'other.log');
    write(0, 2);
    appendFileSync(other, line(100) + line(101));
    const shipper = createShipper(options({ paths: [log, other] }));
    await expect.poll(() => stored.size).toBe(4);
    await shipper.close();
    expect(paths()).toEqual(['/q/0', '/q/1', '/q/100', '/q/101']);
    expect(readdirSync(path.join(dir, 'state', 'positions'))).toHaveLength(2);
  });

  it('keeps lines in the file while the sender queue is full, and sends them once it has room', async () => {
    write(0, 30);
    const shipper = createShipper(options({ sender: { url: 'http://127.0.0.1:9', tenant: 'site', secret: 's', batchMaxWaitMs: 5, maxQueueBytes: 2000, backoff: { baseMs: 5, maxMs: 10 } } }));
    await expect.poll(() => shipper.stats().backpressure).toBeGreaterThan(0);
    const held = shipper.stats();
    expect(held.shipped).toBeLessThan(30);
    expect(held.sender.pendingBytes).toBeGreaterThanOrEqual(1800);
    await shipper.close(0);
    // The same state with the service reachable: the spool and the rest of the file, each line once.
    const back = createShipper(options());
    await expect.poll(() => stored.size).toBe(30);
    await back.close();
    expect(paths()).toEqual(expected(0, 30));
    expect(duplicates).toBe(0);
  });

  it('refuses a format it cannot use and no files, before touching the state directory', () => {
    expect(() => createShipper(options({ format: 'nginx' }))).toThrow(/log format string/);
    expect(() => createShipper(options({ paths: [] }))).toThrow(/no log file/);
    expect(existsSync(path.join(dir, 'state'))).toBe(false);
  });
});

describe('a log it cannot read', () => {
  it('is reported once, counted, and read once it can be', async () => {
    // A directory in the log's place: unreadable as a file also for root, who reads whatever the mode says.
    const blocked = path.join(dir, 'blocked.log');
    mkdirSync(blocked);
    const problems: string[] = [];
    const shipper = createShipper(options({ paths: [blocked], onReadProblem: (message) => problems.push(message) }));
    await expect.poll(() => shipper.stats().readFailures).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/EISDIR|illegal operation on a directory/);
    rmdirSync(blocked);
    writeFileSync(blocked, line(7));
    await expect.poll(() => stored.size).toBe(1);
    await shipper.close();
  });
});
