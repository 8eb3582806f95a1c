/**
 * Which frameworks and which controls a text names (docs/compliance/README.md, "Narrator"), in the forms
 * a model writes them. Pure.
 *
 * Text is first read as NFKC (full-width `ＨＩＰＡＡ` is `HIPAA`) with invisible format characters
 * (zero-width spaces and joiners, soft hyphens, bidi marks) removed, so neither hides a name.
 *
 * Frameworks are named by a canonical key: the lexicon below (SOC 1/2/3, the ISO and ISO/IEC
 * management-system standards by number, HIPAA, PCI DSS, the NIST publications, GDPR, FedRAMP …), plus each input
 * framework's own key written as a word. Keys are compared with case and separators folded away
 * (`iso27001` is `ISO-27001`).
 *
 * Control ids, in the shapes of the frameworks people cite:
 * - SOC 2 Trust Services Criteria: `CC6.1`, `A1.2`, `PI1.2`, `C1.1`, `P4.2` (letters CC, A, C, P
 *   or PI, then `<n>.<n>`);
 * - ISO/IEC 27001 Annex A: `A.8.13`, `A.12.3.1` (2013 numbering), and `Annex A 8.13` /
 *   `Annex A control 8.13`, which name `A.8.13`;
 * - NIST SP 800-53: `AC-2`, `SC-7(4)` (upper case only: `ac-2` reads as a word);
 * - NIST CSF: `PR.AA-01`, `DE.CM-1`;
 * - HIPAA sections: `§164.312`, `45 CFR 164.308` (as `164.312`);
 * plus each input control id written as it is, whatever its shape. Ids are canonical in upper
 * case.
 */

const FORMAT = /\p{Cf}/gu;

/** `text` as the recognisers read it: NFKC, without invisible format characters. */
export const readable = (text: string) => text.normalize('NFKC').replace(FORMAT, '');

/** A framework key with case and every separator folded away: the form keys are compared in. */
export const foldedKey = (key: string) => key.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Rule {
  pattern: RegExp;
  key: (m: RegExpMatchArray) => string;
}

/**
 * The ISO (and ISO/IEC) standards that are management-system or security frameworks: the 27000
 * family, quality, environment, continuity, service management, risk, anti-bribery, AI, health and
 * safety, energy, Common Criteria, privacy. Not ISO 8601 (dates) and the other data formats a
 * paragraph may mention.
 */
const ISO_STANDARDS = String.raw`27\d{3}|9001|14001|20000|22301|31000|37001|42001|45001|50001|15408|29100|29151`;

const fixed = (key: string) => () => key;
const SOC: Record<string, string> = { '1': 'soc1', i: 'soc1', '2': 'soc2', ii: 'soc2', '3': 'soc3', iii: 'soc3' };

/** Names of frameworks, standards and regulations a compliance text may cite. */
const FRAMEWORK_RULES: readonly Rule[] = [
  { pattern: /\bSOC[\s-]*(1|2|3|III|II|I)\b/gi, key: (m) => SOC[m[1]!.toLowerCase()]! },
  { pattern: /\bTrust\s+Services?\s+Criteria\b|\bTSC\b/g, key: fixed('soc2') },
  { pattern: new RegExp(String.raw`\bISO(?:\s*\/\s*IEC)?[\s-]*(${ISO_STANDARDS})(?!\d)`, 'gi'), key: (m) => `iso${m[1]}` },
  { pattern: /\bAnnex\s+A\b/g, key: fixed('iso27001') },
  { pattern: /\bHIPAA\b/gi, key: fixed('hipaa') },
  { pattern: /\bPCI(?:[\s-]*DSS)?\b|\bPayment\s+Card\s+Industry\b/gi, key: fixed('pci-dss') },
  { pattern: /\bNIST\b(?:[\s-]*(?:SP[\s-]*)?(800-\d{2,3})|[\s-]*(CSF|Cybersecurity\s+Framework))?/gi, key: (m) => (m[1] ? `nist-${m[1]}` : m[2] ? 'nist-csf' : 'nist') },
  { pattern: /\b(?:SP[\s-]*)?(800-(?:53|171|30|37|61|63|88))\b/gi, key: (m) => `nist-${m[1]}` },
  { pattern: /\bGDPR\b|\bGeneral\s+Data\s+Protection\s+Regulation\b/gi, key: fixed('gdpr') },
  { pattern: /\bCCPA\b|\bCPRA\b/gi, key: fixed('ccpa') },
  { pattern: /\bFed\s*RAMP\b/gi, key: fixed('fedramp') },
  { pattern: /\bState\s*RAMP\b/gi, key: fixed('stateramp') },
  { pattern: /\bSOX\b|\bSarbanes[\s-]+Oxley\b/g, key: fixed('sox') },
  { pattern: /\bCIS\s+(?:Critical\s+Security\s+)?(?:Controls?|Benchmarks?|CSC)\b/gi, key: fixed('cis') },
  { pattern: /\bNIS\s*-?\s*2\b|\bNIS\s+Directive\b/gi, key: fixed('nis2') },
  { pattern: /\bDORA\b/g, key: fixed('dora') },
  { pattern: /\bCSA\s+STAR\b/gi, key: fixed('csa-star') },
  { pattern: /\bCloud\s+Controls\s+Matrix\b|\bCCM\b/g, key: fixed('csa-ccm') },
  { pattern: /\bCyber\s+Essentials\b/gi, key: fixed('cyber-essentials') },
  { pattern: /\bSSAE[\s-]*(\d{2})\b/gi, key: (m) => `ssae${m[1]}` },
  { pattern: /\bISAE[\s-]*(\d{4})\b/gi, key: (m) => `isae${m[1]}` },
  { pattern: /\bNERC[\s-]+CIP\b/gi, key: fixed('nerc-cip') },
  {
    pattern: /\b(HITRUST|HITECH|CMMC|COBIT|TISAX|FISMA|GLBA|FERPA|COPPA|CJIS|ITAR|PIPEDA|LGPD|POPIA|NYDFS|FFIEC|IRAP)\b/g,
    key: (m) => m[1]!.toLowerCase(),
  },
];

/** Control-id shapes: each match gives the id in its canonical spelling. */
const CONTROL_RULES: readonly Rule[] = [
  { pattern: /\b(CC|PI|A|C|P)(\d{1,3})\.(\d{1,3})\b/gi, key: (m) => `${m[1]!.toUpperCase()}${m[2]}.${m[3]}` },
  { pattern: /\bA\.(\d{1,3})\.(\d{1,3})(?:\.(\d{1,3}))?\b/gi, key: (m) => `A.${m[1]}.${m[2]}${m[3] ? `.${m[3]}` : ''}` },
  { pattern: /\bAnnex\s+A[\s,:]*(?:control\s+)?(\d{1,3})\.(\d{1,3})(?:\.(\d{1,3}))?\b/gi, key: (m) => `A.${m[1]}.${m[2]}${m[3] ? `.${m[3]}` : ''}` },
  { pattern: /(?<![\w.-])(AC|AT|AU|CA|CM|CP|IA|IR|MA|MP|PE|PL|PM|PS|PT|RA|SA|SC|SI|SR)-(\d{1,2})(?:\s*\((\d{1,2})\))?(?![\w-])/g, key: (m) => `${m[1]}-${m[2]}${m[3] ? `(${m[3]})` : ''}` },
  { pattern: /\b(GV|ID|PR|DE|RS|RC)\.([A-Z]{2})-(\d{1,2})\b/g, key: (m) => `${m[1]}.${m[2]}-${m[3]}` },
  { pattern: /(?:§+\s*|\bCFR\s+(?:§+\s*)?)(16[04]\.\d{3})\b/g, key: (m) => m[1]! },
];

function matches(text: string, rules: readonly Rule[]): string[] {
  const found: string[] = [];
  for (const rule of rules) for (const m of text.matchAll(rule.pattern)) found.push(rule.key(m));
  return found;
}

/** What the narrator's input holds: the frameworks' keys and the controls' ids. */
export interface NarrationInput {
  frameworks: readonly string[];
  controlIds: readonly string[];
}

/**
 * A recogniser for one input: its own framework keys and control ids are recognised too, whatever
 * their shape, and every name is reported in the input's spelling when the input holds it.
 */
export function mentionReader(input: NarrationInput) {
  const keyOf = new Map(input.frameworks.map((k) => [foldedKey(k), k]));
  const idOf = new Map(input.controlIds.map((id) => [id.toUpperCase(), id]));
  const literal = (values: readonly string[]): Rule[] =>
    values.filter((v) => v.trim() !== '').map((v) => ({ pattern: new RegExp(`(?<![\\p{L}\\p{N}])${escape(v)}(?![\\p{L}\\p{N}])`, 'giu'), key: () => v }));
  const frameworkRules = [...FRAMEWORK_RULES, ...literal(input.frameworks)];
  const controlRules = [...CONTROL_RULES, ...literal(input.controlIds)];
  return {
    /** The frameworks `text` names: in the input (its keys) and not (canonical keys), each sorted. */
    frameworks(text: string): { present: string[]; absent: string[] } {
      const present = new Set<string>();
      const absent = new Set<string>();
      for (const key of matches(readable(text), frameworkRules)) {
        const own = keyOf.get(foldedKey(key));
        if (own !== undefined) present.add(own);
        else absent.add(key);
      }
      return { present: [...present].sort(), absent: [...absent].sort() };
    },
    /** The control ids `text` names: in the input (its spelling) and not (canonical), each sorted. */
    controls(text: string): { present: string[]; absent: string[] } {
      const present = new Set<string>();
      const absent = new Set<string>();
      for (const id of matches(readable(text), controlRules)) {
        const own = idOf.get(id.toUpperCase());
        if (own !== undefined) present.add(own);
        else absent.add(id);
      }
      return { present: [...present].sort(), absent: [...absent].sort() };
    },
  };
}
