/**
 * Configuration is read once, at start, from the environment. Every variable is validated here and
 * a bad value throws a ConfigError that names the variable, so start-up stops with one clear line.
 * Nothing else in the service reads process.env.
 */
import os from 'node:os';
import { isIP } from 'node:net';
import { FAULT_CATEGORIES } from './faults/index.ts';
import ipaddr from 'ipaddr.js';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
/** `json`: one JSON object a line (for collectors); `pretty`: readable lines for a person at a terminal. */
export type LogFormat = 'json' | 'pretty';

export interface Config {
  host: string;
  port: number;
  /** Where the embedded PostgreSQL keeps its files when no DATABASE_URL is given. */
  dataDir: string;
  databaseUrl: string | null;
  dbPoolMax: number;
  /** OBSERVATORY_DB_CONNECT_TIMEOUT_MS: how long a request waits for a database connection before 503. */
  dbConnectTimeoutMs: number;
  /** OBSERVATORY_DB_QUERY_TIMEOUT_MS: how long one statement may go unanswered before 503 (a server gone silent); 0: no limit. */
  dbQueryTimeoutMs: number;
  logLevel: LogLevel;
  /** LOG_FORMAT; unset, `pretty` when standard output is a terminal and `json` otherwise. */
  logFormat: LogFormat;
  /** The address clients use to reach this service; the manifest's baseUrl. */
  publicUrl: string;
  adminToken: string | null;
  sessionTtlHours: number;
  cookieSecure: boolean;
  webauthn: { rpId: string; rpName: string; origins: string[] };
  metricsToken: string | null;
  schedulerEnabled: boolean;
  schedulerTickMs: number;
  /**
   * Which proxies may tell the client address in `X-Forwarded-For`: `false` trusts none (the
   * socket address is the client); a number trusts that many hops nearest the server; a list
   * trusts only proxies at those addresses or CIDRs. Never the left-most, client-written entry.
   */
  trustProxy: false | number | string[];
  /** 401 and 403 answers per minute per client IP before its calls get 429; 0 turns the limit off. */
  authFailuresPerMinute: number;
  /** Bounds on every request; docs/operations.md, "Request limits". */
  requestLimits: RequestLimits;
  /** Redis for state several instances share (the agent API's rate limits); null keeps it in memory. */
  redisUrl: string | null;
  agentApi: {
    /** Slug of the honeypot tenant that public API calls are recorded for; null records none. */
    tenant: string | null;
    /** Calls per minute per (caller IP, agent_name) without an API key. */
    anonymousPerMinute: number;
    /** Calls per minute per API key. */
    keyPerMinute: number;
    /** Anonymous calls per minute per caller IP across every agent_name. */
    ipPerMinute: number;
    /** Answer searches from the in-process index (docs/agent-api/search-index.md); false sends every search to PostgreSQL. */
    searchIndex: boolean;
  };
  empire: {
    /** Refuse unsigned toolset events (`unsigned`) instead of admitting them in compatibility mode. */
    requireSignedEvents: boolean;
    /** Worker threads that check event signatures (default: every core but one, 1 to 4); 0 checks them on the HTTP thread. */
    verifyThreads: number;
  };
  honeypot: {
    /** LIAR events from one fingerprint within 10 minutes that trigger a tarpit. */
    liarThreshold: number;
    tarpitTtlMinutes: number;
    /** Milliseconds after a group commit that the background applier adds pending events to the rollups. */
    rollupApplyDelayMs: number;
    /** A JSON vendor registry that replaces the shipped one (spec D3). */
    vendorsFile: string | null;
    /** Refresh published vendor ranges from their URLs when the network allows. */
    vendorRefresh: boolean;
    /** Key for the keyed hash of client IPs; generated once and stored when unset. */
    ipHashKey: string | null;
    /** Forward-confirmed reverse DNS as a vendor proof (docs/honeypot/vendors.md, "Reverse DNS"). */
    reverseDns: {
      enabled: boolean;
      /** DNS servers as `ip` or `ip:port` (`[ipv6]:port`); empty asks the system's. */
      servers: string[];
      timeoutMs: number;
      concurrency: number;
    };
  };
  outbound: {
    /** Allow webhooks to private, loopback and link-local addresses (tests, lab setups). */
    allowPrivate: boolean;
    timeoutMs: number;
    /** Ports webhooks may be sent to. */
    allowedPorts: number[];
  };
  /** Backup snapshots and restore verification (docs/backups/README.md). */
  backups: BackupsConfig;
  /** OBSERVATORY_REGION: this deployment's region key (spec D7); `local` unless set. */
  region: string;
  /** OBSERVATORY_BRIDGE_TOKEN: the shared secret deployments present to each other (spec D7); null refuses bridge calls and asks no peer. */
  bridgeToken: string | null;
  federation: {
    /** OBSERVATORY_FEDERATION_TIMEOUT_MS: the deadline of each bridge call of a federation fan-out (docs/federation/README.md). */
    timeoutMs: number;
    /** OBSERVATORY_FEDERATION_CONCURRENCY: bridge calls of one fan-out in flight at once. */
    concurrency: number;
  };
  /** OBSERVATORY_BRIDGE_TOKEN_NEXT: the staged bridge token, accepted beside the current one and sent during a rotation rehearsal (docs/chaos/README.md). */
  bridgeTokenNext: string | null;
  chaos: {
    /** OBSERVATORY_CHAOS_ALLOW: the blast radii (kind categories) chaos may touch, or `*`; empty: chaos is off (docs/chaos/README.md). */
    allow: string[];
    /** OBSERVATORY_CHAOS_LATENCY_MS: the delay a synthetic-latency run adds to each matching request. */
    latencyMs: number;
  };
  drills: {
    /** OBSERVATORY_DRILL_DATA_LOSS_TARGET_SEC: a failover drill whose data-loss window exceeds this ends `drift` (docs/backups/README.md). */
    dataLossTargetSec: number;
  };
  crossToolset: {
    /** OBSERVATORY_CROSS_TOOLSET_TIMEOUT_MS: how long the cross-toolset view waits for each toolset's verify answer. */
    timeoutMs: number;
    /**
     * OBSERVATORY_BRIDGE_PEER_HOSTS: the host names (or IP addresses) the bridge token may be sent
     * to. A toolset's verify URL must name one of them, so a caller who may register toolsets
     * cannot have the token sent to a host of its own. Empty: no toolset can be registered.
     */
    peerHosts: string[];
    /**
     * OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC: this deployment asks each toolset at most once in this
     * many seconds (counted from the end of the last ask), and refuses bridge verifications of its
     * own backups that come sooner than this after the last one (429 `rate-limited`).
     */
    minIntervalSec: number;
  };
  /** Language models (spec D8; docs/triage/README.md, "Engines"). */
  llm: LlmConfig;
  triage: {
    /** OBSERVATORY_TRIAGE_BUDGET_USD_CENTS: the empire-wide (`*`) monthly model budget when none was set for the month. */
    defaultBudgetUsdCents: number;
  };
  integrations: {
    chatWebhookUrl: string | null;
    metricsForwardUrl: string | null;
    metricsForwardToken: string | null;
    ciDispatchUrl: string | null;
    ciDispatchToken: string | null;
    csvSinceUrl: string | null;
  };
}

/**
 * The live model: all three of OBSERVATORY_LLM_BASE_URL and OBSERVATORY_LLM_MODEL set (the key may
 * be absent for local servers) make `live` non-null; otherwise every agent runs the built-in engine.
 */
export interface LlmConfig {
  live: { baseUrl: string; model: string; apiKey: string | null } | null;
  /** OBSERVATORY_LLM_TIMEOUT_MS: one request's limit, each retry included. */
  timeoutMs: number;
  /** OBSERVATORY_LLM_MAX_RETRIES: retries after a 429, a 5xx, a timeout or a lost connection, with backoff. */
  maxRetries: number;
  /**
   * OBSERVATORY_LLM_PRICES: JSON `{"<model>": {"inputCentsPerMTok": n, "outputCentsPerMTok": n}}`
   * merged over the shipped table (platform/llm/prices.ts); `*` prices every model not listed.
   */
  prices: Record<string, { inputCentsPerMTok: number; outputCentsPerMTok: number }>;
}

function llmConfig(env: Env): LlmConfig {
  const baseUrl = url(env, 'OBSERVATORY_LLM_BASE_URL', ['http:', 'https:']);
  const model = text(env, 'OBSERVATORY_LLM_MODEL');
  if ((baseUrl === null) !== (model === null)) {
    throw new ConfigError(baseUrl === null ? 'OBSERVATORY_LLM_BASE_URL' : 'OBSERVATORY_LLM_MODEL', 'OBSERVATORY_LLM_BASE_URL and OBSERVATORY_LLM_MODEL are set together or not at all');
  }
  if (model !== null && model.length > 200) throw new ConfigError('OBSERVATORY_LLM_MODEL', 'must be at most 200 characters');
  return {
    live: baseUrl !== null && model !== null ? { baseUrl: baseUrl.replace(/\/+$/, ''), model, apiKey: text(env, 'OBSERVATORY_LLM_API_KEY') } : null,
    timeoutMs: integer(env, 'OBSERVATORY_LLM_TIMEOUT_MS', 60_000, 100, 600_000),
    maxRetries: integer(env, 'OBSERVATORY_LLM_MAX_RETRIES', 2, 0, 10),
    prices: llmPrices(env),
  };
}

function llmPrices(env: Env): LlmConfig['prices'] {
  const raw = text(env, 'OBSERVATORY_LLM_PRICES');
  if (raw === null) return {};
  const fail = (why: string): never => {
    throw new ConfigError('OBSERVATORY_LLM_PRICES', `must be JSON {"<model>": {"inputCentsPerMTok": n, "outputCentsPerMTok": n}}: ${why}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return fail('it is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return fail('it is not an object');
  const prices: LlmConfig['prices'] = {};
  for (const [model, price] of Object.entries(parsed)) {
    const { inputCentsPerMTok: input, outputCentsPerMTok: output } = (price ?? {}) as Record<string, unknown>;
    const valid = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= 1_000_000;
    if (!valid(input) || !valid(output)) fail(`the price of ${JSON.stringify(model)} needs inputCentsPerMTok and outputCentsPerMTok, each 0 to 1000000`);
    prices[model] = { inputCentsPerMTok: input as number, outputCentsPerMTok: output as number };
  }
  return prices;
}

export interface BackupsConfig {
  /** OBSERVATORY_BACKUP_DIR: snapshot files (and work files while dumping or verifying); DATA_DIR/backups unless set. */
  dir: string;
  /** OBSERVATORY_BACKUP_RETENTION_DAYS: days a snapshot is kept before the backup-snapshot job deletes it; 0 keeps every snapshot. */
  retentionDays: number;
  /** OBSERVATORY_BACKUP_DATABASE: the logical name snapshots and verifications carry (`database`). */
  database: string;
  /** OBSERVATORY_PG_DUMP_PATH, OBSERVATORY_PG_RESTORE_PATH: the client tools used on a PostgreSQL server. */
  pgDumpPath: string;
  pgRestorePath: string;
  /** OBSERVATORY_BACKUP_SCRATCH_PREFIX: name prefix of the temporary databases restores go into. */
  scratchPrefix: string;
  /** An S3-compatible bucket for snapshot files instead of the directory; null when OBSERVATORY_BACKUP_S3_BUCKET is unset. */
  s3: {
    bucket: string;
    /** Prepended to every object key (`observatory/`, say); empty unless set. */
    prefix: string;
    /** null: AWS S3 itself. */
    endpoint: string | null;
    region: string;
    /** null with `secret` null: the AWS SDK's default credential chain. */
    accessKeyId: string | null;
    /** OBSERVATORY_BACKUP_S3_SECRET_ACCESS_KEY (named `secret` so the tests' leak scan watches for it). */
    secret: string | null;
    forcePathStyle: boolean;
  } | null;
}

export interface RequestLimits {
  /** OBSERVATORY_REQUEST_TIMEOUT_MS: a request not answered this long after its headers arrived gets 503 `timeout`. */
  timeoutMs: number;
  /** OBSERVATORY_RECEIVE_TIMEOUT_MS: the time a client has to send its whole request (headers and body); 408 beyond it. */
  receiveTimeoutMs: number;
  /** OBSERVATORY_MAX_HEADER_BYTES: request line plus headers; 431 beyond it. */
  maxHeaderBytes: number;
  /** OBSERVATORY_INGEST_CONCURRENCY: ingest requests worked on at once (both ingests together); 503 `overloaded` beyond it. */
  ingestConcurrency: number;
  /**
   * OBSERVATORY_GRAPH_QUERY_CONCURRENCY: graph queries worked on at once; 503 `overloaded` beyond
   * it. Each may hold a connection for up to its statement timeout, so a few callers cannot take
   * the whole pool.
   */
  graphQueryConcurrency: number;
  /**
   * OBSERVATORY_MODEL_CALL_CONCURRENCY: triage runs and postmortem drafts worked on at once; 503
   * `overloaded` beyond it. Each may wait minutes on a live model (its timeout times its attempts)
   * and spends its tokens, so a few callers cannot pile up calls.
   */
  modelCallConcurrency: number;
}

export const REQUEST_LIMIT_DEFAULTS: RequestLimits = {
  timeoutMs: 30_000,
  receiveTimeoutMs: 30_000,
  maxHeaderBytes: 16 * 1024,
  ingestConcurrency: 64,
  graphQueryConcurrency: 4,
  modelCallConcurrency: 2,
};

/**
 * Database limits: together (connection, then one statement) below OBSERVATORY_REQUEST_TIMEOUT_MS's
 * default, so a database gone silent is answered 503 `unavailable` before the request times out.
 */
export const DEFAULT_DB_CONNECT_TIMEOUT_MS = 5_000;
export const DEFAULT_DB_QUERY_TIMEOUT_MS = 20_000;

type Env = Record<string, string | undefined>;

/** A plaintext API token: `svctok_` then at least 32 base64url characters (192 bits). */
export const TOKEN_PATTERN = /^svctok_[A-Za-z0-9_-]{32,}$/;

function text(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value.trim() === '' ? null : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be one of 1, 0, true, false, yes, no, on, off; got "${raw}"`);
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = text(env, name);
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be an absolute URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw;
}

function secretText(env: Env, name: string, minLength: number): string | null {
  const raw = text(env, name);
  if (raw !== null && raw.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters long`);
  return raw;
}

/** The backups block (docs/operations.md, "Backups"). */
function backupsConfig(env: Env): BackupsConfig {
  const dataDir = text(env, 'DATA_DIR') ?? './data';
  const database = text(env, 'OBSERVATORY_BACKUP_DATABASE') ?? 'observatory';
  if (!/^[a-z][a-z0-9_-]{0,62}$/.test(database)) throw new ConfigError('OBSERVATORY_BACKUP_DATABASE', `must be 1 to 63 of a-z, 0-9, _ and - starting with a letter, got "${database}"`);
  const scratchPrefix = text(env, 'OBSERVATORY_BACKUP_SCRATCH_PREFIX') ?? 'obs_restore';
  if (!/^[a-z_][a-z0-9_]{0,39}$/.test(scratchPrefix)) throw new ConfigError('OBSERVATORY_BACKUP_SCRATCH_PREFIX', `must be 1 to 40 of a-z, 0-9 and _ not starting with a digit, got "${scratchPrefix}"`);
  const bucket = text(env, 'OBSERVATORY_BACKUP_S3_BUCKET');
  if (bucket !== null && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new ConfigError('OBSERVATORY_BACKUP_S3_BUCKET', `must be an S3 bucket name (3 to 63 of a-z, 0-9, . and -), got "${bucket}"`);
  const endpoint = url(env, 'OBSERVATORY_BACKUP_S3_ENDPOINT', ['https:', 'http:']);
  // Snapshot files hold the whole database and the request carries the access key's signature: in
  // clear text only where someone said so, for a lab's local S3 server.
  const allowHttp = flag(env, 'OBSERVATORY_BACKUP_S3_ALLOW_HTTP', false);
  if (bucket !== null && endpoint !== null && new URL(endpoint).protocol === 'http:' && !allowHttp) {
    throw new ConfigError('OBSERVATORY_BACKUP_S3_ENDPOINT', 'is http:, which sends every snapshot unencrypted; use https, or set OBSERVATORY_BACKUP_S3_ALLOW_HTTP=1 for a lab');
  }
  const accessKeyId = text(env, 'OBSERVATORY_BACKUP_S3_ACCESS_KEY_ID');
  const secret = text(env, 'OBSERVATORY_BACKUP_S3_SECRET_ACCESS_KEY');
  if ((accessKeyId === null) !== (secret === null)) throw new ConfigError(accessKeyId === null ? 'OBSERVATORY_BACKUP_S3_ACCESS_KEY_ID' : 'OBSERVATORY_BACKUP_S3_SECRET_ACCESS_KEY', 'set both S3 credentials or neither');
  return {
    dir: text(env, 'OBSERVATORY_BACKUP_DIR') ?? `${dataDir.replace(/\/+$/, '')}/backups`,
    retentionDays: integer(env, 'OBSERVATORY_BACKUP_RETENTION_DAYS', 14, 0, 3650),
    database,
    pgDumpPath: text(env, 'OBSERVATORY_PG_DUMP_PATH') ?? 'pg_dump',
    pgRestorePath: text(env, 'OBSERVATORY_PG_RESTORE_PATH') ?? 'pg_restore',
    scratchPrefix,
    s3:
      bucket === null
        ? null
        : {
            bucket,
            prefix: text(env, 'OBSERVATORY_BACKUP_S3_PREFIX') ?? '',
            endpoint,
            region: text(env, 'OBSERVATORY_BACKUP_S3_REGION') ?? 'us-east-1',
            accessKeyId,
            secret,
            // Path-style addressing is what S3-compatible servers (MinIO, s3rver, …) expect.
            forcePathStyle: flag(env, 'OBSERVATORY_BACKUP_S3_FORCE_PATH_STYLE', endpoint !== null),
          },
  };
}

/** OBSERVATORY_REGION: `local` unless set; a region key of a-z, 0-9 and `-`. */
function region(env: Env): string {
  const raw = text(env, 'OBSERVATORY_REGION');
  if (raw === null) return 'local';
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(raw)) throw new ConfigError('OBSERVATORY_REGION', `must be 1 to 64 of a-z, 0-9 and - (starting with a letter or digit), got "${raw}"`);
  return raw;
}

/** `agent-api` unless set; set to an empty value (or `off`), no call is recorded. */
function agentApiTenant(env: Env): string | null {
  const raw = env.OBSERVATORY_AGENT_API_TENANT;
  if (raw === undefined) return 'agent-api';
  const slug = raw.trim();
  if (slug === '' || slug === 'off') return null;
  if (!/^[a-z0-9-]{1,64}$/.test(slug)) throw new ConfigError('OBSERVATORY_AGENT_API_TENANT', 'must be a tenant slug: 1 to 64 of a-z, 0-9 and -');
  return slug;
}

/** OBSERVATORY_CHAOS_ALLOW: comma-separated fault categories, or `*`; unset or empty turns chaos off. */
function chaosAllow(env: Env): string[] {
  const raw = text(env, 'OBSERVATORY_CHAOS_ALLOW');
  if (raw === null) return [];
  const entries = raw.split(',').map((e) => e.trim()).filter((e) => e !== '');
  for (const entry of entries) {
    if (entry !== '*' && !(FAULT_CATEGORIES as readonly string[]).includes(entry)) {
      throw new ConfigError('OBSERVATORY_CHAOS_ALLOW', `must be * or a comma-separated list of ${FAULT_CATEGORIES.join(', ')}; "${entry}" is none of these`);
    }
  }
  return entries;
}

/**
 * OBSERVATORY_TRUST_PROXY: `0` (or unset) trusts no proxy; a whole number trusts that many hops
 * nearest the server; otherwise a comma-separated list of proxy addresses or CIDRs. `true`/`yes`
 * are refused: trusting every hop would take the left-most, client-written address.
 */
function trustProxy(env: Env): false | number | string[] {
  const raw = text(env, 'OBSERVATORY_TRUST_PROXY');
  if (raw === null || raw === '0') return false;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops > 16) throw new ConfigError('OBSERVATORY_TRUST_PROXY', `a hop count must be between 0 and 16, got ${hops}`);
    return hops;
  }
  const entries = raw.split(',').map((e) => e.trim()).filter((e) => e !== '');
  for (const entry of entries) {
    if (!isAddressOrCidr(entry)) {
      throw new ConfigError(
        'OBSERVATORY_TRUST_PROXY',
        `must be 0, a hop count (the number of proxies in front of the service) or a comma-separated list of proxy addresses or CIDRs; "${entry}" is none of these`,
      );
    }
  }
  return entries;
}

function isAddressOrCidr(entry: string): boolean {
  try {
    if (entry.includes('/')) ipaddr.parseCIDR(entry);
    else ipaddr.parse(entry);
    return true;
  } catch {
    return false;
  }
}

/** OBSERVATORY_OUTBOUND_ALLOWED_PORTS: comma-separated TCP ports webhooks may use (default 80 and 443). */
function portList(env: Env, name: string, fallback: number[]): number[] {
  const raw = text(env, name);
  if (raw === null) return fallback;
  const ports = raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (ports.length === 0) throw new ConfigError(name, 'must list at least one port');
  return [...new Set(ports.map((p) => {
    if (!/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 65535) throw new ConfigError(name, `must be a comma-separated list of ports 1 to 65535; "${p}" is not`);
    return Number(p);
  }))].sort((a, b) => a - b);
}

/** A comma-separated list of host names or IP addresses, lower-cased; empty when unset. */
function hostList(env: Env, name: string): string[] {
  const raw = text(env, name);
  if (raw === null) return [];
  const hosts = raw.split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
  for (const host of hosts) {
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?)$/.test(host)) {
      throw new ConfigError(name, `must be a comma-separated list of host names or IP addresses (IPv6 in brackets); "${host}" is not`);
    }
  }
  return [...new Set(hosts)];
}

/** A comma-separated list of DNS servers: `ip`, `ip:port` or `[ipv6]:port`; empty when unset. */
function dnsServerList(env: Env, name: string): string[] {
  const raw = text(env, name);
  if (raw === null) return [];
  const servers = raw.split(',').map((h) => h.trim()).filter((h) => h !== '');
  for (const server of servers) {
    const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(server);
    const plain = /^([0-9.]+)(?::(\d{1,5}))?$/.exec(server);
    const host = bracketed?.[1] ?? plain?.[1] ?? (isIP(server) === 6 ? server : null);
    const port = bracketed?.[2] ?? plain?.[2];
    if (host === null || isIP(host) === 0 || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
      throw new ConfigError(name, `must be a comma-separated list of DNS server addresses (ip, ip:port or [ipv6]:port); "${server}" is not`);
    }
  }
  return servers;
}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

const LOG_FORMATS: LogFormat[] = ['json', 'pretty'];

/**
 * `env` is the environment; `isTty` says whether standard output is a terminal (it decides the
 * default LOG_FORMAT), passed in so tests need no terminal.
 */
export function loadConfig(env: Env = process.env, isTty: boolean = process.stdout.isTTY === true): Config {
  const host = text(env, 'HOST') ?? '127.0.0.1';
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const logLevel = (text(env, 'LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const logFormat = (text(env, 'LOG_FORMAT')?.toLowerCase() ?? (isTty ? 'pretty' : 'json')) as LogFormat;
  if (!LOG_FORMATS.includes(logFormat)) throw new ConfigError('LOG_FORMAT', `must be one of ${LOG_FORMATS.join(', ')}, got "${text(env, 'LOG_FORMAT')}"`);

  const adminToken = text(env, 'OBSERVATORY_ADMIN_TOKEN');
  if (adminToken !== null && !TOKEN_PATTERN.test(adminToken)) {
    throw new ConfigError(
      'OBSERVATORY_ADMIN_TOKEN',
      'must look like svctok_ followed by at least 32 characters of A-Z, a-z, 0-9, _ or -',
    );
  }
  const metricsToken = secretText(env, 'OBSERVATORY_METRICS_TOKEN', 24);

  const publicUrl = (url(env, 'OBSERVATORY_PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(
    /\/+$/,
    '',
  );
  const rpId = text(env, 'OBSERVATORY_RP_ID') ?? new URL(publicUrl).hostname;
  const originList = text(env, 'OBSERVATORY_RP_ORIGINS');
  const origins = originList === null ? [new URL(publicUrl).origin] : originList.split(',').map((o) => o.trim());
  for (const origin of origins) {
    try {
      new URL(origin);
    } catch {
      throw new ConfigError('OBSERVATORY_RP_ORIGINS', `"${origin}" is not an absolute origin`);
    }
  }

  return {
    host,
    port,
    dataDir: text(env, 'DATA_DIR') ?? './data',
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dbPoolMax: integer(env, 'DB_POOL_MAX', 10, 1, 200),
    dbConnectTimeoutMs: integer(env, 'OBSERVATORY_DB_CONNECT_TIMEOUT_MS', DEFAULT_DB_CONNECT_TIMEOUT_MS, 100, 600_000),
    dbQueryTimeoutMs: integer(env, 'OBSERVATORY_DB_QUERY_TIMEOUT_MS', DEFAULT_DB_QUERY_TIMEOUT_MS, 0, 3_600_000),
    logLevel,
    logFormat,
    publicUrl,
    adminToken,
    sessionTtlHours: integer(env, 'OBSERVATORY_SESSION_TTL_HOURS', 12, 1, 24 * 30),
    cookieSecure: flag(env, 'OBSERVATORY_COOKIE_SECURE', publicUrl.startsWith('https:')),
    webauthn: { rpId, rpName: text(env, 'OBSERVATORY_RP_NAME') ?? 'Observatory', origins },
    metricsToken,
    schedulerEnabled: flag(env, 'OBSERVATORY_SCHEDULER', true),
    schedulerTickMs: integer(env, 'OBSERVATORY_SCHEDULER_TICK_MS', 15_000, 100, 3_600_000),
    trustProxy: trustProxy(env),
    authFailuresPerMinute: integer(env, 'OBSERVATORY_AUTH_FAILURES_PER_MINUTE', 100, 0, 1_000_000_000),
    requestLimits: {
      timeoutMs: integer(env, 'OBSERVATORY_REQUEST_TIMEOUT_MS', REQUEST_LIMIT_DEFAULTS.timeoutMs, 10, 3_600_000),
      receiveTimeoutMs: integer(env, 'OBSERVATORY_RECEIVE_TIMEOUT_MS', REQUEST_LIMIT_DEFAULTS.receiveTimeoutMs, 1_000, 3_600_000),
      // Below 1 KiB not even a bearer token and a cookie fit; above 256 KiB every connection may make the server buffer that much.
      maxHeaderBytes: integer(env, 'OBSERVATORY_MAX_HEADER_BYTES', REQUEST_LIMIT_DEFAULTS.maxHeaderBytes, 1_024, 256 * 1024),
      ingestConcurrency: integer(env, 'OBSERVATORY_INGEST_CONCURRENCY', REQUEST_LIMIT_DEFAULTS.ingestConcurrency, 1, 100_000),
      graphQueryConcurrency: integer(env, 'OBSERVATORY_GRAPH_QUERY_CONCURRENCY', REQUEST_LIMIT_DEFAULTS.graphQueryConcurrency, 1, 1_000),
      modelCallConcurrency: integer(env, 'OBSERVATORY_MODEL_CALL_CONCURRENCY', REQUEST_LIMIT_DEFAULTS.modelCallConcurrency, 1, 1_000),
    },
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    agentApi: {
      tenant: agentApiTenant(env),
      anonymousPerMinute: integer(env, 'OBSERVATORY_AGENT_API_ANON_PER_MINUTE', 20, 1, 1_000_000_000),
      keyPerMinute: integer(env, 'OBSERVATORY_AGENT_API_KEY_PER_MINUTE', 200, 1, 1_000_000_000),
      ipPerMinute: integer(env, 'OBSERVATORY_AGENT_API_IP_PER_MINUTE', 120, 1, 1_000_000_000),
      searchIndex: flag(env, 'OBSERVATORY_SEARCH_INDEX', true),
    },
    empire: {
      requireSignedEvents: flag(env, 'OBSERVATORY_REQUIRE_SIGNED_EVENTS', false),
      verifyThreads: integer(env, 'OBSERVATORY_VERIFY_THREADS', Math.max(1, Math.min(4, os.availableParallelism() - 1)), 0, 64),
    },
    honeypot: {
      liarThreshold: integer(env, 'OBSERVATORY_LIAR_THRESHOLD', 5, 1, 10_000),
      tarpitTtlMinutes: integer(env, 'OBSERVATORY_TARPIT_TTL_MINUTES', 60, 1, 7 * 24 * 60),
      rollupApplyDelayMs: integer(env, 'OBSERVATORY_ROLLUP_APPLY_DELAY_MS', 500, 0, 600_000),
      vendorsFile: text(env, 'OBSERVATORY_VENDORS_FILE'),
      vendorRefresh: flag(env, 'OBSERVATORY_VENDOR_REFRESH', true),
      ipHashKey: secretText(env, 'OBSERVATORY_IP_HASH_KEY', 32),
      reverseDns: {
        enabled: flag(env, 'OBSERVATORY_RDNS', true),
        servers: dnsServerList(env, 'OBSERVATORY_RDNS_SERVERS'),
        timeoutMs: integer(env, 'OBSERVATORY_RDNS_TIMEOUT_MS', 2_000, 100, 30_000),
        concurrency: integer(env, 'OBSERVATORY_RDNS_CONCURRENCY', 8, 1, 64),
      },
    },
    outbound: {
      allowPrivate: flag(env, 'OBSERVATORY_ALLOW_PRIVATE_OUTBOUND', false),
      timeoutMs: integer(env, 'OBSERVATORY_OUTBOUND_TIMEOUT_MS', 5_000, 100, 60_000),
      allowedPorts: portList(env, 'OBSERVATORY_OUTBOUND_ALLOWED_PORTS', [80, 443]),
    },
    backups: backupsConfig(env),
    region: region(env),
    bridgeToken: secretText(env, 'OBSERVATORY_BRIDGE_TOKEN', 32),
    federation: {
      timeoutMs: integer(env, 'OBSERVATORY_FEDERATION_TIMEOUT_MS', 5_000, 100, 120_000),
      concurrency: integer(env, 'OBSERVATORY_FEDERATION_CONCURRENCY', 4, 1, 64),
    },
    bridgeTokenNext: secretText(env, 'OBSERVATORY_BRIDGE_TOKEN_NEXT', 32),
    chaos: {
      allow: chaosAllow(env),
      latencyMs: integer(env, 'OBSERVATORY_CHAOS_LATENCY_MS', 2_000, 50, 60_000),
    },
    drills: {
      dataLossTargetSec: integer(env, 'OBSERVATORY_DRILL_DATA_LOSS_TARGET_SEC', 26 * 60 * 60, 60, 90 * 24 * 60 * 60),
    },
    crossToolset: {
      timeoutMs: integer(env, 'OBSERVATORY_CROSS_TOOLSET_TIMEOUT_MS', 120_000, 100, 600_000),
      peerHosts: hostList(env, 'OBSERVATORY_BRIDGE_PEER_HOSTS'),
      minIntervalSec: integer(env, 'OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC', 600, 60, 86_400),
    },
    llm: llmConfig(env),
    triage: {
      defaultBudgetUsdCents: integer(env, 'OBSERVATORY_TRIAGE_BUDGET_USD_CENTS', 10_000, 0, 1_000_000_000),
    },
    integrations: {
      chatWebhookUrl: url(env, 'OBSERVATORY_CHAT_WEBHOOK_URL', ['https:', 'http:']),
      metricsForwardUrl: url(env, 'OBSERVATORY_METRICS_FORWARD_URL', ['https:', 'http:']),
      metricsForwardToken: text(env, 'OBSERVATORY_METRICS_FORWARD_TOKEN'),
      ciDispatchUrl: url(env, 'OBSERVATORY_CI_DISPATCH_URL', ['https:', 'http:']),
      ciDispatchToken: text(env, 'OBSERVATORY_CI_DISPATCH_TOKEN'),
      csvSinceUrl: url(env, 'OBSERVATORY_CSV_SINCE_URL', ['https:', 'http:']),
    },
  };
}
