import { clfTime, epochSecondsTime, isoTime, type LoggedRequest, requestLine, unescapeLogged } from './record.ts';

/** A line → the request it logs, or null when the line is not one. */
export type LineParser = (line: string) => LoggedRequest | null;

/** nginx's and Apache's "combined" format, as an nginx `log_format`. */
export const COMBINED = '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"';

/** The variables read as the TLS fingerprint when a format logs one (the first present wins). */
export const JA4_VARIABLES = ['ja4', 'ssl_ja4', 'http_ssl_ja4', 'ja4_fingerprint', 'http_x_ja4', 'http_ja4'] as const;

export interface LogFormatOptions {
  /** The variable holding the client's address (default `remote_addr`). */
  ipVariable?: string;
  /** Variables read as the JA4, in order (default JA4_VARIABLES). */
  ja4Variables?: readonly string[];
  /** Whether text after the format's end is allowed (servers' "combined plus extras" formats). */
  allowTrailing?: boolean;
}

type Token = { kind: 'literal'; text: string } | { kind: 'variable'; name: string };

/** Splits an nginx `log_format` string into literal text and `$name` / `${name}` variables. */
export function tokenizeLogFormat(format: string): Token[] {
  const tokens: Token[] = [];
  let literal = '';
  const pattern = /\$\{([A-Za-z0-9_]+)\}|\$([A-Za-z0-9_]+)/g;
  let last = 0;
  for (let match = pattern.exec(format); match !== null; match = pattern.exec(format)) {
    literal += format.slice(last, match.index);
    if (literal !== '') tokens.push({ kind: 'literal', text: literal });
    literal = '';
    tokens.push({ kind: 'variable', name: (match[1] ?? match[2] as string).toLowerCase() });
    last = match.index + match[0].length;
  }
  literal += format.slice(last);
  if (literal !== '') tokens.push({ kind: 'literal', text: literal });
  return tokens;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
const escapeClass = (char: string) => (/[\]\\^-]/.test(char) ? `\\${char}` : char);

/**
 * Compiles an nginx `log_format` string into a line parser. Each variable matches up to the
 * literal that follows it: inside double quotes, anything but an unescaped quote (Apache writes
 * `\"`, nginx `\x22`); elsewhere, anything but the literal's first character; two variables with
 * nothing between them split as late as the rest allows. Throws a message naming what is missing
 * when the format cannot give an event (no client address, no request).
 */
export function compileLogFormat(format: string, options: LogFormatOptions = {}): LineParser {
  const tokens = tokenizeLogFormat(format);
  const ipVariable = options.ipVariable ?? 'remote_addr';
  const ja4Variables = options.ja4Variables ?? JA4_VARIABLES;
  const names: string[] = [];
  let source = '^';
  tokens.forEach((token, i) => {
    if (token.kind === 'literal') {
      source += escapeRegExp(token.text);
      return;
    }
    names.push(token.name);
    const before = tokens[i - 1];
    const after = tokens[i + 1];
    const quoted = before?.kind === 'literal' && before.text.endsWith('"') && after?.kind === 'literal' && after.text.startsWith('"');
    if (quoted) source += '((?:[^"\\\\]|\\\\.)*)';
    else if (after === undefined) source += options.allowTrailing ? '(\\S*)' : '(.*)';
    else if (after.kind === 'variable') source += '(.*?)';
    else source += `([^${escapeClass(after.text[0] as string)}]*)`;
  });
  source += options.allowTrailing ? '(?:\\s.*)?$' : '$';
  const has = (name: string) => names.includes(name);
  if (!has(ipVariable)) throw new Error(`the log format has no $${ipVariable} (the client's address)`);
  if (!has('request') && !(has('request_method') && (has('request_uri') || has('uri')))) {
    throw new Error('the log format has no $request (nor $request_method with $request_uri or $uri)');
  }
  const matcher = new RegExp(source, 's');
  const ja4Present = ja4Variables.filter(has);

  return (line) => {
    const match = matcher.exec(line.endsWith('\r') ? line.slice(0, -1) : line);
    if (match === null) return null;
    const values = new Map<string, string>();
    names.forEach((name, i) => {
      if (!values.has(name)) values.set(name, unescapeLogged(match[i + 1] as string));
    });
    return requestOf(values, ipVariable, ja4Present);
  };
}

function requestOf(values: Map<string, string>, ipVariable: string, ja4Variables: readonly string[]): LoggedRequest | null {
  const ip = values.get(ipVariable) ?? '';
  let method: string;
  let target: string;
  const line = values.get('request');
  if (line !== undefined) {
    const parsed = requestLine(line);
    if (parsed === null) return null;
    ({ method, target } = parsed);
  } else {
    method = values.get('request_method') ?? '';
    const uri = values.get('request_uri');
    const args = values.get('args') ?? values.get('query_string') ?? '';
    target = uri ?? `${values.get('uri') ?? ''}${args === '' ? '' : `?${args}`}`;
  }
  if (ip === '' || method === '' || target === '') return null;
  const request: LoggedRequest = { ip, method, target };
  const ts = timeOf(values);
  if (ts !== undefined) request.ts = ts;
  const status = Number(values.get('status'));
  if (Number.isInteger(status) && status >= 100 && status <= 999) request.status = status;
  const ua = values.get('http_user_agent');
  if (ua !== undefined) request.ua = ua;
  const referer = values.get('http_referer');
  if (referer !== undefined && referer !== '') request.referer = referer;
  for (const name of ja4Variables) {
    const value = values.get(name);
    if (value !== undefined && value !== '') {
      request.ja4 = value;
      break;
    }
  }
  for (const [name, value] of values) {
    if (!name.startsWith('http_') || name === 'http_user_agent' || name === 'http_referer' || value === '') continue;
    request.headers ??= {};
    request.headers[name.slice(5).replace(/_/g, '-')] = value;
  }
  return request;
}

function timeOf(values: Map<string, string>): string | undefined {
  const local = values.get('time_local');
  if (local !== undefined) return clfTime(local) ?? undefined;
  const iso = values.get('time_iso8601');
  if (iso !== undefined) return isoTime(iso) ?? undefined;
  const msec = values.get('msec');
  if (msec !== undefined && /^\d+(?:\.\d+)?$/.test(msec)) return epochSecondsTime(Number(msec)) ?? undefined;
  return undefined;
}

const APACHE_DIRECTIVES: Record<string, string> = {
  h: '$remote_addr',
  a: '$remote_addr',
  l: '$remote_logname',
  u: '$remote_user',
  t: '[$time_local]',
  r: '$request',
  s: '$status',
  '>s': '$status',
  b: '$body_bytes_sent',
  B: '$body_bytes_sent',
  m: '$request_method',
  U: '$uri',
  D: '$request_time_us',
  T: '$request_time',
  v: '$server_name',
  V: '$server_name',
};

/**
 * An Apache `LogFormat` string as the equivalent nginx `log_format`: `%h`, `%t`, `%r`, `%>s`,
 * `%b`, `%{Name}i` (a request header: `$http_name`), `%{NAME}e` (an environment variable, where
 * an Apache JA4 module puts the fingerprint: `$name`) and the like; `\"` as `"`.
 */
export function apacheLogFormat(format: string): string {
  let out = '';
  let unknown = 0;
  const text = format.replace(/\\"/g, '"');
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i] as string;
    if (char !== '%') {
      out += char;
      continue;
    }
    const rest = text.slice(i + 1);
    const braced = /^(?:[<>])?\{([^}]+)\}([A-Za-z])/.exec(rest);
    if (braced !== null) {
      const name = (braced[1] as string).toLowerCase().replace(/-/g, '_');
      out += braced[2] === 'i' ? `$http_${name}` : braced[2] === 'e' ? `$${name}` : `$apache_${(unknown += 1)}`;
      i += braced[0].length;
      continue;
    }
    const plain = /^(>s|<s|[<>]?[A-Za-z%])/.exec(rest);
    if (plain === null) {
      out += char;
      continue;
    }
    const directive = (plain[1] as string).replace(/^</, '');
    out += directive === '%' ? '%' : APACHE_DIRECTIVES[directive] ?? `$apache_${(unknown += 1)}`;
    i += (plain[1] as string).length;
  }
  return out;
}
