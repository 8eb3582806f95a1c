import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSecrets, configuredSecrets, describeFindings, type Finding, scanLines, scanSpool, type SpoolRecord } from './secret-scan.ts';

// The scanner of the "secrets never leak" check must find what it is there to find: if it missed
// these, every run would pass however much leaked.

const TOKEN = 'svctok_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3';
const TENANT_SECRET = 'whsec_Zy9xWv8uTs7rQp6oNm5lKj4iHg3fEd2cBa1ZyXwVuTs';
const AGENT_KEY = 'agk_Qw3eRt5yUi7oPa9sDf1gHj3kLz5xCv7b';
const HOOK = 'https://hooks.slack.test/services/T000/B000/XXXXSECRETPATH';

const line = (record: SpoolRecord) => JSON.stringify(record);
const ctx = (test: string) => line({ spool: 'ctx', file: 'src/x.test.ts', test });
const res = (method: string, url: string, body: unknown, headers: Record<string, unknown> = {}, status = 200) =>
  line({ spool: 'res', method, url, status, headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
const log = (fields: Record<string, unknown>) => JSON.stringify({ level: 30, time: 1, msg: 'x', ...fields });

const tokenCreate = res('POST', '/api/observatory/v1/tokens', { schema: 'svc-observatory-token-create.v1', token: TOKEN, prefix: TOKEN.slice(0, 13) });

function scan(lines: string[]): Finding[] {
  return scanLines(lines, 'spool.ndjson');
}

describe('secret scan', () => {
  it('exempts the response that reveals a token, and only in its field', () => {
    expect(scan([ctx('creates'), tokenCreate])).toEqual([]);
    const twice = res('POST', '/api/observatory/v1/tokens', { token: TOKEN, name: `copy of ${TOKEN}` });
    const findings = scan([ctx('creates'), twice]);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.kind).toBe('API token');
    expect(findings[0]!.where).toContain('response body of POST /api/observatory/v1/tokens');
  });

  it('finds a revealed token in a later log line, even one written before the reveal, naming the test', () => {
    const findings = scan([ctx('logs early'), log({ body: { token: TOKEN } }), ctx('creates'), tokenCreate, ctx('logs later'), log({ msg: `using ${TOKEN}` })]);
    expect(findings.map((f) => f.where.split(' (')[0])).toEqual(['log line in src/x.test.ts › logs early', 'log line in src/x.test.ts › logs later']);
    expect(findings[0]!.secretFrom).toContain('POST /api/observatory/v1/tokens');
    // The excerpt shows where, never the secret.
    for (const f of findings) expect(f.excerpt).not.toContain(TOKEN.slice(6));
    expect(describeFindings(findings)).not.toContain(TOKEN);
  });

  it('finds a revealed secret in any other response, a second reveal included', () => {
    const findings = scan([
      tokenCreate,
      res('GET', '/api/observatory/v1/tokens', { tokens: [{ prefix: TOKEN.slice(0, 13) }] }),
      res('GET', '/api/observatory/v1/tokens/1', { token: TOKEN }),
      tokenCreate,
    ]);
    expect(findings.map((f) => f.where.split(' in ')[0])).toEqual([
      'response body of GET /api/observatory/v1/tokens/1 (200)',
      'response body of POST /api/observatory/v1/tokens (200)',
    ]);
    expect(findings[1]!.where).toContain('revealed a second time');
  });

  it('treats a value the API publishes as its request example as public, and any other configured value as secret', () => {
    const configured = (value: string) => line({ spool: 'secret', kind: 'webhook secret', value, from: 'POST /api/observatory/v1/honeypot/alerts' });
    const example = 'whsec-example-0123456789abcdef';
    const manifest = res('GET', '/api/observatory/v1/manifest', { endpoints: [{ bodySchema: { examples: [{ destinations: [{ secret: example }] }] } }] });
    const listing = (value: string) => res('GET', '/api/observatory/v1/honeypot/alerts', { rules: [{ note: value }] });
    expect(scan([configured(example), manifest, listing(example)])).toEqual([]);
    const real = 'whsec-real-9f8e7d6c5b4a39281706';
    expect(scan([configured(real), manifest, listing(real)]).map((f) => f.kind)).toEqual(['webhook secret']);
  });

  it('finds a long enough part of a secret, not the listed prefix', () => {
    const findings = scan([tokenCreate, log({ hint: TOKEN.slice(0, 25) }), log({ prefix: TOKEN.slice(0, 13) })]);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.match).toBe('partial');
  });

  it('covers tenant secrets, agent keys and session cookies from their revealing responses', () => {
    const findings = scan([
      res('POST', '/api/observatory/v1/honeypot/tenants', { tenant: { slug: 'a' }, signingSecret: TENANT_SECRET }),
      res('POST', '/api/observatory/v1/agent-api/keys', { key: AGENT_KEY, prefix: AGENT_KEY.slice(0, 10) }),
      res('POST', '/api/observatory/v1/account/login/finish', { ok: true }, { 'set-cookie': 'obs_session=sessionsecretvalue123456; Path=/; HttpOnly' }),
      log({ err: { message: `bad signature for ${TENANT_SECRET}` } }),
      res('GET', '/api/observatory/v1/agent-api/keys', { keys: [{ id: 1, hint: AGENT_KEY }] }),
      res('GET', '/api/observatory/v1/account', { cookie: 'sessionsecretvalue123456' }),
    ]);
    expect(findings.map((f) => f.kind)).toEqual(['tenant signing secret', 'agent API key', 'session secret']);
  });

  it('a failed create reveals nothing, so what it shows is not exempt', () => {
    expect(scan([res('POST', '/api/observatory/v1/tokens', { token: TOKEN }, {}, 400)])).toEqual([]);
    const findings = scan([line({ spool: 'secret', kind: 'config adminToken', value: TOKEN, from: 'config' }), res('POST', '/api/observatory/v1/tokens', { token: TOKEN }, {}, 400)]);
    expect(findings).toHaveLength(1);
  });

  it('finds configured secrets (webhook URLs and secrets, the IP hash key) raw, JSON-escaped or percent-encoded', () => {
    const configured = configuredSecrets({ destinations: [{ kind: 'slack', url: HOOK }, { kind: 'webhook', url: 'https://example.test/', secret: 'webhook "secret" value' }] });
    expect(configured).toEqual([
      { kind: 'webhook URL', value: HOOK },
      { kind: 'webhook secret', value: 'webhook "secret" value' },
    ]);
    const secrets = [...configured, { kind: 'IP hash key', value: 'eHEGlu01UKzp0Df-PPH596TAbgmmpX_hvvUV3o0C95g' }].map((s) =>
      line({ spool: 'secret', ...s, from: 'test' }),
    );
    const findings = scan([
      ...secrets,
      log({ msg: `delivery to ${HOOK} failed` }),
      log({ secret: 'webhook "secret" value' }),
      res('GET', '/api/observatory/v1/honeypot/alerts', { destinations: [{ kind: 'slack', url: 'https://hooks.slack.test/…' }] }),
      res('GET', `/x?next=${encodeURIComponent(HOOK)}`, `<a href="/y?u=${encodeURIComponent(HOOK)}">`),
      log({ hashKey: 'eHEGlu01UKzp0Df-PPH596TAbgmmpX_hvvUV3o0C95g' }),
    ]);
    expect(findings.map((f) => `${f.kind} @ ${f.where.split(' in ')[0]}`)).toEqual([
      'webhook URL @ log line',
      'webhook secret @ log line',
      'webhook URL @ response body of GET /x?next=https%3A%2F%2Fhooks.slack.test%2Fservices%2FT000%2FB000%2FXXXXSECRETPATH (200)',
      'IP hash key @ log line',
    ]);
  });

  it('takes credentials from the config, not other strings', () => {
    const found = configSecrets({
      adminToken: TOKEN,
      publicUrl: 'http://localhost:8080',
      logLevel: 'silent',
      honeypot: { ipHashKey: 'k'.repeat(32), vendorsFile: null },
      integrations: { chatWebhookUrl: HOOK, ciDispatchToken: 'ci-token-value-1234', ciDispatchUrl: 'https://api.github.test/repos/a/b/dispatches' },
      bridgeToken: 'bridge-token-value-0123456789abcdefghij',
      bridgeTokenNext: 'bridge-token-staged-0123456789abcdefghij',
    });
    expect(found.map((s) => s.kind)).toEqual([
      'config adminToken',
      'config honeypot.ipHashKey',
      'config integrations.chatWebhookUrl',
      'config integrations.ciDispatchToken',
      'config bridgeToken',
      'config bridgeTokenNext',
    ]);
  });

  it('reads every spool file of a directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'secret-scan-test-'));
    try {
      writeFileSync(join(dir, '1-a.ndjson'), [ctx('one'), tokenCreate, log({ t: TOKEN })].join('\n'));
      writeFileSync(join(dir, '2-b.ndjson'), [ctx('two'), tokenCreate].join('\n'));
      writeFileSync(join(dir, 'ignored.txt'), TOKEN);
      const { findings, files } = scanSpool(dir);
      expect(files).toBe(2);
      expect(findings).toHaveLength(1);
      expect(findings[0]!.where).toContain('1-a.ndjson line 3');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
