import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pdfText } from '../../../../test/helpers/pdf-text.ts';
import type { ControlView, FrameworkView, PostureView } from '../frameworks/views.ts';
import { artifactName, controlsCsv, csvCell, manifestText, parseManifest, snapshotJson } from './artifacts.ts';
import { drawable, summaryPdf } from './pdf.ts';

const meta = { bundleId: '3f1d2c4b-5a69-4e7f-8a9b-0c1d2e3f4a5b', createdAt: new Date('2026-11-24T09:30:00.000Z') };

function control(controlId: string, patch: Partial<ControlView> = {}): ControlView {
  return {
    id: `soc2/${controlId}`,
    controlId,
    category: 'Logical and Physical Access Controls',
    title: `Title of ${controlId}`,
    description: `What ${controlId} asks.`,
    predicateKey: 'audit-chain-verifies',
    severity: 'major',
    latestOutcome: 'pass',
    latestRunAt: '2026-11-24T09:00:00.000Z',
    latestSummary: `${controlId} holds.`,
    latestEvaluationId: '9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a',
    latestEvaluatedBy: 'job',
    latestEvidenceUrl: 'http://localhost:8080/api/observatory/v1/audit/chain/verify',
    ...patch,
  };
}

const view: FrameworkView = {
  framework: 'soc2',
  title: 'SOC 2 Trust Services Criteria (subset)',
  version: 'TSC 2017',
  status: 'active',
  controls: [
    control('CC6.1'),
    control('CC7.2', { latestOutcome: 'fail', latestSummary: '=HYPERLINK("http://evil.example","click"), then "quoted", and a\nsecond line' }),
    control('A1.2', { latestOutcome: null, latestRunAt: null, latestSummary: null, latestEvaluationId: null, latestEvaluatedBy: null, latestEvidenceUrl: null }),
    control('CC8.1', { latestOutcome: 'manual-review', latestEvaluatedBy: 'operator:u-1', title: 'Change management ≥ policy — reviewed' }),
  ],
};

const posture: PostureView = {
  framework: 'soc2',
  title: view.title,
  version: view.version,
  totalControls: 4,
  passing: 1,
  failing: 1,
  manualReview: 1,
  nA: 0,
  asOf: '2026-11-24T09:00:00.000Z',
  badge: 'red',
  ratePct: 25,
};

describe('the JSON snapshot', () => {
  it('holds the framework, its posture and every control with its latest outcome, the same bytes each time', () => {
    const bytes = snapshotJson(view, posture, meta);
    const doc = JSON.parse(bytes.toString('utf8'));
    expect(doc).toMatchObject({ schema: 'observatory-compliance-snapshot.v1', bundleId: meta.bundleId, generatedAt: '2026-11-24T09:30:00.000Z', posture });
    expect(doc.framework).toEqual({ framework: 'soc2', title: view.title, version: 'TSC 2017', status: 'active' });
    expect(doc.controls.map((c: ControlView) => [c.id, c.latestOutcome, c.latestEvaluationId, c.latestEvaluatedBy])).toEqual([
      ['soc2/CC6.1', 'pass', '9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a', 'job'],
      ['soc2/CC7.2', 'fail', '9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a', 'job'],
      ['soc2/A1.2', null, null, null],
      ['soc2/CC8.1', 'manual-review', '9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a', 'operator:u-1'],
    ]);
    expect(doc.controls[0].latestEvidenceUrl).toBe('http://localhost:8080/api/observatory/v1/audit/chain/verify');
    expect(snapshotJson(view, posture, meta).equals(bytes)).toBe(true);
    expect(bytes.toString('utf8').endsWith('}\n')).toBe(true);
  });
});

describe('the CSV of controls', () => {
  it('quotes per RFC 4180 and defuses formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell(null)).toBe('');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    for (const lead of ['=', '+', '-', '@', '\t', '\r']) expect(csvCell(`${lead}1+1`).startsWith(lead === '\r' ? `"'` : `'`), JSON.stringify(lead)).toBe(true);
    expect(csvCell('=SUM(A1:A2),x')).toBe(`"'=SUM(A1:A2),x"`);
    expect(csvCell('a=b')).toBe('a=b');
  });

  it('has a header and one CRLF-ended row per control that a CSV reader splits back into the same cells', () => {
    const text = controlsCsv(view).toString('utf8');
    expect(text.endsWith('\r\n')).toBe(true);
    const rows = parseCsv(text);
    expect(rows[0]).toEqual(['id', 'controlId', 'category', 'title', 'severity', 'predicateKey', 'latestOutcome', 'latestRunAt', 'latestEvaluatedBy', 'latestEvaluationId', 'latestSummary', 'latestEvidenceUrl', 'description']);
    expect(rows).toHaveLength(5);
    expect(rows.map((r) => r[1])).toEqual(['controlId', 'CC6.1', 'CC7.2', 'A1.2', 'CC8.1']);
    expect(rows[2]![10]).toBe(`'=HYPERLINK("http://evil.example","click"), then "quoted", and a\nsecond line`);
    expect(rows[3]!.slice(6, 11)).toEqual(['', '', '', '', '']);
    expect(rows.every((r) => r.length === 13)).toBe(true);
  });
});

/** A small RFC 4180 reader, independent of the writer. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(cell), (cell = '');
    else if (ch === '\r' && text[i + 1] === '\n') row.push(cell), rows.push(row), (row = []), (cell = ''), i++;
    else cell += ch;
  }
  return rows;
}

describe('the manifest', () => {
  it('lists each file as sha256, name and size under the bundle lines, and reads back', () => {
    const files = [snapshotJson(view, posture, meta), controlsCsv(view)].map((bytes, i) => ({
      name: artifactName('soc2', i === 0 ? 'json' : 'csv'),
      bytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    }));
    const text = manifestText('soc2', meta, files);
    expect(text.split('\n').slice(0, 4)).toEqual([
      '# Observatory compliance evidence bundle',
      '# framework: soc2',
      `# bundle: ${meta.bundleId}`,
      '# createdAt: 2026-11-24T09:30:00.000Z',
    ]);
    expect(text).toContain(`${files[0]!.sha256}  soc2-snapshot.json  ${files[0]!.bytes}\n`);
    expect(parseManifest(text)).toEqual(files);
    expect(() => parseManifest('abc  x  1\n')).toThrow(/not a manifest line/);
  });
});

describe('the PDF summary', () => {
  it('reads back, through a PDF parser, with the framework, the posture and each control with its outcome', async () => {
    const bytes = await summaryPdf(view, posture, meta);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const { pages, info } = await pdfText(bytes);
    const text = pages.join('\n').replace(/\s+/g, ' ');
    expect(text).toContain('SOC 2 Trust Services Criteria (subset)');
    expect(text).toContain(`Evidence bundle ${meta.bundleId}`);
    expect(text).toContain('Badge: red, 25% of applicable controls passing');
    for (const id of ['CC6.1', 'CC7.2', 'A1.2', 'CC8.1']) expect(text).toContain(id);
    expect(text).toContain('CC7.2 Title of CC7.2: FAIL');
    expect(text).toContain('CC6.1 Title of CC6.1: PASS');
    expect(text).toContain('A1.2 Title of A1.2: NOT EVALUATED');
    expect(text).toContain('Change management ? policy — reviewed: MANUAL REVIEW');
    expect(info.Title).toBe('SOC 2 Trust Services Criteria (subset): evidence summary');
  });

  it('says so when no posture exists, and runs onto more pages for a long framework', async () => {
    const many: FrameworkView = { ...view, controls: Array.from({ length: 60 }, (_, i) => control(`X${i + 1}`, { latestSummary: 'A long summary. '.repeat(12) })) };
    const { pages } = await pdfText(await summaryPdf(many, null, meta));
    expect(pages.length).toBeGreaterThan(2);
    const text = pages.join('\n').replace(/\s+/g, ' ');
    expect(text).toContain('No posture has been computed for this framework.');
    expect(text).toContain('X60 Title of X60: PASS');
  });

  it('draws only what the standard fonts can', () => {
    expect(drawable('a—b ≥ c\u0007d é €')).toBe('a—b ? c d é €');
  });
});
