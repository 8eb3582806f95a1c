import type { ControlView, FrameworkView, PostureView } from '../frameworks/views.ts';

/**
 * The files of an evidence bundle, as bytes (docs/compliance/README.md, "Evidence bundles"): a JSON
 * snapshot of the framework, a CSV of its controls, and the manifest over them and the PDF summary
 * (pdf.ts). Pure: the same framework read, bundle id and time give the same bytes.
 */

export const ARTIFACT_KINDS = ['json', 'csv', 'pdf'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** The content type each file is stored and served with. */
export const CONTENT_TYPES: Record<ArtifactKind | 'manifest', string> = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  pdf: 'application/pdf',
  manifest: 'text/plain; charset=utf-8',
};

/** The manifest's file name in every bundle. */
export const MANIFEST_NAME = 'manifest.txt';

/** The file name of each artifact: the framework key in front, so downloads of two frameworks do not clash. */
export function artifactName(framework: string, kind: ArtifactKind): string {
  return `${framework}-${kind === 'json' ? 'snapshot.json' : kind === 'csv' ? 'controls.csv' : 'summary.pdf'}`;
}

/** What a bundle's files say about themselves. */
export interface BundleMeta {
  bundleId: string;
  createdAt: Date;
}

/** The JSON snapshot's own schema name (the file, not an API answer). */
export const SNAPSHOT_SCHEMA = 'observatory-compliance-snapshot.v1';

/** Every field of a control the snapshot and the CSV carry, in column order. */
const CONTROL_COLUMNS = [
  'id',
  'controlId',
  'category',
  'title',
  'severity',
  'predicateKey',
  'latestOutcome',
  'latestRunAt',
  'latestEvaluatedBy',
  'latestEvaluationId',
  'latestSummary',
  'latestEvidenceUrl',
  'description',
] as const satisfies readonly (keyof ControlView)[];

/**
 * The framework as read at `createdAt`: its identity, its posture row (null when the posture read
 * has none for it), and every control with its latest outcome in force. Two-space indented, with a
 * final newline.
 */
export function snapshotJson(view: FrameworkView, posture: PostureView | null, meta: BundleMeta): Buffer {
  const document = {
    schema: SNAPSHOT_SCHEMA,
    bundleId: meta.bundleId,
    generatedAt: meta.createdAt.toISOString(),
    framework: { framework: view.framework, title: view.title, version: view.version, status: view.status },
    posture,
    controls: view.controls.map((c) => Object.fromEntries(CONTROL_COLUMNS.map((column) => [column, c[column]]))),
  };
  return Buffer.from(`${JSON.stringify(document, null, 2)}\n`, 'utf8');
}

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, a quote, CR or LF, quotes doubled; null
 * is an empty cell. A cell a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`,
 * a tab or CR) gets a leading `'`, so opening the file never executes what a summary says.
 */
export function csvCell(value: string | null): string {
  if (value === null) return '';
  const inert = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}

/** A header row, then one row per control; CRLF line ends (RFC 4180), a final CRLF. */
export function controlsCsv(view: FrameworkView): Buffer {
  const rows = [CONTROL_COLUMNS.map((c) => csvCell(c)), ...view.controls.map((control) => CONTROL_COLUMNS.map((c) => csvCell(control[c])))];
  return Buffer.from(rows.map((cells) => `${cells.join(',')}\r\n`).join(''), 'utf8');
}

export interface ManifestEntry {
  name: string;
  bytes: number;
  sha256: string;
}

/**
 * The manifest: `#` lines naming the bundle, then one line per file, `<sha256>  <name>  <bytes>`
 * (sha256sum's two spaces, then the size). A final newline.
 */
export function manifestText(framework: string, meta: BundleMeta, entries: readonly ManifestEntry[]): string {
  return [
    '# Observatory compliance evidence bundle',
    `# framework: ${framework}`,
    `# bundle: ${meta.bundleId}`,
    `# createdAt: ${meta.createdAt.toISOString()}`,
    '# <sha256>  <name>  <bytes>',
    ...entries.map((e) => `${e.sha256}  ${e.name}  ${e.bytes}`),
    '',
  ].join('\n');
}

/** The file lines of a manifest (its `#` lines left out), for checking a downloaded bundle. */
export function parseManifest(text: string): ManifestEntry[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([0-9a-f]{64}) {2}(\S+) {2}(\d+)$/.exec(line);
      if (!match) throw new Error(`not a manifest line: ${line}`);
      return { sha256: match[1]!, name: match[2]!, bytes: Number(match[3]) };
    });
}
