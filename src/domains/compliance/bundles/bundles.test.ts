import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { type BundleAnswer, downloadBundle, evidenceLinkKey, getLink, sha256, signedLink } from '../../../../test/helpers/evidence.ts';
import { pdfText } from '../../../../test/helpers/pdf-text.ts';
import { createAuditLog } from '../../../platform/audit/service.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { loadConfig } from '../../../platform/config.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import { createFileStores } from '../../../platform/storage/files.ts';
import type { ComplianceReads, FrameworkView } from '../frameworks/views.ts';
import { evidencePath } from './endpoints.ts';
import { createBundleService } from './service.ts';

/**
 * Evidence bundles through the API, files in a directory (bundles.s3.test.ts: in a bucket): every
 * file downloaded through its signed link and re-hashed, the PDF read back by a parser, the links
 * tampered with, expired and guessed at.
 */

const clock = new ManualClock('2026-11-28T04:20:00.000Z');
const dir = mkdtempSync(join(tmpdir(), 'observatory-evidence-'));
const env = { OBSERVATORY_BACKUP_DIR: dir, OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0' };
let t: TestApp;
let bundle: BundleAnswer;
let files: Map<string, Buffer>;

const OUTCOME_LABEL: Record<string, string> = { pass: 'PASS', fail: 'FAIL', 'manual-review': 'MANUAL REVIEW', 'n/a': 'N/A' };

async function makeBundle(framework: string): Promise<BundleAnswer> {
  const res = await t.call({ method: 'POST', url: `${V1}/compliance/bundle`, payload: { framework } });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().schema).toBe('svc-compliance-bundle.v1');
  return res.json();
}

beforeAll(async () => {
  t = await startTestApp({ clock, env });
  // Outcomes to carry: the evaluation job (a run may end in error for an input not wired yet; the other controls are stored).
  await t.call({ method: 'POST', url: `${V1}/ops/jobs/compliance-evaluate/run` });
  bundle = await makeBundle('soc2');
  files = await downloadBundle(t, bundle);
}, 120_000);

afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a bundle', () => {
  it('names a JSON snapshot, a CSV and a PDF, each with its digest and a signed link under the public URL', async () => {
    expect(bundle).toMatchObject({ framework: 'soc2', createdAt: '2026-11-28T04:20:00.000Z', storage: 'local', expiredBundles: 0 });
    expect(bundle.artifacts.map((a) => [a.kind, a.name, a.contentType])).toEqual([
      ['json', 'soc2-snapshot.json', 'application/json'],
      ['csv', 'soc2-controls.csv', 'text/csv; charset=utf-8'],
      ['pdf', 'soc2-summary.pdf', 'application/pdf'],
    ]);
    for (const a of bundle.artifacts) {
      expect(a.url.startsWith(`http://localhost:8080${V1}/compliance/evidence/${bundle.bundleId}/${a.name}?expires=`), a.url).toBe(true);
      expect(a.expiresAt).toBe('2026-11-28T04:35:00.000Z');
    }
    expect(bundle.manifestUrl.startsWith(`http://localhost:8080${evidencePath(bundle.bundleId, 'manifest.txt')}?`)).toBe(true);
    expect(bundle.manifestText.split('\n').slice(0, 4)).toEqual([
      '# Observatory compliance evidence bundle',
      '# framework: soc2',
      `# bundle: ${bundle.bundleId}`,
      '# createdAt: 2026-11-28T04:20:00.000Z',
    ]);
  });

  it('holds the framework as the framework read shows it, control by control', async () => {
    const framework = (await t.call({ method: 'GET', url: `${V1}/compliance/frameworks/soc2` })).json() as FrameworkView;
    const snapshot = JSON.parse(files.get('soc2-snapshot.json')!.toString('utf8'));
    expect(snapshot).toMatchObject({ schema: 'observatory-compliance-snapshot.v1', bundleId: bundle.bundleId, generatedAt: bundle.createdAt, framework: { framework: 'soc2', title: framework.title } });
    expect(bundle.controlCount).toBe(framework.controls.length);
    expect(snapshot.controls).toHaveLength(framework.controls.length);
    for (const [i, control] of framework.controls.entries()) {
      expect(snapshot.controls[i]).toMatchObject({
        id: control.id,
        latestOutcome: control.latestOutcome,
        latestSummary: control.latestSummary,
        latestEvaluationId: control.latestEvaluationId,
        latestEvaluatedBy: control.latestEvaluatedBy,
        latestEvidenceUrl: control.latestEvidenceUrl,
      });
    }
    // The evaluation ran: outcomes are there to carry.
    expect(framework.controls.filter((c) => c.latestOutcome !== null).length).toBeGreaterThan(5);
    const posture = (await t.call({ method: 'GET', url: `${V1}/compliance/posture` })).json().frameworks.find((p: { framework: string }) => p.framework === 'soc2');
    expect(snapshot.posture).toEqual(posture);

    const csv = files.get('soc2-controls.csv')!.toString('utf8');
    const lines = csv.split('\r\n');
    expect(lines[0]!.startsWith('id,controlId,category,title,severity,predicateKey,latestOutcome,')).toBe(true);
    expect(lines.at(-1)).toBe('');
    for (const control of framework.controls) expect(csv).toContain(`${control.id},${control.controlId},`);
  });

  it('has a PDF that a parser opens and reads the framework, the posture and the controls with their outcomes from', async () => {
    const framework = (await t.call({ method: 'GET', url: `${V1}/compliance/frameworks/soc2` })).json() as FrameworkView;
    const { pages, info } = await pdfText(files.get('soc2-summary.pdf')!);
    const text = pages.join('\n').replace(/\s+/g, ' ');
    expect(text).toContain(framework.title);
    expect(text).toContain(`Evidence bundle ${bundle.bundleId}`);
    expect(text).toMatch(/Badge: (green|yellow|red|manual-review|unknown)/);
    for (const control of framework.controls) {
      expect(text).toContain(`${control.controlId} ${control.title}: ${control.latestOutcome === null ? 'NOT EVALUATED' : OUTCOME_LABEL[control.latestOutcome]}`);
    }
    expect(info.Title).toBe(`${framework.title}: evidence summary`);
  });

  it('keeps its files under compliance-evidence/<bundleId>/ in the backup directory, for the service user only', () => {
    const folder = join(dir, 'compliance-evidence', bundle.bundleId);
    expect(readdirSync(folder).sort()).toEqual(['manifest.txt', 'soc2-controls.csv', 'soc2-snapshot.json', 'soc2-summary.pdf']);
  });

  it('is audited as compliance.bundle with the manifest digest', async () => {
    const rows = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit`, query: { limit: '10', verb: 'compliance.bundle' } })).json().rows;
    const row = rows.find((r: { target: string }) => r.target === bundle.bundleId);
    expect(row).toMatchObject({ verb: 'compliance.bundle', actor: 'admin', surface: 'api', after: { framework: 'soc2', storage: 'local', manifestSha256: bundle.manifestSha256 } });
    expect(row.after.files.map((f: { name: string }) => f.name)).toEqual([...bundle.artifacts.map((a) => a.name), 'manifest.txt']);
  });

  it('is made of iso27001 too, with its own names', async () => {
    const iso = await makeBundle('iso27001');
    expect(iso.artifacts.map((a) => a.name)).toEqual(['iso27001-snapshot.json', 'iso27001-controls.csv', 'iso27001-summary.pdf']);
    const got = await downloadBundle(t, iso);
    expect((await pdfText(got.get('iso27001-summary.pdf')!)).pages.join(' ')).toContain('ISO/IEC 27001');
  });
});

describe('the bundle call', () => {
  it('answers 404 for an unknown framework and stores nothing', async () => {
    const before = readdirSync(join(dir, 'compliance-evidence')).length;
    const res = await t.call({ method: 'POST', url: `${V1}/compliance/bundle`, payload: { framework: 'pci-dss' } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
    expect(readdirSync(join(dir, 'compliance-evidence')).length).toBe(before);
  });

  it('answers 400 without a framework, 401 without a credential, 403 without read:empire and to a token bound to toolsets', async () => {
    expect((await t.call({ method: 'POST', url: `${V1}/compliance/bundle`, payload: {} })).json()).toMatchObject({ reason: 'invalid-body', field: 'body.framework' });
    const anonymous = await t.call({ method: 'POST', url: `${V1}/compliance/bundle`, payload: { framework: 'soc2' }, token: null });
    expect(anonymous.statusCode).toBe(401);
    const narrow = await t.tokenWith(['read:dashboard', 'write:alerts']);
    const unscoped = await t.call({ method: 'POST', url: `${V1}/compliance/bundle`, payload: { framework: 'soc2' }, token: narrow });
    expect(unscoped.statusCode).toBe(403);
    expect(unscoped.json().human).toContain('read:empire');
    const created = await t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name: 'bound', scopes: ['read:empire'], toolsets: ['crawler-lab'] } });
    const bound = await t.call({ method: 'POST', url: `${V1}/compliance/bundle`, payload: { framework: 'soc2' }, token: created.json().token });
    expect(bound.statusCode).toBe(403);
    expect(bound.json().human).toMatch(/^This token is bound to toolsets; .+ spans every toolset\.$/);
  });
});

describe('a download link', () => {
  const pdf = () => bundle.artifacts.find((a) => a.kind === 'pdf')!;
  const parts = (url: string) => {
    const parsed = new URL(url);
    return { path: parsed.pathname, expires: parsed.searchParams.get('expires')!, signature: parsed.searchParams.get('signature')! };
  };
  const refused = async (url: string, reason: string) => {
    const res = await t.call({ method: 'GET', url, token: null });
    expect(res.statusCode, url).toBe(401);
    expect(res.json(), url).toMatchObject({ schema: 'svc-error.v1', reason });
    expect(res.headers['content-disposition']).toBeUndefined();
  };

  it('is refused when its signature, path or expiry is changed, or a part is missing', async () => {
    const { path, expires, signature } = parts(pdf().url);
    const other = signature.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    await refused(`${path}?expires=${expires}&signature=${other}`, 'bad-signature');
    await refused(`${path}?expires=${expires}&signature=${signature.slice(0, 63)}`, 'bad-signature');
    // Another file of the same bundle, the same file of another bundle.
    await refused(`${path.replace('soc2-summary.pdf', 'soc2-snapshot.json')}?expires=${expires}&signature=${signature}`, 'bad-signature');
    const second = await makeBundle('soc2');
    await refused(`${path.replace(bundle.bundleId, second.bundleId)}?expires=${expires}&signature=${signature}`, 'bad-signature');
    await refused(`${path}?expires=${Number(expires) + 3600}&signature=${signature}`, 'bad-signature');
    await refused(`${path}?expires=${Number(expires) - 1}&signature=${signature}`, 'bad-signature');
    await refused(`${path}?expires=${expires}`, 'bad-signature');
    await refused(`${path}?signature=${signature}`, 'bad-signature');
    await refused(path, 'bad-signature');
    // A bearer token does not stand in for the signature.
    const withToken = await t.call({ method: 'GET', url: path, token: ADMIN_TOKEN });
    expect(withToken.statusCode).toBe(401);
    // The real link still works.
    expect((await getLink(t, pdf().url)).statusCode).toBe(200);
  });

  it('works on another instance on the same database, and after a restart: the key is the deployment\'s', async () => {
    const other = await t.secondInstance(env);
    const { pathname, search } = new URL(pdf().url);
    const res = await other.server.inject({ method: 'GET', url: `${pathname}${search}` });
    expect(res.statusCode).toBe(200);
    expect(sha256(res.rawPayload)).toBe(pdf().sha256);
    // A link the test signs with the key derived as documented is accepted too.
    const key = await evidenceLinkKey(t);
    const expires = Math.floor(clock.now().getTime() / 1000) + 60;
    expect((await t.call({ method: 'GET', url: signedLink(key, evidencePath(bundle.bundleId, 'soc2-controls.csv'), expires), token: null })).statusCode).toBe(200);
  });

  it('answers 404 to a good signature for a file or bundle that does not exist', async () => {
    const key = await evidenceLinkKey(t);
    const expires = Math.floor(clock.now().getTime() / 1000) + 60;
    for (const path of [evidencePath(bundle.bundleId, 'soc2-other.pdf'), evidencePath('0f0e0d0c-0b0a-4909-8807-060504030201', 'soc2-summary.pdf')]) {
      const res = await t.call({ method: 'GET', url: signedLink(key, path, expires), token: null });
      expect(res.statusCode, path).toBe(404);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
    }
  });

  it('refuses a file changed in storage rather than serve it', async () => {
    const iso = await makeBundle('iso27001');
    const csv = iso.artifacts.find((a) => a.kind === 'csv')!;
    writeFileSync(join(dir, 'compliance-evidence', iso.bundleId, csv.name), 'id,controlId\r\nforged,row\r\n');
    const res = await getLink(t, csv.url);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'evidence-altered' });
    expect(res.json().human).toContain(csv.sha256);
    rmSync(join(dir, 'compliance-evidence', iso.bundleId, csv.name));
    expect((await getLink(t, csv.url)).json()).toMatchObject({ reason: 'not-found' });
  });

  it('is good up to its expiry second and refused after it', async () => {
    const fresh = await makeBundle('soc2');
    const link = fresh.artifacts[0]!.url;
    clock.advance(15 * 60_000);
    expect((await getLink(t, link)).statusCode).toBe(200);
    clock.advance(1000);
    const res = await getLink(t, link);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'expired-url' });
  });

  it('counts refused links toward the failed-authentication limit of the address', async () => {
    const limited = await t.secondInstance({ ...env, OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '3' });
    const good = await makeBundle('soc2');
    const { path, expires } = parts(good.artifacts[0]!.url);
    const { search } = new URL(good.artifacts[0]!.url);
    for (let i = 0; i < 3; i++) {
      const res = await limited.server.inject({ method: 'GET', url: `${path}?expires=${expires}&signature=${'0'.repeat(64)}` });
      expect(res.statusCode).toBe(401);
    }
    const blocked = await limited.server.inject({ method: 'GET', url: `${path}${search}` });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'rate-limited' });
    // Another address is not blocked.
    expect((await limited.server.inject({ method: 'GET', url: `${path}${search}`, remoteAddress: '127.0.0.9' })).statusCode).toBe(200);
  });
});

describe('keeping bundles', () => {
  it('deletes bundles older than 30 days, files and record, when the next is made; backup retention leaves evidence alone', async () => {
    const old = await makeBundle('soc2');
    const oldFolder = join(dir, 'compliance-evidence', old.bundleId);
    expect(existsSync(oldFolder)).toBe(true);
    // A backup snapshot, expired by the backup job 15 days on (retention 14 days by default): evidence files stay.
    const snapshot = await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {} });
    expect(snapshot.statusCode, snapshot.body).toBe(200);
    clock.advance(15 * 24 * 3600_000);
    const job = await t.call({ method: 'POST', url: `${V1}/ops/jobs/backup-snapshot/run` });
    expect(job.json().run.stats).toMatchObject({ expired: 1 });
    expect(readdirSync(oldFolder).sort()).toEqual(['manifest.txt', 'soc2-controls.csv', 'soc2-snapshot.json', 'soc2-summary.pdf']);

    clock.advance(16 * 24 * 3600_000);
    const next = await makeBundle('soc2');
    expect(next.expiredBundles).toBeGreaterThanOrEqual(1);
    expect(existsSync(oldFolder)).toBe(false);
    expect(existsSync(join(dir, 'compliance-evidence', next.bundleId))).toBe(true);
    const key = await evidenceLinkKey(t);
    const res = await t.call({ method: 'GET', url: signedLink(key, evidencePath(old.bundleId, 'manifest.txt'), Math.floor(clock.now().getTime() / 1000) + 60), token: null });
    expect(res.statusCode).toBe(404);
    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit`, query: { limit: '50', verb: 'compliance.bundle-expire' } })).json().rows;
    expect(audit.map((r: { target: string }) => r.target)).toContain(old.bundleId);
  }, 120_000);

  it('keeps at most the newest `max` bundles', async () => {
    const view: FrameworkView = { framework: 'lab', title: 'Lab framework', version: '1', status: 'active', controls: [] };
    const reads: ComplianceReads = { framework: async () => view, posture: async () => [], outcomesInForce: async () => [] };
    const keepDir = mkdtempSync(join(tmpdir(), 'observatory-evidence-keep-'));
    const principal: Principal = { userId: 'u-1', username: 'keeper', scopes: new Set(['read:empire']), toolsets: null, via: 'bearer', tokenId: null, sessionId: null };
    try {
      const service = createBundleService({
        db: t.app.database.db,
        clock,
        audit: createAuditLog({ clock }),
        reads,
        files: createFileStores(loadConfig({ OBSERVATORY_BACKUP_DIR: keepDir }).backups, pino({ level: 'silent' })),
        link: (bundleId, name) => ({ url: `http://test/${bundleId}/${name}`, expiresAt: clock.now() }),
        keep: { days: 30, max: 2 },
      });
      // The other tests' bundles count too: the newest two of all are kept, so the third call deletes the first.
      const made = [];
      for (let i = 0; i < 3; i++) {
        clock.advance(1000);
        made.push(await service.create('lab', { principal, requestId: `keep-${i}` }));
      }
      expect(made[2]!.expiredBundles).toBe(1);
      expect(readdirSync(join(keepDir, 'compliance-evidence')).sort()).toEqual([made[1]!.bundleId, made[2]!.bundleId].sort());
      await expect(service.file(made[0]!.bundleId, 'manifest.txt')).rejects.toMatchObject({ status: 404 });
      expect((await service.file(made[2]!.bundleId, 'manifest.txt')).bytes.toString('utf8')).toBe(made[2]!.manifestText);
    } finally {
      rmSync(keepDir, { recursive: true, force: true });
    }
  });
});
