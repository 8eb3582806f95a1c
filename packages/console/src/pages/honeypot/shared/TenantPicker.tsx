import { api, unwrap } from '../../../api/client';
import { useQuery } from '../../../app/useQuery';
import { useUrlState } from '../../../app/urlState';

/** The tenant filter (`?tenant=slug`, empty: every tenant), listed from the tenants endpoint. */
export function TenantPicker({ allowAll = true }: { allowAll?: boolean }) {
  const { get, set } = useUrlState();
  const tenants = useQuery(() => unwrap(api.GET('/api/observatory/v1/honeypot/tenants')), []);
  return (
    <label className="field inline">
      <span className="sr-only">Tenant</span>
      <select aria-label="Tenant" value={get('tenant')} onChange={(e) => set({ tenant: e.target.value || null })}>
        {allowAll && <option value="">Every tenant</option>}
        {(tenants.data?.tenants ?? []).map((t) => (
          <option key={t.slug} value={t.slug}>
            {t.name} ({t.slug})
          </option>
        ))}
      </select>
    </label>
  );
}
