import { Type } from '@sinclair/typebox';
import { EmptyBody, defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, V1 } from '../../../platform/http/registry.ts';
import type { TenantService } from './service.ts';

const generatedAt = '2026-11-23T08:00:00.000Z';

const Tenant = Type.Object({
  id: Type.String({ format: 'uuid' }),
  slug: Type.String(),
  name: Type.String(),
  createdAt: IsoDate,
  disabledAt: Nullable(IsoDate),
  notes: Nullable(Type.String()),
});
const exampleTenant = {
  id: '2b1c3d4e-5f60-4718-9a2b-3c4d5e6f7a8b',
  slug: 'docs-mirror',
  name: 'Docs mirror honeypot',
  createdAt: generatedAt,
  disabledAt: null,
  notes: 'Behind the public docs mirror.',
};
const SlugParams = Type.Object({ slug: Type.String({ pattern: '^[a-z0-9-]{1,64}$' }) }, { examples: [{ slug: 'edge-eu' }] });

const who = (principal: Principal | null) => principal as Principal;

export function tenantEndpoints(deps: { tenants: TenantService }): Endpoint[] {
  const { tenants } = deps;

  const tenantChange = (id: string, title: string, verb: 'disable' | 'enable') =>
    defineEndpoint({
      id,
      title,
      description: `${verb === 'disable' ? 'Disables' : 'Enables'} a tenant: ${verb === 'disable' ? 'its ingest is refused with 403 tenant-disabled' : 'its ingest is accepted again'}. Idempotent; audited.`,
      method: 'POST',
      path: `${V1}/honeypot/tenants/{slug}/${verb}`,
      auth: 'session-or-bearer',
      scope: 'write:tenants',
      tag: 'tenants',
      kind: 'write',
      uiPath: '/honeypot/tenants',
      params: SlugParams,
      body: EmptyBody,
      response: { schemaId: 'svc-observatory-tenant.v1', fields: { tenant: Tenant } },
      example: { schema: 'svc-observatory-tenant.v1', generatedAt, tenant: { ...exampleTenant, disabledAt: verb === 'disable' ? generatedAt : null } },
      handler: async ({ principal, params, requestId }) => tenants.setDisabled({ principal: who(principal), requestId }, params.slug, verb === 'disable'),
    });

  return [
    defineEndpoint({
      id: 'listTenants',
      title: 'List tenants',
      description: 'Every honeypot tenant, disabled ones included. Signing secrets are never returned.',
      method: 'GET',
      path: `${V1}/honeypot/tenants`,
      auth: 'session-or-bearer',
      scope: 'read:tenants',
      tag: 'tenants',
      kind: 'read',
      uiPath: '/honeypot/tenants',
      response: { schemaId: 'svc-observatory-tenants.v1', fields: { tenants: Type.Array(Tenant) } },
      example: { schema: 'svc-observatory-tenants.v1', generatedAt, tenants: [exampleTenant] },
      handler: async () => ({ tenants: await tenants.list() }),
    }),
    defineEndpoint({
      id: 'createTenant',
      title: 'Create a tenant',
      description: 'Creates a honeypot tenant and its signing secret, which this response shows once. 409 conflict when the slug exists.',
      method: 'POST',
      path: `${V1}/honeypot/tenants`,
      auth: 'session-or-bearer',
      scope: 'write:tenants',
      tag: 'tenants',
      kind: 'write',
      uiPath: '/honeypot/tenants',
      errors: [409],
      body: Type.Object({
        slug: Type.String({ pattern: '^[a-z0-9-]{1,64}$', description: '1 to 64 of a-z, 0-9 and -.' }),
        name: Type.String({ minLength: 1, maxLength: 200 }),
        notes: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
      }, { examples: [{ slug: 'edge-us', name: 'Edge US honeypots', notes: 'us-east-1 and us-west-2 sites' }] }),
      response: {
        schemaId: 'svc-observatory-tenant-create.v1',
        fields: { tenant: Tenant, signingSecret: Type.String({ description: 'Shown once.' }) },
      },
      example: { schema: 'svc-observatory-tenant-create.v1', generatedAt, tenant: exampleTenant, signingSecret: 'whsec_3q2-7wEXAMPLEexampleEXAMPLEexampleEXAMPLE1' },
      handler: async ({ principal, body, requestId }) => tenants.create({ principal: who(principal), requestId }, body),
    }),
    defineEndpoint({
      id: 'rotateTenantSecret',
      title: 'Rotate a tenant signing secret',
      description: 'Issues a new signing secret (shown once). The previous secret keeps verifying for 24 hours, until previousValidUntil. Audited.',
      method: 'POST',
      path: `${V1}/honeypot/tenants/{slug}/rotate-secret`,
      auth: 'session-or-bearer',
      scope: 'write:tenants',
      tag: 'tenants',
      kind: 'write',
      uiPath: '/honeypot/tenants',
      params: SlugParams,
      body: EmptyBody,
      response: {
        schemaId: 'svc-observatory-tenant-secret.v1',
        fields: { tenant: Tenant, signingSecret: Type.String(), previousValidUntil: IsoDate },
      },
      example: {
        schema: 'svc-observatory-tenant-secret.v1',
        generatedAt,
        tenant: exampleTenant,
        signingSecret: 'whsec_9Zr-1qEXAMPLEexampleEXAMPLEexampleEXAMPLE2',
        previousValidUntil: '2026-11-24T08:00:00.000Z',
      },
      handler: async ({ principal, params, requestId }) => tenants.rotateSecret({ principal: who(principal), requestId }, params.slug),
    }),
    tenantChange('disableTenant', 'Disable a tenant', 'disable'),
    tenantChange('enableTenant', 'Enable a tenant', 'enable'),
  ];
}
