import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { diskQueue } from '@observatory/sender';
import { ObservatoryError, observatoryApi, registerKey } from './api.ts';
import { createToolsetClient } from './client.ts';
import { generateToolsetKey, keyIdFileOf, readKeyId, readPrivateKey, writeKeyId, writePrivateKey } from './keys.ts';
import type { ToolsetEvent } from './signing.ts';

/**
 * `npm run toolset -- <command>` from the repository root, or the `observatory-toolset` bin.
 * Every failure is one line on stderr and a non-zero exit: 2 for a usage or setup problem, 1 for
 * events the service refused or that are still waiting.
 */
const USAGE = `usage: observatory-toolset <command> [options]

  keygen    [--key FILE] [--force]      write a new Ed25519 private key (PEM, mode 0600)
  register  [--key FILE]                register its public key; prints and keeps the key id
  send      [--key FILE] [--spool DIR] [--timeout MS]
            [--event-type T [--id ID] [--payload JSON] [--tenant T] [--caused-by ID] [--ts ISO]]
                                        sign and deliver one event from the flags, or JSON lines on stdin
  stats     --spool DIR                 what waits in a spool

environment: OBSERVATORY_URL, OBSERVATORY_TOKEN, TOOLSET, TOOLSET_KEY_FILE (default toolset-key.pem),
             TOOLSET_KEY_ID, TOOLSET_SPOOL_DIR`;

class UsageError extends Error {}

const env = process.env;
const stdout = (text: string) => process.stdout.write(`${text}\n`);

function required(name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new UsageError(`${name} is required`);
  return value;
}

function serviceUrl(): string {
  const url = required('OBSERVATORY_URL');
  if (!URL.canParse(url)) throw new UsageError(`OBSERVATORY_URL is not a URL: ${url}`);
  return url;
}

function loadKey(file: string) {
  if (!existsSync(file)) throw new UsageError(`no key at ${file} (run keygen first, or set TOOLSET_KEY_FILE)`);
  try {
    return readPrivateKey(file);
  } catch (error) {
    throw new UsageError(`${file} is not an Ed25519 private key in PEM: ${(error as Error).message}`);
  }
}

function parseObject(text: string, where: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${where} is not JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`${where} is not a JSON object`);
  return value as Record<string, unknown>;
}

async function* stdinLines(): AsyncGenerator<string> {
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) if (line.trim() !== '') yield line;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: {
        key: { type: 'string' },
        force: { type: 'boolean' },
        spool: { type: 'string' },
        timeout: { type: 'string' },
        'event-type': { type: 'string' },
        id: { type: 'string' },
        payload: { type: 'string' },
        tenant: { type: 'string' },
        'caused-by': { type: 'string' },
        ts: { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const flags = parsed.values;
  const keyFile = flags.key ?? env.TOOLSET_KEY_FILE ?? 'toolset-key.pem';
  const spoolDir = flags.spool ?? (env.TOOLSET_SPOOL_DIR || undefined);

  switch (command) {
    case 'keygen': {
      if (existsSync(keyFile) && flags.force !== true) throw new UsageError(`${keyFile} exists (pass --force to replace it, which orphans its registration)`);
      const key = generateToolsetKey();
      writePrivateKey(keyFile, key.privateKey, true);
      stdout(JSON.stringify({ keyFile, publicKeyB64: key.publicKeyB64 }));
      return 0;
    }
    case 'register': {
      const url = serviceUrl();
      const token = required('OBSERVATORY_TOKEN');
      const toolset = required('TOOLSET');
      const key = loadKey(keyFile);
      const registered = await registerKey(observatoryApi(url, token), toolset, key.publicKeyB64);
      writeKeyId(keyFile, registered.id);
      stdout(registered.id);
      process.stderr.write(`key id kept in ${keyIdFileOf(keyFile)}\n`);
      return 0;
    }
    case 'send': {
      const url = serviceUrl();
      const token = required('OBSERVATORY_TOKEN');
      const toolset = required('TOOLSET');
      const key = loadKey(keyFile);
      const timeoutMs = Number(flags.timeout ?? 30_000);
      if (!Number.isFinite(timeoutMs) || timeoutMs < 0) throw new UsageError(`--timeout must be a number of milliseconds (got ${flags.timeout})`);
      const events: ToolsetEvent[] = [];
      if (flags['event-type'] !== undefined) {
        events.push({
          eventType: flags['event-type'],
          ...(flags.id === undefined ? {} : { id: flags.id }),
          ...(flags.ts === undefined ? {} : { ts: flags.ts }),
          ...(flags.tenant === undefined ? {} : { tenant: flags.tenant }),
          ...(flags['caused-by'] === undefined ? {} : { causedBy: flags['caused-by'] }),
          ...(flags.payload === undefined ? {} : { payload: parseObject(flags.payload, '--payload') }),
        });
      } else {
        if (process.stdin.isTTY) throw new UsageError('give an event with --event-type, or JSON lines on stdin');
        let n = 0;
        for await (const line of stdinLines()) events.push(parseObject(line, `line ${(n += 1)}`) as unknown as ToolsetEvent);
      }
      const client = createToolsetClient({
        url,
        token,
        toolset,
        privateKey: key.privateKey,
        keyId: env.TOOLSET_KEY_ID || readKeyId(keyFile),
        spoolDir,
        batchMaxWaitMs: 50,
        onProblem: (p) => process.stderr.write(`${p.eventId === undefined ? '' : `${p.eventId}: `}${p.reason ?? p.status ?? 'problem'}: ${p.message}\n`),
      });
      for (const event of events) client.record(event);
      const done = await client.flush(timeoutMs);
      await client.close(0);
      const { sent, duplicates, rejected, pending } = client.stats();
      stdout(JSON.stringify({ sent, duplicates, rejected, pending }));
      if (!done) process.stderr.write(`${pending} event(s) not delivered yet${spoolDir === undefined ? ' (and lost: no --spool)' : ` (kept in ${spoolDir})`}\n`);
      return rejected > 0 || !done ? 1 : 0;
    }
    case 'stats': {
      if (spoolDir === undefined) throw new UsageError('stats needs --spool DIR or TOOLSET_SPOOL_DIR');
      if (!existsSync(spoolDir)) throw new UsageError(`no spool at ${spoolDir}`);
      const queue = diskQueue({ dir: spoolDir, maxBytes: Number.MAX_SAFE_INTEGER });
      stdout(JSON.stringify({ pending: queue.length, pendingBytes: queue.bytes }));
      queue.close();
      return 0;
    }
    case undefined:
    case 'help':
    case '--help':
      stdout(USAGE);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError) process.stderr.write(`${error.message}\n\n${USAGE}\n`);
  else if (error instanceof ObservatoryError) process.stderr.write(`${error.message}\n`);
  else process.stderr.write(`${(error as Error).message ?? String(error)}\n`);
  process.exitCode = error instanceof ObservatoryError ? 1 : 2;
}
