/**
 * A topic's stored `tsvector` as the in-process search index keeps it, read from PostgreSQL's text
 * form (`'lexeme':1A,5 'other':2B`). Pure.
 *
 * PostgreSQL keeps each position as one 16-bit word: the weight in the top two bits (A = 3, B = 2,
 * C = 1, D = 0) and the position (1..16383) below; the index keeps them the same way, so the rank
 * (rank.ts) reads them as PostgreSQL's `ts_rank` does.
 */

export interface ParsedEntry {
  lexeme: string;
  /** Packed positions (weight << 14 | position), ascending by position as stored. */
  positions: number[];
}

const WEIGHT_CODE: Record<string, number> = { A: 3, B: 2, C: 1, D: 0 };

export const weightOf = (packed: number): number => packed >> 14;
export const positionOf = (packed: number): number => packed & 0x3fff;

/**
 * The entries of a tsvector's text output, in its order. Inside quotes `''` is a quote and a
 * backslash escapes the next character (PostgreSQL's tsvectorout).
 */
export function parseTsvector(text: string): ParsedEntry[] {
  const entries: ParsedEntry[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && text[i] === ' ') i++;
    if (i >= n) break;
    if (text[i] !== "'") throw new Error(`tsvector text: expected a quote at ${i}`);
    i++;
    let lexeme = '';
    for (;;) {
      if (i >= n) throw new Error('tsvector text: unterminated lexeme');
      const c = text[i]!;
      if (c === '\\') {
        lexeme += text[i + 1] ?? '';
        i += 2;
      } else if (c === "'") {
        if (text[i + 1] === "'") {
          lexeme += "'";
          i += 2;
        } else {
          i++;
          break;
        }
      } else {
        lexeme += c;
        i++;
      }
    }
    const positions: number[] = [];
    if (text[i] === ':') {
      i++;
      for (;;) {
        let position = 0;
        while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) position = position * 10 + text.charCodeAt(i++) - 48;
        let weight = 0;
        const letter = text[i];
        if (letter !== undefined && letter in WEIGHT_CODE) {
          weight = WEIGHT_CODE[letter]!;
          i++;
        }
        positions.push((weight << 14) | position);
        if (text[i] === ',') i++;
        else break;
      }
    }
    entries.push({ lexeme, positions });
  }
  return entries;
}
