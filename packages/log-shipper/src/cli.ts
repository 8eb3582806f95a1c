import { readConfig, USAGE } from './config.ts';
import { createShipper, type Shipper } from './shipper.ts';

/**
 * `npm run log-shipper -- [options] <access log>...` from the repository root, or the
 * `observatory-log-shipper` bin. See README.md. Logs one JSON line per event worth an operator's eye.
 */
const log = (level: 'info' | 'warn' | 'error', msg: string, extra: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...extra })}\n`);

const read = readConfig(process.argv.slice(2), process.env);
if ('problem' in read) {
  log('error', `${read.problem} (see packages/log-shipper/README.md)`);
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}
const { config } = read;

let shipper: Shipper;
try {
  shipper = createShipper({
    paths: config.paths,
    stateDir: config.stateDir,
    format: config.format,
    ...(config.logFormat === undefined ? {} : { logFormat: config.logFormat }),
    ...(config.ja4Header === undefined ? {} : { ja4Header: config.ja4Header }),
    ...(config.ja4Variables === undefined ? {} : { ja4Variables: config.ja4Variables }),
    pollMs: config.pollMs,
    startAtEnd: config.startAtEnd,
    ...(config.rotationGraceMs === undefined ? {} : { rotationGraceMs: config.rotationGraceMs }),
    onReadProblem: (message) => log('warn', 'cannot read a log', { message }),
    sender: {
      url: config.url,
      tenant: config.tenant,
      secret: config.secret,
      ...(config.batchMaxWaitMs === undefined ? {} : { batchMaxWaitMs: config.batchMaxWaitMs }),
      onProblem: (p) => log('warn', 'delivery problem', { ...p }),
    },
  });
} catch (error) {
  log('error', `${(error as Error).message} (see packages/log-shipper/README.md)`);
  process.exit(2);
}
log('info', 'log shipper started', { service: config.url, tenant: config.tenant, format: config.format, paths: config.paths });

const statsTimer = config.statsEveryMs > 0 ? setInterval(() => log('info', 'counters', { ...shipper.stats() }), config.statsEveryMs) : null;

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log('info', 'stopping', { signal });
    if (statsTimer !== null) clearInterval(statsTimer);
    await shipper.close();
    log('info', 'stopped', { ...shipper.stats() });
    process.exit(0);
  });
}
