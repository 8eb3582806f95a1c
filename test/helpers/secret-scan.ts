import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The "secrets never leak" check (issue 14): while the suite runs, every test app writes its log
 * lines and every response it sends to a spool (test/helpers/spool.ts); at the end of the run this
 * module reads the spool back and looks for every secret the run created or configured. A secret
 * may be seen in exactly one place, the one response whose purpose is to reveal it (the field that
 * carries it); anywhere else, in any log line or any other response, is a leak.
 *
 * Spool files are lines of three sorts: pino's own JSON log lines, as the production logger wrote
 * them, and this module's records, whose first key is `spool`:
 *   {"spool":"ctx", file, test}                      the test file and test that lines below belong to
 *   {"spool":"res", method, url, status, headers, body}   one response as sent
 *   {"spool":"secret", kind, value, from}            a secret that no response reveals (config, request bodies)
 */

export type SpoolRecord =
  | { spool: 'ctx'; file: string; test: string }
  | { spool: 'res'; method: string; url: string; status: number; headers: Record<string, unknown>; body: string }
  | { spool: 'secret'; kind: string; value: string; from: string };

export interface Secret {
  kind: string;
  value: string;
  /** Where the run learnt it: the revealing response, the config, a request body. */
  from: string;
}

export interface Finding {
  kind: string;
  /** `full` when the whole secret was seen, `partial` when a long enough start of it was. */
  match: 'full' | 'partial';
  secretFrom: string;
  /** `log line` or `response to GET /…`, with the spool file, test file and test. */
  where: string;
  /** The text around the hit with the secret itself masked. */
  excerpt: string;
}

interface Reveal {
  kind: string;
  method: string;
  path: RegExp;
  /** The top-level field of the JSON body that carries the secret. */
  field: string;
}

/** The responses whose job is to show a secret once (spec A, B, D). */
const REVEALS: readonly Reveal[] = [
  { kind: 'API token', method: 'POST', path: /\/tokens$/, field: 'token' },
  { kind: 'agent API key', method: 'POST', path: /\/agent-api\/keys$/, field: 'key' },
  { kind: 'tenant signing secret', method: 'POST', path: /\/honeypot\/tenants$/, field: 'signingSecret' },
  { kind: 'tenant signing secret', method: 'POST', path: /\/honeypot\/tenants\/[^/]+\/rotate-secret$/, field: 'signingSecret' },
];

const SESSION_COOKIE = /(?:^|[;,]\s*)obs_session=([^;,\s]+)/;

/** Shapes of the service's own secrets: a run of these is looked up, not searched for secret by secret. */
const PREFIXED = /(?:svctok_|whsec_|agk_)[A-Za-z0-9_-]{12,}/g;
const PREFIXES = ['svctok_', 'whsec_', 'agk_'];
/** Random characters after the prefix that make a partial leak: the listed `prefix` fields show 6. */
const PARTIAL_RANDOM_CHARS = 12;

/** Secrets shorter than this are not searched for: they would match by chance. */
const MIN_SECRET_LENGTH = 12;

/** What a response reveals on purpose: the secret and the field (or header) that carries it. */
export function revealedSecrets(res: Extract<SpoolRecord, { spool: 'res' }>): { kind: string; value: string; field: string }[] {
  const out: { kind: string; value: string; field: string }[] = [];
  if (res.status >= 200 && res.status < 300) {
    const path = res.url.split('?')[0] ?? '';
    const reveal = REVEALS.find((r) => r.method === res.method && r.path.test(path));
    if (reveal) {
      const value = jsonField(res.body, reveal.field);
      if (typeof value === 'string' && value !== '') out.push({ kind: reveal.kind, value, field: reveal.field });
    }
  }
  for (const header of [res.headers['set-cookie']].flat()) {
    const session = typeof header === 'string' ? SESSION_COOKIE.exec(header)?.[1] : undefined;
    if (session) out.push({ kind: 'session secret', value: session, field: 'set-cookie' });
  }
  return out;
}

/**
 * Secrets a request body configures: outbound destinations' URLs (whose path is itself a
 * credential for chat webhooks) and webhook signing secrets, and the chat webhook test's URL.
 * Listings show only a URL's origin, so a URL without a path beyond `/` reveals nothing.
 */
export function configuredSecrets(body: unknown): { kind: string; value: string }[] {
  const out: { kind: string; value: string }[] = [];
  const visit = (node: unknown, depth: number): void => {
    if (depth > 8 || node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, depth + 1);
      return;
    }
    const record = node as Record<string, unknown>;
    const outboundKind = record.kind === 'slack' || record.kind === 'webhook';
    if ((outboundKind && typeof record.url === 'string') || typeof record.webhookUrl === 'string') {
      const url = (outboundKind ? record.url : record.webhookUrl) as string;
      if (hasCredentialPath(url)) out.push({ kind: 'webhook URL', value: url });
    }
    if (record.kind === 'webhook' && typeof record.secret === 'string') out.push({ kind: 'webhook secret', value: record.secret });
    for (const value of Object.values(record)) visit(value, depth + 1);
  };
  visit(body, 0);
  return out;
}

/** Config values that are credentials: every `…Token`, `…Secret`, `…Key` string (and a staged `…TokenNext`), and the chat webhook URL. */
export function configSecrets(config: unknown): { kind: string; value: string }[] {
  const out: { kind: string; value: string }[] = [];
  const visit = (node: unknown, path: string): void => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      const name = path === '' ? key : `${path}.${key}`;
      if (typeof value === 'string' && /(token|secret|apikey|hashkey)(next)?$/i.test(key)) out.push({ kind: `config ${name}`, value });
      else if (typeof value === 'string' && /webhookurl$/i.test(key) && hasCredentialPath(value)) out.push({ kind: `config ${name}`, value });
      else visit(value, name);
    }
  };
  visit(config, '');
  return out;
}

function hasCredentialPath(url: string): boolean {
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`.length > 1;
  } catch {
    return false;
  }
}

function jsonField(body: string, field: string): unknown {
  try {
    const parsed: unknown = JSON.parse(body);
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>)[field] : undefined;
  } catch {
    return undefined;
  }
}

/** The secrets of one spool file, looked up by shape (prefixed ones) or searched for (the rest). */
class SecretIndex {
  private readonly byStart = new Map<string, Secret>();
  private readonly searched: { secret: Secret; forms: string[] }[] = [];
  private readonly seen = new Set<string>();

  add(secret: Secret): void {
    if (secret.value.length < MIN_SECRET_LENGTH || this.seen.has(secret.value)) return;
    this.seen.add(secret.value);
    const prefix = PREFIXES.find((p) => secret.value.startsWith(p));
    if (prefix && /^[A-Za-z0-9_-]+$/.test(secret.value) && secret.value.length >= prefix.length + PARTIAL_RANDOM_CHARS) {
      this.byStart.set(secret.value.slice(0, prefix.length + PARTIAL_RANDOM_CHARS), secret);
      return;
    }
    // As written raw, inside a JSON string, and percent-encoded in a URL.
    const forms = new Set([secret.value, JSON.stringify(secret.value).slice(1, -1), encodeURIComponent(secret.value)]);
    this.searched.push({ secret, forms: [...forms] });
  }

  has(value: string): boolean {
    return this.seen.has(value);
  }

  /** Every secret in `text`, with where it starts and how long the seen part is. */
  find(text: string): { secret: Secret; at: number; length: number; match: 'full' | 'partial' }[] {
    const hits: { secret: Secret; at: number; length: number; match: 'full' | 'partial' }[] = [];
    if (this.byStart.size > 0) {
      for (const m of text.matchAll(PREFIXED)) {
        const run = m[0];
        const prefix = PREFIXES.find((p) => run.startsWith(p)) ?? '';
        if (run.length < prefix.length + PARTIAL_RANDOM_CHARS) continue;
        const secret = this.byStart.get(run.slice(0, prefix.length + PARTIAL_RANDOM_CHARS));
        if (!secret) continue;
        const full = run.startsWith(secret.value);
        hits.push({ secret, at: m.index, length: full ? secret.value.length : commonPrefix(run, secret.value), match: full ? 'full' : 'partial' });
      }
    }
    for (const { secret, forms } of this.searched) {
      for (const form of forms) {
        const at = text.indexOf(form);
        if (at !== -1) {
          hits.push({ secret, at, length: form.length, match: 'full' });
          break;
        }
      }
    }
    return hits;
  }
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** The text around a hit, the secret masked but for its first characters, on one line. */
export function excerpt(text: string, at: number, length: number): string {
  const before = text.slice(Math.max(0, at - 60), at);
  const after = text.slice(at + length, at + length + 60);
  const shown = text.slice(at, at + Math.min(6, length));
  return `…${before}${shown}[…${length - shown.length} chars masked]${after}…`.replace(/\s+/g, ' ');
}

function parseRecord(line: string): SpoolRecord | null {
  if (!line.startsWith('{"spool":')) return null;
  return JSON.parse(line) as SpoolRecord;
}

/** Scans one spool file's lines: every secret they name against every log line and response. */
export function scanLines(lines: readonly string[], fileLabel: string, sharedSecrets: readonly Secret[] = []): Finding[] {
  const index = new SecretIndex();
  for (const secret of sharedSecrets) index.add(secret);
  /** The response (line number) that reveals each secret on purpose, and by which field. */
  const revealedAt = new Map<number, { value: string; field: string }[]>();
  const extraReveals = new Set<number>();
  let ctx = { file: '?', test: '?' };
  const ctxAt: { file: string; test: string }[] = [];

  // The request examples in the manifest and the OpenAPI document are public by design: a value a
  // test sends because it is the documented example (the example webhook's URL and secret) is not
  // a secret, wherever it shows up later.
  const published = lines
    .map(parseRecord)
    .filter((r): r is Extract<SpoolRecord, { spool: 'res' }> => r?.spool === 'res' && /\/(manifest|openapi\.json)(\?|$)/.test(r.url))
    .map((r) => r.body)
    .join('\n');
  lines.forEach((line, n) => {
    const record = parseRecord(line);
    if (record?.spool === 'ctx') ctx = { file: record.file, test: record.test };
    ctxAt[n] = ctx;
    if (record?.spool === 'secret' && !published.includes(record.value)) index.add({ kind: record.kind, value: record.value, from: record.from });
    if (record?.spool === 'res') {
      for (const reveal of revealedSecrets(record)) {
        if (index.has(reveal.value)) {
          // Shown a second time by a revealing response: that second showing is a leak.
          extraReveals.add(n);
          continue;
        }
        index.add({ kind: reveal.kind, value: reveal.value, from: `${record.method} ${record.url} (${ctx.file} › ${ctx.test})` });
        revealedAt.set(n, [...(revealedAt.get(n) ?? []), reveal]);
      }
    }
  });

  const findings: Finding[] = [];
  lines.forEach((line, n) => {
    if (line === '') return;
    const record = parseRecord(line);
    if (record !== null && record.spool !== 'res') return;
    const place = ctxAt[n] ?? { file: '?', test: '?' };
    const texts: { what: string; text: string }[] = [];
    if (record === null) {
      texts.push({ what: 'log line', text: line });
    } else {
      const exempt = revealedAt.get(n) ?? [];
      texts.push({ what: `response body of ${record.method} ${record.url} (${record.status})`, text: withoutFields(record.body, exempt) });
      texts.push({ what: `response headers of ${record.method} ${record.url} (${record.status})`, text: headersText(record.headers, exempt) });
    }
    for (const { what, text } of texts) {
      for (const hit of index.find(text)) {
        findings.push({
          kind: hit.secret.kind,
          match: hit.match,
          secretFrom: hit.secret.from,
          where: `${what} in ${place.file} › ${place.test} (${fileLabel} line ${n + 1})${extraReveals.has(n) ? ', revealed a second time' : ''}`,
          excerpt: excerpt(text, hit.at, hit.length),
        });
      }
    }
  });
  return findings;
}

/** The body with the revealing fields taken out (each secret is exempt only in its own field). */
function withoutFields(body: string, exempt: { field: string }[]): string {
  const fields = exempt.filter((e) => e.field !== 'set-cookie').map((e) => e.field);
  if (fields.length === 0) return body;
  const parsed = JSON.parse(body) as Record<string, unknown>;
  for (const field of fields) parsed[field] = '[revealed here]';
  return JSON.stringify(parsed);
}

function headersText(headers: Record<string, unknown>, exempt: { field: string; value: string }[]): string {
  const copy: Record<string, unknown> = { ...headers };
  const session = exempt.find((e) => e.field === 'set-cookie');
  if (session) copy['set-cookie'] = JSON.parse(JSON.stringify(copy['set-cookie']).split(session.value).join('[revealed here]')) as unknown;
  return JSON.stringify(copy);
}

/** Scans every spool file in `dir`. */
export function scanSpool(dir: string, sharedSecrets: readonly Secret[] = []): { findings: Finding[]; files: number; bytes: number } {
  const findings: Finding[] = [];
  let files = 0;
  let bytes = 0;
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.ndjson')).sort()) {
    const text = readFileSync(join(dir, name), 'utf8');
    files++;
    bytes += text.length;
    findings.push(...scanLines(text.split('\n'), name, sharedSecrets));
  }
  return { findings, files, bytes };
}

/** The failure message: one paragraph per finding, at most `limit` of them. */
export function describeFindings(findings: readonly Finding[], limit = 20): string {
  const shown = findings.slice(0, limit).map(
    (f) => `- ${f.match === 'partial' ? 'part of ' : ''}${f.kind} (from ${f.secretFrom})\n  found in ${f.where}\n  ${f.excerpt}`,
  );
  const more = findings.length > limit ? `\n…and ${findings.length - limit} more` : '';
  return `${findings.length} secret leak(s) found in responses or log lines:\n${shown.join('\n')}${more}`;
}
