import { useTenants } from './tenants';

/** A labelled tenant select for forms (not tied to the address, unlike TenantPicker). */
export function TenantSelect({
  label,
  value,
  onChange,
  allowAll = false,
  enabledOnly = false,
}: {
  label: string;
  value: string;
  onChange: (slug: string) => void;
  allowAll?: boolean;
  enabledOnly?: boolean;
}) {
  const tenants = useTenants();
  const list = (tenants.data?.tenants ?? []).filter((t) => !enabledOnly || t.disabledAt === null);
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      <select value={value} onChange={(e) => onChange(e.target.value)} required={!allowAll}>
        <option value="">{allowAll ? 'Every tenant' : tenants.loading && !tenants.data ? 'Loading tenants…' : 'Choose a tenant'}</option>
        {list.map((t) => (
          <option key={t.slug} value={t.slug}>
            {t.name} ({t.slug})
          </option>
        ))}
      </select>
      {tenants.error && <span className="field-hint muted">The tenants could not be listed: {tenants.error.human}</span>}
    </label>
  );
}
