import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createSecureContext } from 'node:tls';
import { createRouter } from './router.ts';
import { loadTopics } from './topics.ts';

/**
 * `npm run router` (from the repository root) or `npm start` here. Configured from the
 * environment; see README.md. Logs one JSON line per event worth an operator's eye.
 */
const env = process.env;
const log = (level: 'info' | 'warn' | 'error', msg: string, extra: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...extra })}\n`);

function required(name: string): string {
  const value = env[name];
  if (value === undefined || value === '') {
    log('error', `${name} is required (see packages/router/README.md)`);
    process.exit(2);
  }
  return value;
}

function port(name: string, fallback: number): number {
  const value = Number(env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    log('error', `${name} must be a port number (got ${env[name]})`);
    process.exit(2);
  }
  return value;
}

const list = (name: string) => (env[name] ?? '').split(',').map((s) => s.trim()).filter(Boolean);

const serviceUrl = required('OBSERVATORY_URL');
const tenant = required('OBSERVATORY_TENANT');
const secret = required('OBSERVATORY_TENANT_SECRET');
const agentApiBase = env.ROUTER_AGENT_API_URL ?? serviceUrl;
const { topics, problem } = await loadTopics(agentApiBase);
if (problem !== null) log('warn', problem);

/** The certificate and key files when the router terminates TLS itself; both or neither. */
function tlsFiles(): { cert: string; key: string } | undefined {
  const certFile = env.ROUTER_TLS_CERT_FILE;
  const keyFile = env.ROUTER_TLS_KEY_FILE;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) {
    log('error', 'ROUTER_TLS_CERT_FILE and ROUTER_TLS_KEY_FILE go together (see packages/router/README.md)');
    process.exit(2);
  }
  try {
    const files = { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
    createSecureContext(files); // a certificate and key that do not load, or do not match, stop the start here
    return files;
  } catch (error) {
    log('error', `cannot use the TLS certificate and key: ${(error as Error).message}`);
    process.exit(2);
  }
}
const tls = tlsFiles();

const router = createRouter({
  serviceUrl,
  tenant,
  secret,
  agentApiBase,
  topics,
  ...(env.ROUTER_SITE_NAME ? { siteName: env.ROUTER_SITE_NAME } : {}),
  trustedProxies: list('ROUTER_TRUSTED_PROXIES'),
  ...(env.ROUTER_CLIENT_IP_HEADER ? { clientIpHeader: env.ROUTER_CLIENT_IP_HEADER } : {}),
  ja4Header: env.ROUTER_JA4_HEADER || null,
  ...(env.ROUTER_MAX_HELD ? { maxHeld: Number(env.ROUTER_MAX_HELD) } : {}),
  ...(env.ROUTER_MAX_DELAY_MS ? { maxDelayMs: Number(env.ROUTER_MAX_DELAY_MS) } : {}),
  ...(tls ? { tls } : {}),
  sender: {
    ...(env.ROUTER_SPOOL_DIR ? { spoolDir: env.ROUTER_SPOOL_DIR } : {}),
    ...(env.ROUTER_BATCH_MAX_WAIT_MS ? { batchMaxWaitMs: Number(env.ROUTER_BATCH_MAX_WAIT_MS) } : {}),
    onProblem: (p) => log('warn', 'delivery problem', { ...p }),
  },
});

const url = await router.listen(port('ROUTER_PORT', 8081), env.ROUTER_HOST ?? '0.0.0.0');
log('info', 'router listening', { url, service: serviceUrl, tenant, topics: topics.length });

// Counters on a loopback-only port: the bait site itself shows nothing of the router.
const adminPort = port('ROUTER_ADMIN_PORT', 0);
const admin = createServer((req, res) => {
  if (req.url !== '/metrics') return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(router.stats()));
});
if (env.ROUTER_ADMIN_PORT) admin.listen(adminPort, '127.0.0.1', () => log('info', 'router counters', { url: `http://127.0.0.1:${adminPort}/metrics` }));

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log('info', 'stopping', { signal });
    admin.close();
    await router.close();
    log('info', 'stopped', { ...router.stats().sender });
    process.exit(0);
  });
}
