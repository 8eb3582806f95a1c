import type { Series } from '../../../components';
import { dayStart } from './days';
import type { Dimension, MetricAnswer } from './api';

const FIELD: Record<Dimension, 'dimWorkspaceId' | 'dimToolset' | 'dimSeverity' | 'dimRegion'> = {
  workspaceId: 'dimWorkspaceId',
  toolset: 'dimToolset',
  severity: 'dimSeverity',
  region: 'dimRegion',
};
/** Lines drawn at most; the smaller groups are summed into one "other" line. */
export const MAX_LINES = 8;

type Point = MetricAnswer['series'][number];

/** A point's group: its grouped dimensions' values, '(none)' for a row naming none. */
export function groupLabel(point: Point, dims: readonly Dimension[]): string {
  if (dims.length === 0) return 'total';
  return dims.map((d) => point[FIELD[d]] || '(none)').join(' · ');
}

function everyDay(from: string, to: string): string[] {
  const days: string[] = [];
  for (let ms = dayStart(from); ms < dayStart(to); ms += 86_400_000) days.push(new Date(ms).toISOString().slice(0, 10));
  return days;
}

/**
 * The answer as chart lines: one per group (the largest MAX_LINES − 1 by total, the rest summed as
 * "other"), each with every day of the range (0 where the group has no facts).
 */
export function toSeries(answer: MetricAnswer): Series[] {
  const totals = new Map<string, number>();
  const byGroup = new Map<string, Map<string, number>>();
  for (const p of answer.series) {
    const label = groupLabel(p, answer.dims);
    totals.set(label, (totals.get(label) ?? 0) + p.value);
    const days = byGroup.get(label) ?? new Map<string, number>();
    days.set(p.dimDate, (days.get(p.dimDate) ?? 0) + p.value);
    byGroup.set(label, days);
  }
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([label]) => label);
  const kept = ranked.length > MAX_LINES ? ranked.slice(0, MAX_LINES - 1) : ranked;
  const rest = ranked.slice(kept.length);
  const days = everyDay(answer.from, answer.to);
  const line = (labels: string[], name: string): Series => ({
    label: name,
    points: days.map((day) => [dayStart(day), labels.reduce((sum, l) => sum + (byGroup.get(l)?.get(day) ?? 0), 0)] as const),
  });
  const lines = kept.map((label) => line([label], label));
  if (rest.length > 0) lines.push(line(rest, `other (${rest.length})`));
  if (lines.length === 0) lines.push(line([], groupLabel({} as Point, answer.dims) === 'total' ? 'total' : 'no facts'));
  return lines;
}
