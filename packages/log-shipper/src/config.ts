import { parseArgs } from 'node:util';
import type { LogFormatName } from './shipper.ts';

export interface ShipperConfig {
  url: string;
  tenant: string;
  secret: string;
  paths: string[];
  stateDir: string;
  format: LogFormatName;
  logFormat?: string;
  ja4Header?: string;
  ja4Variables?: string[];
  pollMs: number;
  batchMaxWaitMs?: number;
  rotationGraceMs?: number;
  startAtEnd: boolean;
  statsEveryMs: number;
}

const FORMATS: readonly LogFormatName[] = ['combined', 'caddy', 'nginx', 'apache'];

export const USAGE = `usage: log-shipper [options] <access log>...
  --format combined|caddy|nginx|apache   the log's format (default combined)
  --log-format '<string>'                for nginx: its log_format string; for apache: its LogFormat string
  --state-dir <dir>                      positions and the delivery spool (required)
  --ja4-header <name>                    caddy: the request header holding the JA4 (default x-ja4)
  --ja4-variables <a,b>                  nginx/apache: variables read as the JA4
  --poll-ms <ms>                         between polls of idle files (default 250)
  --batch-max-wait-ms <ms>               the sender's batch wait (default 1000)
  --rotation-grace-ms <ms>               how long a renamed log is still read (default 5000)
  --from-end                             a file never seen before is read from its end
  --stats-every-ms <ms>                  log the counters this often (default 60000; 0: never)
environment: OBSERVATORY_URL, OBSERVATORY_TENANT, OBSERVATORY_TENANT_SECRET (required);
  LOG_SHIPPER_STATE_DIR, LOG_SHIPPER_FORMAT, LOG_SHIPPER_LOG_FORMAT stand in for the options.`;

/** The configuration from the command line and the environment, or a message saying what is wrong. */
export function readConfig(argv: readonly string[], env: NodeJS.ProcessEnv): { config: ShipperConfig } | { problem: string } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        format: { type: 'string' },
        'log-format': { type: 'string' },
        'state-dir': { type: 'string' },
        'ja4-header': { type: 'string' },
        'ja4-variables': { type: 'string' },
        'poll-ms': { type: 'string' },
        'batch-max-wait-ms': { type: 'string' },
        'rotation-grace-ms': { type: 'string' },
        'from-end': { type: 'boolean' },
        'stats-every-ms': { type: 'string' },
      },
    });
  } catch (error) {
    return { problem: (error as Error).message };
  }
  const { values, positionals } = parsed;
  for (const name of ['OBSERVATORY_URL', 'OBSERVATORY_TENANT', 'OBSERVATORY_TENANT_SECRET']) {
    if (!env[name]) return { problem: `${name} is required` };
  }
  const url = env.OBSERVATORY_URL as string;
  try {
    if (!/^https?:$/.test(new URL(url).protocol)) throw new Error('not http');
  } catch {
    return { problem: `OBSERVATORY_URL must be an http(s) URL (got ${url})` };
  }
  if (positionals.length === 0) return { problem: 'no access log given' };
  const stateDir = values['state-dir'] ?? env.LOG_SHIPPER_STATE_DIR;
  if (!stateDir) return { problem: '--state-dir (or LOG_SHIPPER_STATE_DIR) is required' };
  const format = (values.format ?? env.LOG_SHIPPER_FORMAT ?? 'combined') as LogFormatName;
  if (!FORMATS.includes(format)) return { problem: `--format must be one of ${FORMATS.join(', ')} (got ${format})` };
  const logFormat = values['log-format'] ?? env.LOG_SHIPPER_LOG_FORMAT;
  if ((format === 'nginx' || format === 'apache') && !logFormat) return { problem: `--format ${format} needs --log-format (the server's format string)` };
  const numbers: Record<string, number | undefined> = {};
  for (const name of ['poll-ms', 'batch-max-wait-ms', 'rotation-grace-ms', 'stats-every-ms'] as const) {
    const text = values[name];
    if (text === undefined) continue;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 0) return { problem: `--${name} must be a whole number of milliseconds (got ${text})` };
    numbers[name] = value;
  }
  const config: ShipperConfig = {
    url,
    tenant: env.OBSERVATORY_TENANT as string,
    secret: env.OBSERVATORY_TENANT_SECRET as string,
    paths: positionals,
    stateDir,
    format,
    pollMs: numbers['poll-ms'] ?? 250,
    startAtEnd: values['from-end'] === true,
    statsEveryMs: numbers['stats-every-ms'] ?? 60_000,
  };
  if (logFormat) config.logFormat = logFormat;
  if (values['ja4-header']) config.ja4Header = values['ja4-header'];
  if (values['ja4-variables']) config.ja4Variables = values['ja4-variables'].split(',').map((s) => s.trim().replace(/^\$/, '')).filter(Boolean);
  if (numbers['batch-max-wait-ms'] !== undefined) config.batchMaxWaitMs = numbers['batch-max-wait-ms'];
  if (numbers['rotation-grace-ms'] !== undefined) config.rotationGraceMs = numbers['rotation-grace-ms'];
  return { config };
}
