import { positionOf, weightOf } from './tsvector.ts';

/**
 * PostgreSQL's `ts_rank(search, query, 32)` for the prefix queries the search sends (every item
 * `term:*`, joined by `&`), computed the way src/backend/utils/adt/tsrank.c computes it, in single
 * precision where it uses `float`, so a page ranked by the index shows the same score the SQL path
 * showed. Pure.
 *
 * `items` holds, per distinct query item in PostgreSQL's order (byte order of the stems, repeats
 * removed), the position lists of the document's lexemes the item's prefix matches, in the
 * tsvector's order. The quirks are PostgreSQL's own: an AND rank pairs each entry of an item with
 * the last matching entry of every earlier item, and a single distinct item ranks as OR.
 */

const f = Math.fround;
/** Weights of D, C, B, A. */
const WEIGHTS = [f(0.1), f(0.2), f(0.4), f(1.0)];
const wpos = (packed: number) => WEIGHTS[weightOf(packed)]!;

function wordDistance(distance: number): number {
  if (distance > 100) return f(1e-30);
  return f(1.0 / (1.005 + 0.05 * Math.exp(f(distance) / 1.5 - 2)));
}

function rankOr(items: readonly (readonly (readonly number[])[])[]): number {
  let res = f(0);
  for (const entries of items) {
    for (const positions of entries) {
      let resj = f(0);
      let wjm = f(-1);
      let jm = 0;
      for (let j = 0; j < positions.length; j++) {
        const w = wpos(positions[j]!);
        resj = f(resj + f(w / ((j + 1) * (j + 1))));
        if (w > wjm) {
          wjm = w;
          jm = j;
        }
      }
      res = f(res + f(f(wjm + resj) - f(wjm / ((jm + 1) * (jm + 1)))) / 1.64493406685);
    }
  }
  return items.length > 0 ? f(res / items.length) : res;
}

function rankAnd(items: readonly (readonly (readonly number[])[])[]): number {
  if (items.length < 2) return rankOr(items);
  let res = f(-1);
  const last: (readonly number[] | null)[] = items.map(() => null);
  for (let i = 0; i < items.length; i++) {
    for (const post of items[i]!) {
      last[i] = post;
      for (let k = 0; k < i; k++) {
        const ct = last[k];
        if (!ct) continue;
        for (const l of post) {
          for (const p of ct) {
            const distance = Math.abs(positionOf(l) - positionOf(p));
            if (distance === 0) continue;
            const curw = f(Math.sqrt(f(f(wpos(l) * wpos(p)) * wordDistance(distance))));
            res = res < 0 ? curw : f(1.0 - (1.0 - res) * (1.0 - curw));
          }
        }
      }
    }
  }
  return res;
}

/** The rank of a matching topic, normalised as `ts_rank(…, 32)`: rank / (rank + 1). */
export function tsRank32(items: readonly (readonly (readonly number[])[])[]): number {
  if (items.length === 0) return 0;
  let res = items.length >= 2 ? rankAnd(items) : rankOr(items);
  if (res < 0) res = f(1e-20);
  return f(res / f(res + 1));
}

/**
 * The float4 as PostgreSQL prints it (the shortest decimal that reads back as the same float4),
 * then rounded to four places as the search answer shows scores.
 */
export function shownScore(rank: number): number {
  let printed = rank;
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(rank.toPrecision(digits));
    if (f(candidate) === rank) {
      printed = candidate;
      break;
    }
  }
  return Math.round(printed * 10_000) / 10_000;
}
