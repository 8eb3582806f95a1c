import PDFDocument from 'pdfkit';
import type { FrameworkView, PostureView } from '../frameworks/views.ts';
import type { BundleMeta } from './artifacts.ts';

/**
 * The bundle's PDF summary (pdfkit): title, the posture, a table of every control with its latest
 * outcome, then each control's summary. Built with the PDF standard fonts (Helvetica), which need
 * no font file; they draw the Windows-1252 characters only, so any other character is written `?`.
 */

/** Characters Windows-1252 has beyond Latin-1 (the rest of it is U+0020–U+007E and U+00A0–U+00FF). */
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/** `text` with every character the standard fonts cannot draw replaced by `?` (and controls by a space). */
export function drawable(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '\n') out += char;
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0 && !WIN_ANSI_EXTRA.has(char))) out += ' ';
    else if (code <= 0xff || WIN_ANSI_EXTRA.has(char)) out += char;
    else out += '?';
  }
  return out;
}

const OUTCOME_LABEL: Record<string, string> = { pass: 'PASS', fail: 'FAIL', 'manual-review': 'MANUAL REVIEW', 'n/a': 'N/A' };
const outcomeLabel = (outcome: string | null) => (outcome === null ? 'NOT EVALUATED' : (OUTCOME_LABEL[outcome] ?? outcome.toUpperCase()));

function postureLines(posture: PostureView | null): string[] {
  if (posture === null) return ['No posture has been computed for this framework.'];
  return [
    `Badge: ${posture.badge}${posture.ratePct === null ? '' : `, ${posture.ratePct}% of applicable controls passing`}`,
    `Controls: ${posture.totalControls} in all; ${posture.passing} passing, ${posture.failing} failing, ${posture.manualReview} for manual review, ${posture.nA} not applicable`,
    `As of: ${posture.asOf ?? 'never evaluated'}`,
  ];
}

/** Renders the summary; resolves with the whole file. */
export async function summaryPdf(view: FrameworkView, posture: PostureView | null, meta: BundleMeta): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'A4',
    margin: 50,
    info: {
      Title: drawable(`${view.title}: evidence summary`),
      Author: 'Observatory',
      Subject: `Compliance evidence bundle ${meta.bundleId}`,
      CreationDate: meta.createdAt,
      ModDate: meta.createdAt,
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const finished = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  doc.font('Helvetica-Bold').fontSize(18).text(drawable(view.title));
  doc.font('Helvetica').fontSize(10).text(drawable(`Framework ${view.framework}, version ${view.version} (${view.status})`));
  doc.text(`Evidence bundle ${meta.bundleId}, generated ${meta.createdAt.toISOString()}`);
  doc.moveDown();
  doc.font('Helvetica-Bold').fontSize(13).text('Posture');
  doc.font('Helvetica').fontSize(10);
  for (const line of postureLines(posture)) doc.text(drawable(line));
  doc.moveDown();

  doc.font('Helvetica-Bold').fontSize(13).text('Controls');
  doc.moveDown(0.5);
  doc.font('Helvetica').fontSize(9).table({
    columnStyles: [70, 80, '*', 120],
    rowStyles: (row: number) => (row === 0 ? { font: { src: 'Helvetica-Bold' }, backgroundColor: '#eeeeee' } : {}),
    data: [
      ['Control', 'Outcome', 'Title', 'Evaluated'],
      ...view.controls.map((c) => [
        drawable(c.controlId),
        outcomeLabel(c.latestOutcome),
        drawable(c.title),
        drawable(c.latestRunAt === null ? '-' : `${c.latestRunAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z')} by ${c.latestEvaluatedBy ?? 'unknown'}`),
      ]),
    ],
  });
  doc.moveDown();

  doc.font('Helvetica-Bold').fontSize(13).text('Findings', doc.page.margins.left);
  for (const c of view.controls) {
    doc.moveDown(0.5);
    doc.font('Helvetica-Bold').fontSize(10).text(drawable(`${c.controlId} ${c.title}: ${outcomeLabel(c.latestOutcome)}`));
    doc.font('Helvetica').fontSize(9).text(drawable(c.latestSummary ?? 'No evaluation yet.'));
    if (c.latestEvaluationId !== null) doc.fillColor('#555555').text(`Evaluation ${c.latestEvaluationId}`).fillColor('black');
  }
  doc.end();
  return finished;
}
