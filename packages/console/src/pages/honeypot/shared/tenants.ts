import { api, unwrap } from '../../../api/client';
import { useQuery } from '../../../app/useQuery';

/** Every tenant (read:tenants), for pickers and the tenants page. */
export function useTenants(key: unknown[] = []) {
  return useQuery(() => unwrap(api.GET('/api/observatory/v1/honeypot/tenants')), key);
}
