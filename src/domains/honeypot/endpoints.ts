import type { Clock } from '../../platform/clock.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import { alertEndpoints } from './alerts/endpoints.ts';
import type { AlertService } from './alerts/service.ts';
import type { DashboardService } from './dashboard/service.ts';
import { dashboardEndpoints } from './dashboard/endpoints.ts';
import { ingestEndpoints } from './ingest/endpoints.ts';
import type { IngestService } from './ingest/service.ts';
import { readEndpoints } from './reads/endpoints.ts';
import type { ReadService } from './reads/service.ts';
import { tenantEndpoints } from './tenants/endpoints.ts';
import type { TenantService } from './tenants/service.ts';

/** Every honeypot registry entry: each feature folder's, in the order the registry has always listed them. */
export function honeypotEndpoints(deps: {
  tenants: TenantService;
  ingest: IngestService;
  alerts: AlertService;
  reads: ReadService;
  dashboard: DashboardService;
  clock: Clock;
}): Endpoint[] {
  const { tenants, ingest, alerts, reads, dashboard, clock } = deps;
  return [
    ...tenantEndpoints({ tenants }),
    ...ingestEndpoints({ tenants, ingest, clock }),
    ...alertEndpoints({ alerts }),
    ...readEndpoints({ reads }),
    ...dashboardEndpoints({ dashboard }),
  ];
}
