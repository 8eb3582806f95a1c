/** A tiny inline trend (SVG), for overview rows; the numbers are in its title. */
export function Sparkline({ values, width = 120, height = 28, label }: { values: readonly number[]; width?: number; height?: number; label: string }) {
  if (values.length === 0) return <span className="muted">no data</span>;
  const max = Math.max(...values, 1);
  const step = values.length > 1 ? width / (values.length - 1) : width;
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(height - (v / max) * (height - 2) - 1).toFixed(1)}`).join(' ');
  return (
    <svg className="sparkline" width={width} height={height} role="img" aria-label={`${label}: ${values.join(', ')}`}>
      <title>{`${label}: ${values.join(', ')}`}</title>
      <polyline fill="none" stroke="currentColor" strokeWidth="1.5" points={points} />
    </svg>
  );
}
