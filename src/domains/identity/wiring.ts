import type { AuditLog } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import { identityJobs } from './jobs.ts';
import { passkeyEndpoints } from './passkeys/endpoints.ts';
import { createPasskeyService, type PasskeyService } from './passkeys/service.ts';
import { identityEndpoints } from './tokens/endpoints.ts';
import { createIdentityService, type IdentityService } from './tokens/service.ts';

export interface IdentityDomain {
  /** Operators, API tokens, sessions and the credential resolver every request is authenticated with. */
  tokens: IdentityService;
  /** Passkeys and the WebAuthn ceremonies that open sessions. */
  passkeys: PasskeyService;
  endpoints(): Endpoint[];
  jobs(): JobDefinition[];
}

/** Builds identity (spec D1, docs/operations.md): operators, tokens and sessions (./tokens), passkeys (./passkeys). */
export function createIdentityDomain(deps: { db: Db; clock: Clock; audit: AuditLog; config: Config }): IdentityDomain {
  const { db, clock, audit, config } = deps;
  const tokens = createIdentityService({ db, clock, audit, sessionTtlHours: config.sessionTtlHours });
  const passkeys = createPasskeyService({ db, clock, audit, identity: tokens, webauthn: config.webauthn });
  return {
    tokens,
    passkeys,
    endpoints: () => [...identityEndpoints(tokens), ...passkeyEndpoints(passkeys, { cookieSecure: config.cookieSecure })],
    jobs: () => identityJobs({ tokens, passkeys }),
  };
}
