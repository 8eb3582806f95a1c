import './empire.css';

/** One key number in a tile; its unit set smaller beside it. */
export function Kpi({ label, value, unit }: { label: string; value: number | string | null; unit?: string | null }) {
  return (
    <div className="kpi">
      <div className="value">
        {value === null ? '—' : typeof value === 'number' ? value.toLocaleString() : value}
        {value !== null && unit ? <span className="unit">{unit === '%' ? '%' : ` ${unit}`}</span> : null}
      </div>
      <div className="label">{label}</div>
    </div>
  );
}

/** A KPI's number as the service states it: its precision; null when it cannot be computed. */
export function formatKpi(kpi: { value: number | null; precision: number }): string | null {
  if (kpi.value === null) return null;
  return kpi.value.toLocaleString(undefined, { minimumFractionDigits: kpi.precision, maximumFractionDigits: kpi.precision });
}
