import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COMPLIANCE_NARRATOR_PARAMS_1_0_0, type ComplianceSnapshot, narrateCompliance, type NarratorControl } from '../../triage/index.ts';
import { mentionReader } from './mentions.ts';
import { scrubNarration, sentencesOf } from './scrub.ts';

const INPUT = { frameworks: ['soc2', 'iso27001'], controlIds: ['CC6.1', 'CC6.3', 'CC9.2', 'A1.2', 'PI1.2', 'A.5.22', 'A.8.13', 'A.8.2'] };
const read = mentionReader(INPUT);

describe('mentionReader: frameworks', () => {
  it.each([
    ['SOC 2 is yellow.', ['soc2'], []],
    ['soc2, SOC-2, SOC II and SOC2 Type II', ['soc2'], []],
    ['The Trust Services Criteria (TSC) apply.', ['soc2'], []],
    ['ISO/IEC 27001:2022 Annex A (subset)', ['iso27001'], []],
    ['ISO 27001, iso27001, ISO-27001 and ISO / IEC 27001', ['iso27001'], []],
    ['SOC 2 Trust Services Criteria (subset)', ['soc2'], []],
    ['It also meets HIPAA.', [], ['hipaa']],
    ['Ｈ\u200bＩＰＡＡ in full width with a zero-width space', [], ['hipaa']],
    ['PCI DSS, PCI-DSS and PCI', [], ['pci-dss']],
    ['NIST', [], ['nist']],
    ['NIST SP 800-53 and SP 800-171', [], ['nist-800-171', 'nist-800-53']],
    ['the NIST CSF', [], ['nist-csf']],
    ['GDPR and the General Data Protection Regulation', [], ['gdpr']],
    ['FedRAMP Moderate, SOX, HITRUST and CMMC', [], ['cmmc', 'fedramp', 'hitrust', 'sox']],
    ['ISO 27002 guidance and ISO 9001', [], ['iso27002', 'iso9001']],
    ['SOC 1 and SOC 3 reports', [], ['soc1', 'soc3']],
    ['CIS Controls v8 and CIS Benchmarks', [], ['cis']],
    ['an SSAE 18 attestation', [], ['ssae18']],
    // Not frameworks: a SOC team, ISO 8601 times, PCIe, a dora in lower case.
    ['The SOC team read ISO 8601 times over PCIe; dora the explorer.', [], []],
    ['Versions v1.2 and 81.8% of 11 controls.', [], []],
  ])('%s', (text, present, absent) => {
    expect(read.frameworks(text)).toEqual({ present, absent });
  });

  it('recognises an input framework by its own key, whatever its shape', () => {
    const own = mentionReader({ frameworks: ['house-baseline'], controlIds: [] });
    expect(own.frameworks('The house-baseline passes; HOUSE-BASELINE too.')).toEqual({ present: ['house-baseline'], absent: [] });
  });
});

describe('mentionReader: control ids', () => {
  it.each([
    ['CC6.1 fails and cc6.3 passes.', ['CC6.1', 'CC6.3'], []],
    ['A1.2, PI1.2 and CC9.2', ['A1.2', 'CC9.2', 'PI1.2'], []],
    ['soc2/CC6.1 and iso27001/A.8.13', ['A.8.13', 'CC6.1'], []],
    ['A.8.13 passes, a.5.22 too.', ['A.5.22', 'A.8.13'], []],
    ['Annex A 8.2 and Annex A control 5.22', ['A.5.22', 'A.8.2'], []],
    ['CC9.9 fails.', [], ['CC9.9']],
    ['A.8.1 and A.8.130 are not A.8.13.', ['A.8.13'], ['A.8.1', 'A.8.130']],
    ['A.12.3.1 (2013 numbering)', [], ['A.12.3.1']],
    ['CC6.1 and P4.2 and C1.1', ['CC6.1'], ['C1.1', 'P4.2']],
    ['AC-2, SC-7(4) and IA-5', [], ['AC-2', 'IA-5', 'SC-7(4)']],
    ['PR.AA-01 and DE.CM-1', [], ['DE.CM-1', 'PR.AA-01']],
    ['§164.312 and 45 CFR 164.308', [], ['164.308', '164.312']],
    ['ＣＣ６．１ in full width', ['CC6.1'], []],
    // Not control ids: times, percentages, versions, toolset names in lower case, p95.
    ['At 2026-05-01T10:00:00.000Z, 81.8% (v1.2.0) of ac-2 and p95 were fine.', [], []],
  ])('%s', (text, present, absent) => {
    expect(read.controls(text)).toEqual({ present, absent });
  });

  it('recognises an input control id of any shape, as the input spells it', () => {
    const own = mentionReader({ frameworks: [], controlIds: ['OBS-7'] });
    expect(own.controls('obs-7 passes; OBS-70 is not it.')).toEqual({ present: ['OBS-7'], absent: [] });
  });
});

describe('sentencesOf', () => {
  it.each([
    ['One. Two! Three? Four', ['One.', 'Two!', 'Three?', 'Four']],
    ['CC6.1 fails (81.8% pass). A.8.13 passes.', ['CC6.1 fails (81.8% pass).', 'A.8.13 passes.']],
    ['Failing: A.8.13. 3 controls pass.', ['Failing: A.8.13.', '3 controls pass.']],
    ['Frameworks, e.g. SOC 2, are listed. i.e. Nothing else.', ['Frameworks, e.g. SOC 2, are listed. i.e. Nothing else.']],
    ['Line one\nLine two.\r\n\r\nLine three.', ['Line one', 'Line two.', 'Line three.']],
    ['He said "done." Then left.', ['He said "done."', 'Then left.']],
    ['lower case after a dot. stays together', ['lower case after a dot. stays together']],
    ['  spaced   out.   ', ['spaced out.']],
    ['', []],
  ])('%j', (text, sentences) => {
    expect(sentencesOf(text)).toEqual(sentences);
  });
});

describe('scrubNarration', () => {
  it('removes each sentence naming a framework or control the input does not hold, and reports it', () => {
    const paragraph =
      'SOC 2 stands at 9 of 11 applicable controls passing. The service is also HIPAA compliant. CC6.1 fails: the first-start token is live. CC9.9 and A.8.13 fail too. ISO 27001 is green.';
    expect(scrubNarration(paragraph, INPUT)).toEqual({
      text: 'SOC 2 stands at 9 of 11 applicable controls passing. CC6.1 fails: the first-start token is live. ISO 27001 is green.',
      scrubbedText: 'The service is also HIPAA compliant. CC9.9 and A.8.13 fail too.',
      citedFrameworks: ['iso27001', 'soc2'],
      citedControlIds: ['CC6.1'],
      strippedFrameworks: ['hipaa'],
      strippedControlIds: ['CC9.9'],
    });
  });

  it('keeps a paragraph naming only what the input holds, with scrubbedText empty', () => {
    const result = scrubNarration('Posture is steady. A.8.13 passes.', INPUT);
    expect(result).toEqual({ text: 'Posture is steady. A.8.13 passes.', scrubbedText: '', citedFrameworks: [], citedControlIds: ['A.8.13'], strippedFrameworks: [], strippedControlIds: [] });
  });

  it('cites a present name only from kept sentences', () => {
    // soc2 is named only in a sentence removed for HIPAA: it is not cited.
    expect(scrubNarration('SOC 2 and HIPAA both pass. Nothing else.', INPUT)).toMatchObject({ citedFrameworks: [], strippedFrameworks: ['hipaa'], text: 'Nothing else.' });
  });

  it('sees a name hidden by invisible characters or full-width letters', () => {
    const result = scrubNarration('Fine. Also P\u00adC\u200dI DSS. And ＮＩＳＴ.', INPUT);
    expect(result.text).toBe('Fine.');
    expect(result.strippedFrameworks).toEqual(['nist', 'pci-dss']);
  });

  // ——— properties ———

  const word = fc.constantFrom('posture', 'controls', 'pass', 'fail', 'review', 'steady', 'the', 'service', 'tokens', 'backups', '3', '81.8%');
  const present = fc.constantFrom('SOC 2', 'ISO 27001', 'soc2', ...INPUT.controlIds);
  const absent = fc.constantFrom(['HIPAA', 'hipaa', 'framework'], ['PCI DSS', 'pci-dss', 'framework'], ['CC9.9', 'CC9.9', 'control'], ['A.9.4', 'A.9.4', 'control'], ['NIST', 'nist', 'framework'], ['AC-2', 'AC-2', 'control']);
  const sentence = fc.tuple(fc.array(word, { minLength: 1, maxLength: 6 }), fc.option(present, { nil: undefined })).map(([words, name]) => `${['Now', ...words, ...(name ? [name] : [])].join(' ')}.`);

  it('keeps every sentence that names only what the input holds', () => {
    fc.assert(
      fc.property(fc.array(sentence, { maxLength: 8 }), (sentences) => {
        const result = scrubNarration(sentences.join(' '), INPUT);
        expect(result.text).toBe(sentences.join(' '));
        expect(result.scrubbedText).toBe('');
        expect(result.strippedFrameworks).toEqual([]);
        expect(result.strippedControlIds).toEqual([]);
      }),
    );
  });

  it('removes exactly the sentences a foreign name was put into, and lists the name', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(sentence, fc.option(absent, { nil: undefined })), { minLength: 1, maxLength: 8 }), (items) => {
        const written = items.map(([s, foreign]) => (foreign ? s.replace(/\.$/, ` and ${foreign[0]}.`) : s));
        const result = scrubNarration(written.join(' '), INPUT);
        expect(result.text).toBe(written.filter((_, i) => !items[i]![1]).join(' '));
        expect(result.scrubbedText).toBe(written.filter((_, i) => items[i]![1]).join(' '));
        const foreign = items.flatMap(([, f]) => (f ? [f] : []));
        expect(result.strippedFrameworks).toEqual([...new Set(foreign.filter((f) => f[2] === 'framework').map((f) => f[1]))].sort());
        expect(result.strippedControlIds).toEqual([...new Set(foreign.filter((f) => f[2] === 'control').map((f) => f[1]))].sort());
        // What is kept passes the scrub again unchanged.
        expect(scrubNarration(result.text, INPUT)).toMatchObject({ text: result.text, scrubbedText: '' });
      }),
    );
  });
});

describe('the built-in narrator against the scrub', () => {
  const outcome = fc.constantFrom('pass', 'fail', 'manual-review', 'n/a', null) as fc.Arbitrary<NarratorControl['outcome']>;
  const control = (controlId: string) =>
    fc.record({
      controlId: fc.constant(controlId),
      title: fc.constantFrom('Logical access security', 'Information backup', 'Logging'),
      severity: fc.constantFrom('critical', 'major', 'minor') as fc.Arbitrary<NarratorControl['severity']>,
      outcome,
      summary: fc.option(fc.constantFrom('3 live tokens went unused for 90 days. Revoke them.', 'The audit chain was verified intact', ''), { nil: null }),
      override: fc.boolean(),
    });
  const framework = (key: string, title: string, ids: string[]) =>
    fc.tuple(...ids.map(control)).map((controls) => {
      const count = (o: string) => controls.filter((c) => c.outcome === o).length;
      const nA = count('n/a');
      const evaluated = controls.some((c) => c.outcome !== null);
      const applicable = controls.length - nA;
      return {
        framework: key,
        title,
        version: '2022',
        totalControls: controls.length,
        passing: count('pass'),
        failing: count('fail'),
        manualReview: count('manual-review'),
        nA,
        asOf: evaluated ? '2026-05-01T10:00:00.000Z' : null,
        badge: evaluated ? 'yellow' : 'unknown',
        ratePct: evaluated && applicable > 0 ? Math.round((count('pass') / applicable) * 1000) / 10 : null,
        controls,
      };
    });
  const snapshot: fc.Arbitrary<ComplianceSnapshot> = fc
    .tuple(framework('soc2', 'SOC 2 Trust Services Criteria (subset)', ['CC6.1', 'CC9.2', 'A1.2', 'PI1.2']), framework('iso27001', 'ISO/IEC 27001:2022 Annex A (subset)', ['A.5.22', 'A.8.13', 'A.8.2']))
    .map((frameworks) => ({ frameworks }));

  it('names only what its input holds: the scrub never removes one of its sentences', () => {
    fc.assert(
      fc.property(snapshot, (s) => {
        const { paragraph } = narrateCompliance(s, COMPLIANCE_NARRATOR_PARAMS_1_0_0);
        const input = { frameworks: s.frameworks.map((f) => f.framework), controlIds: s.frameworks.flatMap((f) => f.controls.map((c) => c.controlId)) };
        const result = scrubNarration(paragraph, input);
        expect(result.scrubbedText).toBe('');
        expect(result.text).toBe(paragraph);
        // Every failing or manual-review control is named.
        const attention = s.frameworks.flatMap((f) => f.controls).filter((c) => c.outcome === 'fail' || c.outcome === 'manual-review');
        expect(result.citedControlIds).toEqual([...new Set(attention.map((c) => c.controlId))].sort());
      }),
    );
  });
});
