import { SCOPES } from '../platform/http/scopes.ts';
// Type only: erased at run time, so the client still loads nothing of the service.
import type { TokenView } from '../domains/identity/index.ts';

/**
 * The operator commands (README "Operator commands", docs/operations.md "Operator commands"): each
 * is one call of the HTTP API, so against a running server the CLI is a thin client that loads
 * none of the service. `direct` marks the commands that also work on the database itself when no
 * server runs (cli/direct.ts).
 */

const V1 = '/api/observatory/v1';

export interface Flags {
  token?: string;
  url?: string;
  operator?: string;
  toolsets?: string;
  notes?: string;
  'display-name'?: string;
}

export const FLAG_NAMES = ['token', 'url', 'operator', 'toolsets', 'notes', 'display-name'] as const;

export interface Request {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /** No deadline: a job run or a snapshot may take minutes. */
  long?: boolean;
}

export interface Command {
  name: string;
  usage: string;
  /** Also runs on the database itself when no server runs. */
  direct: boolean;
  /** The request, or a usage error text. */
  request(args: string[], flags: Flags): Request | string;
  /** What is printed on success; the exit code (0 unless said). */
  print(answer: any): { text: string; code?: number };
}

const enc = encodeURIComponent;

/** `all`, or a comma-separated list of known scopes; a text saying what is wrong otherwise. */
export function parseScopes(list: string | undefined): string[] | string {
  if (!list) return 'scopes missing';
  if (list === 'all') return [...SCOPES];
  const requested = [...new Set(list.split(',').map((s) => s.trim()).filter((s) => s !== ''))];
  const unknown = requested.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) return `unknown scopes: ${unknown.join(', ')} (known: ${SCOPES.join(', ')}, or all)`;
  if (requested.length === 0) return 'scopes missing';
  return requested;
}

function toolsetsOf(flags: Flags): string[] | undefined {
  return flags.toolsets === undefined ? undefined : flags.toolsets.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

const table = (rows: string[][]) => rows.map((r) => r.join('\t')).join('\n') + (rows.length > 0 ? '\n' : '');

/** A token as the API answers it; `token` only when just issued. */
type TokenAnswer = TokenView & { token?: string };

const tokenLine = (t: TokenAnswer) => [t.id, t.prefix, t.name, t.scopes.join(','), t.toolsets?.join(',') ?? '-', t.createdAt, t.lastUsedAt ?? '-', t.revokedAt ? `revoked ${t.revokedAt}` : 'active'];

export const COMMANDS: Command[] = [
  {
    name: 'operator:add',
    usage: 'operator:add <username> <scope,scope,…|all> [--display-name <name>]',
    direct: true,
    request(args, flags) {
      const [username, list] = args;
      if (!username) return 'username missing';
      const scopes = parseScopes(list);
      if (typeof scopes === 'string') return scopes;
      return { method: 'POST', path: `${V1}/operators`, body: { username, scopes, ...(flags['display-name'] ? { displayName: flags['display-name'] } : {}) } };
    },
    print: (a: { operator: { username: string; id: string }; firstToken: { token: string } }) => ({
      text: `operator ${a.operator.username} (${a.operator.id}) created; their token, shown once:\n${a.firstToken.token}\n`,
    }),
  },
  {
    name: 'operator:list',
    usage: 'operator:list',
    direct: true,
    request: () => ({ method: 'GET', path: `${V1}/operators` }),
    print: (a: { operators: { id: string; username: string; scopes: string[]; disabledAt: string | null }[] }) => ({
      text: table(a.operators.map((o) => [o.username, o.id, o.scopes.join(','), o.disabledAt ? `disabled ${o.disabledAt}` : 'active'])),
    }),
  },
  {
    name: 'tokens:issue',
    usage: 'tokens:issue <name> <scope,scope,…|all> [--operator <username>] [--toolsets <toolset,…>]',
    direct: true,
    request(args, flags) {
      const [name, list] = args;
      if (!name) return 'token name missing';
      const scopes = parseScopes(list);
      if (typeof scopes === 'string') return scopes;
      const toolsets = toolsetsOf(flags);
      const body = { name, scopes, ...(toolsets ? { toolsets } : {}) };
      return flags.operator ? { method: 'POST', path: `${V1}/operators/${enc(flags.operator)}/tokens`, body } : { method: 'POST', path: `${V1}/tokens`, body };
    },
    print: (a: TokenAnswer) => ({ text: `token ${a.name} (${a.id}) issued; shown once:\n${a.token}\n` }),
  },
  {
    name: 'tokens:list',
    usage: 'tokens:list',
    direct: false,
    request: () => ({ method: 'GET', path: `${V1}/tokens` }),
    print: (a: { tokens: TokenAnswer[] }) => ({ text: table(a.tokens.map(tokenLine)) }),
  },
  {
    name: 'tokens:revoke',
    usage: 'tokens:revoke <token id>',
    direct: false,
    request: ([id]) => (id ? { method: 'POST', path: `${V1}/tokens/${enc(id)}/revoke`, body: {} } : 'token id missing'),
    print: (a: { token: TokenAnswer }) => ({ text: `token ${a.token.name} (${a.token.id}) revoked at ${a.token.revokedAt}\n` }),
  },
  {
    name: 'tenants:list',
    usage: 'tenants:list',
    direct: false,
    request: () => ({ method: 'GET', path: `${V1}/honeypot/tenants` }),
    print: (a: { tenants: { slug: string; name: string; id: string; disabledAt: string | null }[] }) => ({
      text: table(a.tenants.map((t) => [t.slug, t.name, t.id, t.disabledAt ? `disabled ${t.disabledAt}` : 'active'])),
    }),
  },
  {
    name: 'tenants:create',
    usage: 'tenants:create <slug> <name> [--notes <text>]',
    direct: false,
    request: ([slug, name], flags) =>
      slug && name ? { method: 'POST', path: `${V1}/honeypot/tenants`, body: { slug, name, ...(flags.notes ? { notes: flags.notes } : {}) } } : 'slug and name needed',
    print: (a: { tenant: { slug: string; id: string }; signingSecret: string }) => ({
      text: `tenant ${a.tenant.slug} (${a.tenant.id}) created; its signing secret, shown once:\n${a.signingSecret}\n`,
    }),
  },
  {
    name: 'tenants:rotate-secret',
    usage: 'tenants:rotate-secret <slug>',
    direct: false,
    request: ([slug]) => (slug ? { method: 'POST', path: `${V1}/honeypot/tenants/${enc(slug)}/rotate-secret`, body: {} } : 'slug missing'),
    print: (a: { tenant: { slug: string }; signingSecret: string; previousValidUntil: string }) => ({
      text: `tenant ${a.tenant.slug}: new signing secret, shown once (the previous one verifies until ${a.previousValidUntil}):\n${a.signingSecret}\n`,
    }),
  },
  ...(['disable', 'enable'] as const).map(
    (verb): Command => ({
      name: `tenants:${verb}`,
      usage: `tenants:${verb} <slug>`,
      direct: false,
      request: ([slug]) => (slug ? { method: 'POST', path: `${V1}/honeypot/tenants/${enc(slug)}/${verb}`, body: {} } : 'slug missing'),
      print: (a: { tenant: { slug: string; disabledAt: string | null } }) => ({
        text: `tenant ${a.tenant.slug} ${a.tenant.disabledAt ? `disabled since ${a.tenant.disabledAt}` : 'enabled'}\n`,
      }),
    }),
  ),
  {
    name: 'jobs:list',
    usage: 'jobs:list',
    direct: true,
    request: () => ({ method: 'GET', path: `${V1}/honeypot/ops/cron-health?limit=1` }),
    print: (a: { latestPerJob: { job: string; schedule: string | null; description: string }[] }) => ({
      text: table(a.latestPerJob.map((j) => [j.job, j.schedule ?? 'on demand', j.description])),
    }),
  },
  {
    name: 'jobs:run',
    usage: 'jobs:run <job>',
    direct: true,
    request: ([job]) => (job ? { method: 'POST', path: `${V1}/ops/jobs/${enc(job)}/run`, body: {}, long: true } : 'job name missing'),
    print: (a: { run: { outcome: string } }) => ({ text: `${JSON.stringify(a.run)}\n`, code: a.run.outcome === 'ok' ? 0 : 1 }),
  },
];

export const USAGE = `usage: npm run cli -- <command> [arguments] [--token <svctok_…>] [--url <http://host:port>]
commands:
${COMMANDS.map((c) => `  ${c.usage}`).join('\n')}
  audit:verify-proof <file>      (offline: checks a saved GET {v1}/audit/chain/{id} answer)
Against a running server the commands use its HTTP API with a token: --token or OBSERVATORY_TOKEN
(else OBSERVATORY_ADMIN_TOKEN), at --url, else OBSERVATORY_PUBLIC_URL, else http://127.0.0.1:$PORT.
With no server running, operator:add, operator:list, tokens:issue --operator, jobs:list and jobs:run
open the database directly (docs/operations.md, "Operator commands").`;
