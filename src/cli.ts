import { readFileSync } from 'node:fs';
import { createApp } from './app.ts';
import { verifySavedFact } from './domains/audit-chain/verify-proof.ts';
import { ConfigError, loadConfig } from './platform/config.ts';
import { isScope, SCOPES, type Scope } from './platform/http/registry.ts';

/**
 * Operator commands, run against the same database the service uses:
 *   npm run cli -- operator:add <username> <scope,scope,…|all>   adds an operator and prints their first token
 *   npm run cli -- jobs:list                                       lists jobs and their schedules
 *   npm run cli -- jobs:run <job>                                  runs a job now, recorded like a scheduled run
 *   npm run cli -- audit:verify-proof <file>                       checks a saved GET {v1}/audit/chain/{id} answer offline
 */
const USAGE = `usage:
  npm run cli -- operator:add <username> <scope,scope,...|all>
  npm run cli -- jobs:list
  npm run cli -- jobs:run <job>
  npm run cli -- audit:verify-proof <file>`;

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === 'audit:verify-proof') return verifyProofFile(args[0]);
  if (!command || !['operator:add', 'jobs:list', 'jobs:run'].includes(command)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let config;
  try {
    config = { ...loadConfig(), logLevel: 'warn' as const };
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`observatory: configuration error: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  const app = await createApp({ config });
  try {
    if (command === 'operator:add') {
      const [username, scopeList] = args;
      if (!username || !scopeList) {
        process.stderr.write(`${USAGE}\n`);
        return 2;
      }
      const requested = scopeList === 'all' ? [...SCOPES] : scopeList.split(',').map((s) => s.trim());
      const unknown = requested.filter((s) => !isScope(s));
      if (unknown.length > 0) {
        process.stderr.write(`unknown scopes: ${unknown.join(', ')} (known: ${SCOPES.join(', ')})\n`);
        return 2;
      }
      const created = await app.identity.createOperator({ username, scopes: requested as Scope[] });
      process.stdout.write(`operator ${created.username} (${created.userId}) created; their token, shown once:\n${created.token}\n`);
      return 0;
    }
    if (command === 'jobs:list') {
      for (const job of app.scheduler.jobs()) {
        process.stdout.write(`${job.name}\t${job.schedule ?? 'on demand'}\t${job.description}\n`);
      }
      return 0;
    }
    const [name] = args;
    if (!name || !app.scheduler.find(name)) {
      process.stderr.write(`unknown job ${name ?? ''}; see jobs:list\n`);
      return 2;
    }
    const run = await app.scheduler.runNow(name);
    process.stdout.write(`${JSON.stringify(run)}\n`);
    return run.outcome === 'ok' ? 0 : 1;
  } catch (error) {
    process.stderr.write(`observatory: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await app.close();
  }
}

/** Offline: no configuration, no database; docs/audit.md describes every step it takes. */
function verifyProofFile(file: string | undefined): number {
  if (!file) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let saved: unknown;
  try {
    saved = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    process.stderr.write(`not verified: cannot read ${file} as JSON: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  const check = verifySavedFact(saved);
  if (check.ok) {
    process.stdout.write(`${check.message}\n`);
    return 0;
  }
  process.stderr.write(`not verified: ${check.reason}\n`);
  return 1;
}

process.exitCode = await main(process.argv.slice(2));
