import { clean, type HoneypotEvent, plainAddress, RECORDED_HEADERS } from '@observatory/sender';

/** What one access-log line says about a request, whatever the server's format. */
export interface LoggedRequest {
  /** The client's address as logged. */
  ip: string;
  /** When the request was served, ISO 8601; absent when the format does not log it. */
  ts?: string;
  method: string;
  /** Path and query string, as in the request line. */
  target: string;
  status?: number;
  ua?: string;
  referer?: string;
  ja4?: string;
  /** Lower-case header name → value (only the headers the sender records). */
  headers?: Record<string, string>;
}

const RECORDED = new Set<string>(RECORDED_HEADERS);
export const isRecordedHeader = (name: string) => RECORDED.has(name);

const METHOD = /^[A-Za-z]{1,16}$/;
const JA4 = /^[A-Za-z0-9_]{1,64}$/;

/**
 * The ingest event for a logged request, with the given id; null when the line cannot be one (no
 * valid address, method or path): such a line is counted as unparsed rather than sent to be
 * refused. Values are cut to what the ingest takes, as the sender's `requestEvent` does.
 */
export function eventOf(request: LoggedRequest, id: string): HoneypotEvent | null {
  const ip = plainAddress(request.ip.trim());
  if (ip === null || !METHOD.test(request.method)) return null;
  let target = request.target;
  if (!target.startsWith('/')) {
    // A proxy request's absolute URL ("GET http://host/x"): its path, as the router reads it.
    try {
      const absolute = new URL(target);
      target = `${absolute.pathname}${absolute.search}`;
    } catch {
      return null;
    }
  }
  const mark = target.indexOf('?');
  const path = clean(mark < 0 ? target : target.slice(0, mark), 2048);
  if (path === '') return null;
  const event: HoneypotEvent = { id, method: request.method.toUpperCase(), path, ip };
  if (mark >= 0) event.query = clean(target.slice(mark + 1), 4096);
  if (request.ts !== undefined) event.ts = request.ts;
  event.ua = clean(request.ua ?? '', 2048);
  if (request.referer !== undefined && request.referer !== '') event.referer = clean(request.referer, 2048);
  if (request.ja4 !== undefined && JA4.test(request.ja4)) event.ja4 = request.ja4;
  if (request.headers !== undefined) {
    const kept: Record<string, string> = {};
    let any = false;
    for (const [name, value] of Object.entries(request.headers)) {
      if (!isRecordedHeader(name) || value === '') continue;
      kept[name] = clean(value, 4096);
      any = true;
    }
    if (any) event.headers = kept;
  }
  return event;
}

const MONTHS: Record<string, string> = { Jan: '01', Feb: '02', Mar: '03', Apr: '04', May: '05', Jun: '06', Jul: '07', Aug: '08', Sep: '09', Oct: '10', Nov: '11', Dec: '12' };

/** `10/Oct/2000:13:55:36 -0700` (nginx `$time_local`, Apache `%t`) as ISO 8601 UTC; null if it is not one. */
export function clfTime(text: string): string | null {
  const match = /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))? ([+-])(\d{2})(\d{2})$/.exec(text.trim());
  if (match === null) return null;
  const [, day, mon, year, hh, mm, ss, fraction, sign, oh, om] = match as unknown as string[];
  const month = MONTHS[mon as string];
  if (month === undefined) return null;
  const millis = fraction === undefined ? '' : `.${fraction.padEnd(3, '0').slice(0, 3)}`;
  return isoOf(Date.parse(`${year}-${month}-${day}T${hh}:${mm}:${ss}${millis}${sign}${oh}:${om}`));
}

/** An ISO 8601 time with an offset (`$time_iso8601`) as ISO 8601 UTC; null if it is not one. */
export function isoTime(text: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/.test(text.trim())) return null;
  return isoOf(Date.parse(text.trim()));
}

/** Seconds since the epoch, with a fraction (`$msec`, Caddy's `ts`), as ISO 8601 UTC. */
export function epochSecondsTime(seconds: number): string | null {
  return Number.isFinite(seconds) && seconds > 0 ? isoOf(Math.round(seconds * 1000)) : null;
}

const isoOf = (ms: number) => {
  if (!Number.isFinite(ms)) return null;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
};

/**
 * A logged quoted value unescaped: nginx writes `"`, `\` and bytes outside printable ASCII as
 * `\xHH` (UTF-8 bytes), Apache writes `\"`, `\\`, `\n`, `\t` and `\xhh`. A `-` alone is an empty
 * value in both.
 */
export function unescapeLogged(text: string): string {
  if (text === '-') return '';
  if (!text.includes('\\')) return text;
  const bytes: number[] = [];
  const push = (s: string) => bytes.push(...Buffer.from(s, 'utf8'));
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i] as string;
    if (char !== '\\' || i + 1 >= text.length) {
      push(char);
      continue;
    }
    const next = text[i + 1] as string;
    const hex = /^x([0-9A-Fa-f]{2})/.exec(text.slice(i + 1, i + 4));
    if (hex !== null) {
      bytes.push(Number.parseInt(hex[1] as string, 16));
      i += 3;
    } else if (next === 'n') {
      bytes.push(10);
      i += 1;
    } else if (next === 't') {
      bytes.push(9);
      i += 1;
    } else if (next === '"' || next === '\\') {
      push(next);
      i += 1;
    } else {
      push(char);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** `GET /path?q HTTP/1.1` → method and target; null for what is not a request line (`-`, TLS bytes). */
export function requestLine(text: string): { method: string; target: string } | null {
  const match = /^([A-Za-z]{1,16}) (\S+)(?: HTTP\/\d(?:\.\d)?)?$/.exec(text);
  return match === null ? null : { method: match[1] as string, target: match[2] as string };
}
