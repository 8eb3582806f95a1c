import './honeypot.css';
/** One headline number with its label. */
export function Kpi({ label, value, tone }: { label: string; value: number | string | null; tone?: 'ok' | 'bad' | 'warn' }) {
  return (
    <div className={`kpi${tone ? ` hp-kpi-${tone}` : ''}`}>
      <div className="value">{value === null ? '—' : typeof value === 'number' ? value.toLocaleString() : value}</div>
      <div className="label">{label}</div>
    </div>
  );
}
