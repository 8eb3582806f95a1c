import type { Config } from '../platform/config.ts';
import { ServiceError } from '../platform/errors.ts';
import type { Scope } from '../platform/http/registry.ts';
import type { Request } from './commands.ts';

/**
 * An operator command on the database itself, for when no server runs (docs/operations.md,
 * "Operator commands"): the whole service is built (some seconds), which opens the database
 * holding its lock (an embedded DATA_DIR) or beside the servers (DATABASE_URL), and the same
 * services the API calls do the work, audited with surface `cli`. Answers the same shapes as the
 * API, so the printing is shared.
 */
export async function runDirect(config: Config, command: string, request: Request, flags: { operator?: string }): Promise<unknown> {
  const { createApp } = await import('../app.ts');
  const app = await createApp({
    config,
    // A command run on an empty database is its first start: the admin token it creates is shown here, once.
    onFirstToken: (token) =>
      process.stdout.write(`First start: created an admin API token with every scope. It is shown once; keep it:\n\n  ${token}\n\n`),
  });
  try {
    const body = (request.body ?? {}) as { username: string; displayName?: string; scopes: Scope[]; name: string; toolsets?: string[] };
    switch (command) {
      case 'operator:add': {
        const created = await app.identity.createOperator({ username: body.username, displayName: body.displayName, scopes: body.scopes });
        return { operator: created.operator, firstToken: created.firstToken };
      }
      case 'operator:list':
        return { operators: await app.identity.listOperators() };
      case 'tokens:issue':
        if (!flags.operator) throw new ServiceError(400, 'invalid-body', 'on the database itself a token is issued for a named operator: add --operator <username>');
        return app.identity.createTokenFor(null, flags.operator, { name: body.name, scopes: body.scopes, toolsets: body.toolsets });
      case 'jobs:list':
        return { latestPerJob: app.scheduler.jobs().map((j) => ({ job: j.name, schedule: j.schedule ?? null, description: j.description })) };
      case 'jobs:run': {
        const name = decodeURIComponent(request.path.split('/').at(-2) ?? '');
        if (!app.scheduler.find(name)) throw new ServiceError(404, 'not-found', `unknown job ${name}; see jobs:list`);
        return { run: await app.scheduler.runNow(name) };
      }
      default:
        throw new Error(`${command} does not run on the database itself`);
    }
  } finally {
    await app.close();
  }
}
