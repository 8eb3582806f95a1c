/** The progress indicator for anything that takes more than a moment. */
export function Busy({ label = 'Working…' }: { label?: string }) {
  return (
    <span className="busy" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {label}
    </span>
  );
}
