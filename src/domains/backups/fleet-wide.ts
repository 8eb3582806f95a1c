import { forbidden } from '../../platform/errors.ts';
import type { Principal } from '../../platform/http/registry.ts';

/**
 * The toolset-binding rule for backup work (docs/operations.md, "Security model"): snapshots,
 * restores, drills and the ladder cover the whole database, every toolset's data at once, and
 * cannot be narrowed to some toolsets without lying. A credential bound to toolsets may neither
 * read nor start them: 403 `forbidden`. Unbound tokens, sessions, the bridge and jobs (null) may.
 */
export function refuseBoundCredential(principal: Principal | null, what: string): void {
  if (principal === null || principal.toolsets === null) return;
  throw forbidden(`This token is bound to toolsets; ${what} spans every toolset.`);
}
