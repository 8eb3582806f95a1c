import { useUrlState } from '../../../app/urlState';
import { useSyncedText } from './useSyncedText';

/** The source-tenant filter (`?tenant=`, empty: every tenant); the tenants seen are suggested. */
export function TenantFilter({ tenant, suggestions }: { tenant: string; suggestions: readonly string[] }) {
  const { set } = useUrlState();
  const [text, setText] = useSyncedText(tenant);
  return (
    <form
      className="toolbar"
      aria-label="Filter by source tenant"
      onSubmit={(e) => {
        e.preventDefault();
        set({ tenant: text.trim() || null });
      }}
    >
      <input aria-label="Source tenant" list="empire-tenants" value={text} placeholder="every tenant" onChange={(e) => setText(e.target.value)} size={14} />
      <datalist id="empire-tenants">
        {suggestions.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      <button type="submit">Filter</button>
    </form>
  );
}
