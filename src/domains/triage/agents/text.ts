/** Small pure helpers the built-in agents share: orderings that give the same answer for any input order, and clipping. */

/** Code-unit order of two strings (locale-free, so the same on every machine). */
export const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** `text` cut to `max` characters, an ellipsis marking the cut. */
export const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** Time order by instant (unreadable times last), then by text. */
export function byTime(a: string, b: string): number {
  const ta = Date.parse(a);
  const tb = Date.parse(b);
  const na = Number.isFinite(ta);
  const nb = Number.isFinite(tb);
  if (na && nb && ta !== tb) return ta - tb;
  if (na !== nb) return na ? -1 : 1;
  return cmp(a, b);
}

/** At most one decimal, no trailing ".0": numbers in sentences read the same on every machine. */
export const fmt = (x: number) => String(Math.round(x * 10) / 10);

/** `3 events`, `1 event`. */
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
