/**
 * A labelled drop-down of fixed choices with an "every …" first entry that means no filter
 * (the empty string): a status, a severity, a kind.
 */
export function FilterSelect({
  label,
  value,
  options,
  anyLabel,
  onChange,
}: {
  label: string;
  value: string;
  options: readonly string[];
  anyLabel: string;
  onChange: (value: string) => void;
}) {
  return (
    <label className="field inline">
      <span className="sr-only">{label}</span>
      <select aria-label={label} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{anyLabel}</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}
