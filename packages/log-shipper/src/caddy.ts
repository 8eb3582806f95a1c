import type { LineParser } from './log-format.ts';
import { epochSecondsTime, isoTime, type LoggedRequest } from './record.ts';

export interface CaddyOptions {
  /** The request header a JA4 module or the proxy in front puts the fingerprint in (default `x-ja4`). */
  ja4Header?: string;
}

/**
 * Caddy's JSON access log (`log { format json }`, the default): one object per line with
 * `request.client_ip` (Caddy 2.7+, the client behind trusted proxies) or `request.remote_ip`,
 * `request.method`, `request.uri`, `request.headers` (each a list of values), `ts` in seconds
 * since the epoch (or ISO 8601 with `time_format iso8601`) and `status`. Other log lines (Caddy's
 * own messages in the same file) are not requests.
 */
export function caddyParser(options: CaddyOptions = {}): LineParser {
  const ja4Header = (options.ja4Header ?? 'x-ja4').toLowerCase();
  return (line) => {
    if (!line.startsWith('{')) return null;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      return null;
    }
    if (!isObject(entry) || !isObject(entry.request)) return null;
    const request = entry.request;
    const ip = text(request.client_ip) || text(request.remote_ip);
    const method = text(request.method);
    const target = text(request.uri);
    if (ip === '' || method === '' || target === '') return null;
    const logged: LoggedRequest = { ip, method, target };
    const ts = typeof entry.ts === 'number' ? epochSecondsTime(entry.ts) : typeof entry.ts === 'string' ? isoTime(entry.ts) : null;
    if (ts !== null) logged.ts = ts;
    if (typeof entry.status === 'number' && Number.isInteger(entry.status)) logged.status = entry.status;
    const headers: Record<string, string> = {};
    if (isObject(request.headers)) {
      for (const [name, value] of Object.entries(request.headers)) {
        const joined = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string').join(', ') : text(value);
        headers[name.toLowerCase()] = joined;
      }
    }
    logged.ua = headers['user-agent'] ?? '';
    if (headers.referer) logged.referer = headers.referer;
    const ja4 = headers[ja4Header] ?? (isObject(request.tls) ? text(request.tls.ja4) : '');
    if (ja4) logged.ja4 = ja4;
    delete headers['user-agent'];
    delete headers.referer;
    logged.headers = headers;
    return logged;
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown) => (typeof value === 'string' ? value : '');
