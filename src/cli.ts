import { readFileSync } from 'node:fs';
import { type Command, COMMANDS, FLAG_NAMES, type Flags, type Request, USAGE } from './cli/commands.ts';
import { type Config, ConfigError, loadConfig } from './platform/config.ts';
import { dataDirHolder, type LockHolder } from './platform/db/data-dir-lock.ts';

/**
 * Operator commands (README "Operator commands"; docs/operations.md "Operator commands").
 *
 * Against a running server every command is one call of its HTTP API, with a token, and nothing
 * of the service is loaded (an answer in well under a second). With no server running, the
 * commands that can open the database themselves do so (cli/direct.ts). Which one:
 *
 * - a token given (`--token`, or `OBSERVATORY_TOKEN`): the HTTP API at `--url`, else
 *   `OBSERVATORY_PUBLIC_URL`, else `http://127.0.0.1:$PORT`;
 * - no token, embedded database (no `DATABASE_URL`): when a live process holds DATA_DIR's lock
 *   (the server), the HTTP API with `OBSERVATORY_ADMIN_TOKEN` when set, else refused ("stop the
 *   server first", or give a token): a second process must never open the data directory; when
 *   none holds it, the database directly, holding the lock for the command's length;
 * - no token, `DATABASE_URL`: the HTTP API with `OBSERVATORY_ADMIN_TOKEN` when set and a server
 *   answers there, else the database directly (safe beside running servers).
 *
 * `audit:verify-proof` is offline: no configuration, no database, no server.
 */

async function main(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv);
  if (typeof parsed === 'string') return usage(parsed);
  const { command: name, args, flags } = parsed;
  if (name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (name === 'audit:verify-proof') return verifyProofFile(args[0]);
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) return usage(name ? `unknown command ${name}` : null);
  const request = command.request(args, flags);
  if (typeof request === 'string') return usage(`${request}; ${command.usage}`);

  let config: Config;
  try {
    config = { ...loadConfig(), logLevel: 'warn' as const };
  } catch (error) {
    if (error instanceof ConfigError) return fail(`configuration error: ${error.message}`);
    throw error;
  }
  const explicitToken = flags.token ?? nonEmpty(process.env.OBSERVATORY_TOKEN);
  const base = (flags.url ?? nonEmpty(process.env.OBSERVATORY_PUBLIC_URL) ?? `http://${localHost(config.host)}:${config.port}`).replace(/\/+$/, '');

  if (explicitToken) return overHttp(command, request, base, explicitToken);
  if (config.databaseUrl === null) {
    const holder = dataDirHolder(config.dataDir);
    if (holder !== null) {
      if (config.adminToken) return overHttp(command, request, base, config.adminToken);
      return fail(inUse(config.dataDir, holder));
    }
  } else if (config.adminToken && (await serverAnswers(base))) {
    return overHttp(command, request, base, config.adminToken);
  }
  if (!command.direct) {
    return fail(`${command.name} needs the running server: start it (npm start) and give a token with --token or OBSERVATORY_TOKEN (the admin token it printed at its first start, or OBSERVATORY_ADMIN_TOKEN)`);
  }
  if (command.name === 'tokens:issue' && !flags.operator) {
    return fail('with no server running, a token is issued for a named operator: add --operator <username> (or start the server and give a token)');
  }
  try {
    const { runDirect } = await import('./cli/direct.ts');
    return printAnswer(command, await runDirect(config, command.name, request, flags));
  } catch (error) {
    return fail(messageOf(error));
  }
}

async function overHttp(command: Command, request: Request, base: string, token: string): Promise<number> {
  let response: Response;
  try {
    response = await fetch(`${base}${request.path}`, {
      method: request.method,
      headers: { authorization: `Bearer ${token}`, ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
      ...(request.long ? {} : { signal: AbortSignal.timeout(60_000) }),
    });
  } catch (error) {
    return fail(`no server answers at ${base} (${messageOf(error)}); start it (npm start), or name it with --url`);
  }
  const text = await response.text();
  let answer: unknown = null;
  try {
    answer = JSON.parse(text);
  } catch {
    // not JSON: reported below with the status
  }
  if (!response.ok) {
    const error = answer as { reason?: string; human?: string } | null;
    const detail = error?.human ? `${error.reason ?? 'error'}: ${error.human}` : text.slice(0, 300);
    const hint = response.status === 401 ? ' (the server does not accept this token)' : '';
    return fail(`${base} answered ${response.status}${hint}: ${detail}`);
  }
  return printAnswer(command, answer);
}

function printAnswer(command: Command, answer: unknown): number {
  const { text, code = 0 } = command.print(answer);
  process.stdout.write(text);
  return code;
}

async function serverAnswers(base: string): Promise<boolean> {
  try {
    return (await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(1_000) })).ok;
  } catch {
    return false;
  }
}

function inUse(dataDir: string, holder: LockHolder): string {
  return `the data directory ${dataDir} is in use by process ${holder.pid} (${holder.command || 'unknown command'}, since ${holder.since}), and two processes must never open one data directory. Run the command against the server with a token: --token svctok_… or OBSERVATORY_TOKEN (the admin token printed at its first start, or OBSERVATORY_ADMIN_TOKEN); or stop the server first`;
}

/** Where the CLI finds a server bound to `host`: an address that listens everywhere is reached on loopback. */
function localHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

interface Parsed {
  command: string | undefined;
  args: string[];
  flags: Flags;
}

function parseArgs(argv: string[]): Parsed | string {
  const args: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      args.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (!(FLAG_NAMES as readonly string[]).includes(name)) return `unknown option --${name}`;
    const value = eq === -1 ? argv[(i += 1)] : arg.slice(eq + 1);
    if (value === undefined || value === '') return `--${name} needs a value`;
    flags[name] = value;
  }
  const [command, ...rest] = args;
  return { command, args: rest, flags: flags as Flags };
}

const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

function usage(problem: string | null): number {
  process.stderr.write(`${problem ? `${problem}\n` : ''}${USAGE}\n`);
  return 2;
}

function fail(message: string): number {
  process.stderr.write(`observatory: ${message}\n`);
  return 1;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Offline: no configuration, no database; docs/audit-chain/README.md describes every step it takes. */
async function verifyProofFile(file: string | undefined): Promise<number> {
  if (!file) return usage('a file is needed: audit:verify-proof <file>');
  let saved: unknown;
  try {
    saved = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    process.stderr.write(`not verified: cannot read ${file} as JSON: ${messageOf(error)}\n`);
    return 1;
  }
  const { verifySavedFact } = await import('./domains/audit-chain/verify-proof.ts');
  const check = verifySavedFact(saved);
  if (check.ok) {
    process.stdout.write(`${check.message}\n`);
    return 0;
  }
  process.stderr.write(`not verified: ${check.reason}\n`);
  return 1;
}

process.exitCode = await main(process.argv.slice(2));
