import { randomUUID } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';
import { openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import { configuredSecrets, type SpoolRecord } from './secret-scan.ts';

/**
 * The worker side of the secret-leak check (see secret-scan.ts and docs/testing.md): one spool file
 * per test worker process in the directory test/global-setup.ts names in OBSERVATORY_TEST_SPOOL.
 * Writes are synchronous appends in test order, so nothing is lost when a worker exits and the
 * context line before a record says which test produced it.
 */

export const SPOOL_ENV = 'OBSERVATORY_TEST_SPOOL';

/** undefined until first asked; null when no spool is configured (the check is off). */
let fd: number | null | undefined;

function spoolFd(): number | null {
  if (fd === undefined) {
    const dir = process.env[SPOOL_ENV];
    fd = dir ? openSync(join(dir, `${process.pid}-${randomUUID().slice(0, 8)}.ndjson`), 'a') : null;
  }
  return fd;
}

export function spoolActive(): boolean {
  return spoolFd() !== null;
}

function append(text: string): void {
  const out = spoolFd();
  if (out !== null) writeSync(out, text);
}

function writeRecord(record: SpoolRecord): void {
  append(`${JSON.stringify(record)}\n`);
}

/** Where the test apps' production logger writes: its JSON lines, unchanged. */
export const spoolLogDestination: DestinationStream = { write: (line: string) => append(line) };

let context = { file: '', test: '' };

/** Marks the lines that follow as belonging to this test file and test. */
export function setContext(file: string, test: string): void {
  if (context.file === file && context.test === test) return;
  context = { file, test };
  writeRecord({ spool: 'ctx', file, test });
}

/** A secret no response reveals (config values), to be looked for everywhere. */
export function recordSecret(kind: string, value: string, from: string): void {
  writeRecord({ spool: 'secret', kind, value, from });
}

const INSTALLED = Symbol.for('observatory.spool.responses');

/**
 * Records every response of every Fastify instance this process creates, through Fastify's
 * `fastify.initialization` diagnostics channel: it fires while the instance is being built, before
 * createApp readies it, so the hook is added without any seam in production code, and it covers
 * apps that tests build without startTestApp too.
 */
export function recordResponses(): void {
  const state = globalThis as Record<symbol, unknown>;
  if (state[INSTALLED]) return;
  state[INSTALLED] = true;
  subscribe('fastify.initialization', (message) => {
    const { fastify } = message as { fastify: FastifyInstance };
    fastify.addHook('onRequest', (request, reply, done) => {
      teeResponse(request, reply);
      done();
    });
  });
}

type Chunk = string | Buffer | Uint8Array;

/** Copies what the raw response writes (a string, a buffer or a piped stream) and records it at `end`. */
function teeResponse(request: FastifyRequest, reply: FastifyReply): void {
  const raw = reply.raw;
  const chunks: Buffer[] = [];
  const keep = (chunk: unknown, encoding: unknown) => {
    if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
  };
  const write = raw.write;
  const end = raw.end;
  raw.write = function (this: typeof raw, chunk: Chunk, ...rest: unknown[]) {
    keep(chunk, rest[0]);
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof raw.write;
  raw.end = function (this: typeof raw, ...args: unknown[]) {
    keep(args[0], args[1]);
    record(request, reply, Buffer.concat(chunks).toString('utf8'));
    return (end as (...a: unknown[]) => typeof raw).apply(this, args);
  } as typeof raw.end;
}

function record(request: FastifyRequest, reply: FastifyReply, body: string): void {
  // Only bodies that could configure a destination are walked (ingest batches are large).
  const rawBody = request.rawBody;
  if (typeof rawBody === 'string' && /url|secret/i.test(rawBody)) {
    for (const secret of configuredSecrets(request.body)) {
      recordSecret(secret.kind, secret.value, `request body of ${request.method} ${request.url} (${context.file} › ${context.test})`);
    }
  }
  writeRecord({
    spool: 'res',
    method: request.method,
    url: request.url,
    status: reply.raw.statusCode,
    headers: reply.getHeaders() as Record<string, unknown>,
    body,
  });
}
