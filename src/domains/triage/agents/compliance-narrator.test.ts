import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { UNTRUSTED_DATA_RULES } from '../../../platform/llm/untrusted.ts';
import { COMPLIANCE_NARRATOR_PARAMS_1_0_0 as V100, COMPLIANCE_NARRATOR_VERSIONS, narrateCompliance } from './compliance-narrator.ts';
import { NarrationSchema, parseNarration } from './output.ts';
import type { ComplianceSnapshot, NarratorControl } from './types.ts';

const AS_OF = '2026-05-01T10:00:00.000Z';
const c = (controlId: string, outcome: NarratorControl['outcome'], severity: NarratorControl['severity'] = 'major', summary: string | null = null, override = false): NarratorControl => ({
  controlId,
  title: `Title of ${controlId}`,
  severity,
  outcome,
  summary: outcome === null ? null : summary ?? `${controlId} observed.`,
  override,
});

function framework(key: string, title: string, controls: NarratorControl[]): ComplianceSnapshot['frameworks'][number] {
  const count = (o: string) => controls.filter((x) => x.outcome === o).length;
  const nA = count('n/a');
  const evaluated = controls.some((x) => x.outcome !== null);
  return {
    framework: key,
    title,
    version: '2022',
    totalControls: controls.length,
    passing: count('pass'),
    failing: count('fail'),
    manualReview: count('manual-review'),
    nA,
    asOf: evaluated ? AS_OF : null,
    badge: evaluated ? 'yellow' : 'unknown',
    ratePct: evaluated && controls.length > nA ? Math.round((count('pass') / (controls.length - nA)) * 1000) / 10 : null,
    controls,
  };
}

const SOC2 = 'SOC 2 Trust Services Criteria (subset)';
const ISO = 'ISO/IEC 27001:2022 Annex A (subset)';

describe('narrateCompliance (1.0.0)', () => {
  it('writes totals, each framework, then what needs attention, failing and most severe first', () => {
    const snapshot: ComplianceSnapshot = {
      frameworks: [
        framework('soc2', SOC2, [
          c('CC6.1', 'fail', 'critical', 'The token printed on stdout at first start is still live (svctok_ab…).'),
          c('CC6.3', 'pass'),
          c('CC9.2', 'manual-review', 'major', 'No subprocessor is registered.', true),
          c('A1.2', 'n/a', 'major', 'Not applicable: no backup target.'),
        ]),
        framework('iso27001', ISO, [c('A.8.13', 'fail', 'major', 'No restore ended ok in the last 7 days'), c('A.8.15', 'pass'), c('A.5.22', 'pass')]),
      ],
    };
    const { paragraph } = narrateCompliance(snapshot, V100);
    expect(paragraph).toBe(
      [
        'Across 2 evaluated frameworks, 3 of 6 applicable controls pass, 2 fail and 1 awaits manual review.',
        `${SOC2} (badge yellow, as of ${AS_OF}): 1 of 3 applicable controls pass (33.3%); 1 fails, 1 awaits manual review and 1 does not apply.`,
        `${ISO} (badge yellow, as of ${AS_OF}): 2 of 3 applicable controls pass (66.7%); 1 fails, 0 await manual review and 0 do not apply.`,
        'CC6.1 Title of CC6.1 (critical) fails: The token printed on stdout at first start is still live (svctok_ab…).',
        'A.8.13 Title of A.8.13 (major) fails: No restore ended ok in the last 7 days.',
        'CC9.2 Title of CC9.2 (major, set by an operator) awaits manual review: No subprocessor is registered.',
        'These outcomes come from automated checks of the live system, not from an audit.',
      ].join(' '),
    );
    expect(paragraph).not.toMatch(/\n/);
  });

  it('says when nothing has been evaluated yet, framework by framework', () => {
    const { paragraph } = narrateCompliance({ frameworks: [framework('soc2', SOC2, [c('CC6.1', null), c('CC6.3', null)])] }, V100);
    expect(paragraph).toBe(
      `No framework has been evaluated yet, so no control has an outcome: the compliance-evaluate job evaluates them every hour. ${SOC2} has not been evaluated yet: none of its 2 controls has an outcome. These outcomes come from automated checks of the live system, not from an audit.`,
    );
  });

  it('says when every control evaluated passes or does not apply, and counts controls without an outcome yet', () => {
    const { paragraph } = narrateCompliance({ frameworks: [framework('iso27001', ISO, [c('A.8.13', 'pass'), c('A.8.15', 'n/a'), c('A.5.22', null)])] }, V100);
    expect(paragraph).toContain(`${ISO} (badge yellow, as of ${AS_OF}): 1 of 2 applicable controls pass (50%); 0 fail, 0 await manual review, 1 does not apply and 1 has no outcome yet.`);
    expect(paragraph).toContain('Every control evaluated either passes or does not apply.');
  });

  it('details at most maxDetailed controls and lists the others by id', () => {
    const many = Array.from({ length: 9 }, (_, i) => c(`A.8.${i + 1}`, i < 7 ? 'fail' : 'manual-review', i % 2 === 0 ? 'minor' : 'major'));
    const { paragraph } = narrateCompliance({ frameworks: [framework('iso27001', ISO, many)] }, V100);
    // Majors (2, 4, 6) first, then minors (1, 3, 5, 7); the 7th failure and the manual reviews by id.
    for (const id of ['A.8.2', 'A.8.4', 'A.8.6', 'A.8.1', 'A.8.3', 'A.8.5']) expect(paragraph).toContain(`${id} Title of ${id}`);
    expect(paragraph).toContain('Also failing: A.8.7. Also awaiting manual review: A.8.8, A.8.9.');
    expect(paragraph.indexOf('A.8.6 Title')).toBeLessThan(paragraph.indexOf('A.8.1 Title'));
  });

  it('tells controls sharing an outcome and a summary in one sentence', () => {
    const shared = 'The audit chain was never verified.';
    const { paragraph } = narrateCompliance(
      {
        frameworks: [
          framework('soc2', SOC2, [c('CC7.2', 'fail', 'critical', shared), c('CC6.1', 'fail', 'major', 'Other.')]),
          framework('iso27001', ISO, [c('A.8.15', 'fail', 'critical', shared), c('A.5.22', 'manual-review', 'major', shared)]),
        ],
      },
      V100,
    );
    expect(paragraph).toContain(`CC7.2 Title of CC7.2 (critical) and A.8.15 Title of A.8.15 (critical) fail: ${shared} CC6.1 Title of CC6.1 (major) fails: Other. A.5.22 Title of A.5.22 (major) awaits manual review: ${shared}`);
  });

  it('answers within its schema, whatever the input', () => {
    const long = 'x'.repeat(5000);
    const answer = narrateCompliance({ frameworks: [framework('soc2', SOC2, Array.from({ length: 30 }, (_, i) => c(`CC${i}.1`, 'fail', 'critical', long)))] }, V100);
    expect(Value.Check(NarrationSchema, answer)).toBe(true);
    expect(parseNarration(JSON.stringify(answer))).toEqual({ ok: true, value: answer });
    expect(Value.Check(NarrationSchema, narrateCompliance({ frameworks: [] }, V100))).toBe(true);
  });
});

describe('parseNarration', () => {
  it.each([
    ['not json', /^malformed-output/],
    ['{"paragraph": ""}', /^schema-violation: \/paragraph/],
    ['{"paragraph": "ok", "extra": 1}', /^schema-violation/],
    ['{"text": "ok"}', /^schema-violation/],
  ])('refuses %s', (text, reason) => {
    const parsed = parseNarration(text);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reason).toMatch(reason);
  });
});

describe('compliance narrator versions', () => {
  it('declares the data block as data and states its rules', () => {
    for (const v of COMPLIANCE_NARRATOR_VERSIONS) {
      expect(v.systemPrompt.endsWith(`\n\n${UNTRUSTED_DATA_RULES}`)).toBe(true);
      expect(v.systemPrompt.slice(0, -UNTRUSTED_DATA_RULES.length).split('\n').length).toBeLessThanOrEqual(40);
      expect(v.systemPrompt).toContain('{"paragraph":string}');
      expect(v.systemPrompt).toContain(`at most ${v.params.maxDetailed} such sentences`);
      expect(v.systemPrompt).toContain('Never name any other framework');
    }
  });
});
