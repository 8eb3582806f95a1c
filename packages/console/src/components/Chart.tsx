import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  /** [ISO time or epoch ms, value] pairs. */
  points: readonly (readonly [string | number, number | null])[];
}

const COLOURS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];

/** Aligns series on one time axis (seconds), as uPlot wants. */
export function alignSeries(series: readonly Series[]): uPlot.AlignedData {
  const times = new Set<number>();
  const maps = series.map((s) => {
    const m = new Map<number, number | null>();
    for (const [t, v] of s.points) {
      const sec = Math.floor((typeof t === 'number' ? t : Date.parse(t)) / 1000);
      times.add(sec);
      m.set(sec, v);
    }
    return m;
  });
  const xs = [...times].sort((a, b) => a - b);
  return [xs, ...maps.map((m) => xs.map((x) => m.get(x) ?? null))] as uPlot.AlignedData;
}

/** A time-series line chart (uPlot) in the browser's zone; fixed height so refreshes do not shift the page. */
export function TimeChart({ series, height = 220, label }: { series: readonly Series[]; height?: number; label: string }) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const options: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: COLOURS[i % COLOURS.length], width: 2, spanGaps: false }))],
      axes: [{}, { size: 50 }],
      legend: { show: series.length > 1 },
    };
    plot.current?.destroy();
    plot.current = new uPlot(options, alignSeries(series), el);
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(200, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [series, height]);

  const empty = series.every((s) => s.points.length === 0);
  return (
    <figure className="chart" style={{ minHeight: height + 30 }}>
      <figcaption className="sr-only">{label}</figcaption>
      {empty ? <p className="empty">No points in this window.</p> : <div ref={host} role="img" aria-label={label} />}
    </figure>
  );
}
