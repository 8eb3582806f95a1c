import type { OverviewRow } from '../../empire/index.ts';

/**
 * The federated overview's merge (docs/federation/README.md, "Federated overview"): pure, over each
 * region's overview rows.
 */

export type MergedRow = OverviewRow & { perRegion: Record<string, number> };

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

/**
 * Merges the regions' rows by toolset (sorted by name): `events24h` and `events7d` summed, the
 * sparklines summed hour by hour (each region's own last 24 hours, oldest first), `lastEventAt`
 * the latest, `perRegion` each listing region's `events24h`, and a blurb saying so.
 */
export function mergeOverviews(regions: readonly { region: string; toolsets: readonly OverviewRow[] }[]): MergedRow[] {
  const merged = new Map<string, MergedRow>();
  for (const { region, toolsets } of regions) {
    for (const row of toolsets) {
      const into = merged.get(row.toolset) ?? { toolset: row.toolset, blurb: '', events24h: 0, events7d: 0, lastEventAt: null, sparkline24h: new Array<number>(24).fill(0), perRegion: {} };
      into.events24h += row.events24h;
      into.events7d += row.events7d;
      into.sparkline24h = into.sparkline24h.map((v, i) => v + (row.sparkline24h[i] ?? 0));
      if (row.lastEventAt !== null && (into.lastEventAt === null || Date.parse(row.lastEventAt) > Date.parse(into.lastEventAt))) into.lastEventAt = row.lastEventAt;
      into.perRegion[region] = (into.perRegion[region] ?? 0) + row.events24h;
      merged.set(row.toolset, into);
    }
  }
  return [...merged.values()]
    .sort((a, b) => (a.toolset < b.toolset ? -1 : a.toolset > b.toolset ? 1 : 0))
    .map((row) => {
      const regionCount = Object.keys(row.perRegion).length;
      const last = row.lastEventAt === null ? 'no events yet' : `latest event ${row.lastEventAt}`;
      return {
        ...row,
        perRegion: Object.fromEntries(Object.entries(row.perRegion).sort(([a], [b]) => (a < b ? -1 : 1))),
        blurb: `${plural(row.events24h, 'event')} in the last 24 hours across ${plural(regionCount, 'region')} (${plural(row.events7d, 'event')} in 7 days); ${last}.`,
      };
    });
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const count = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** A peer's overview answer read as its rows; null when it is not one. */
export function readOverviewAnswer(json: unknown): OverviewRow[] | null {
  const toolsets = (json as { toolsets?: unknown } | null)?.toolsets;
  if (!Array.isArray(toolsets)) return null;
  const rows: OverviewRow[] = [];
  for (const t of toolsets as Record<string, unknown>[]) {
    if (t === null || typeof t !== 'object' || typeof t.toolset !== 'string' || t.toolset.length === 0 || t.toolset.length > 128) return null;
    if (!count(t.events24h) || !count(t.events7d)) return null;
    if (!(t.lastEventAt === null || (typeof t.lastEventAt === 'string' && ISO.test(t.lastEventAt)))) return null;
    if (!Array.isArray(t.sparkline24h) || t.sparkline24h.length !== 24 || !t.sparkline24h.every(count)) return null;
    rows.push({
      toolset: t.toolset,
      blurb: typeof t.blurb === 'string' ? t.blurb : '',
      events24h: t.events24h as number,
      events7d: t.events7d as number,
      lastEventAt: t.lastEventAt as string | null,
      sparkline24h: t.sparkline24h as number[],
    });
  }
  return rows;
}
