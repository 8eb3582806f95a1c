/**
 * Only for alerts.ts, which still reads tenants here: it moves to the tenant service
 * (tenants/service.ts `requireBySlug`, `idOf`) when the alert rules move into alerts/ (issue 32).
 */
export { findTenantBySlug } from './tenants/repository.ts';
