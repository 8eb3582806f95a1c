import type { Db } from '../../../platform/db/client.ts';
import { decodeTimeCursor, isUuid, pageOf } from '../../../platform/db/paging.ts';
import { notFound } from '../../../platform/errors.ts';
import { toolsetReach } from '../../../platform/http/auth.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import type { ViewFilters } from '../agents/types.ts';
import * as repo from './repository.ts';

/** Saved investigation views (created by accepting an investigation proposal; docs/triage/README.md). */

export const VIEWS_LIMIT_DEFAULT = 50;
export const VIEWS_LIMIT_MAX = 200;

export interface SavedView {
  id: string;
  name: string;
  toolset: string | null;
  rationale: string[];
  filters: ViewFilters;
  proposalId: string;
  createdBy: string;
  createdAt: string;
}

const view = (r: repo.SavedViewRow): SavedView => ({
  id: r.id,
  name: r.name,
  toolset: r.toolset,
  rationale: r.rationale,
  filters: r.filters as unknown as ViewFilters,
  proposalId: r.proposalId,
  createdBy: r.createdBy,
  createdAt: r.createdAt.toISOString(),
});

export function createSavedViewService(deps: { db: Db }) {
  return {
    async list(principal: Principal | null, input: { cursor?: string | undefined; limit?: number | undefined }) {
      const limit = input.limit ?? VIEWS_LIMIT_DEFAULT;
      const rows = await repo.listSavedViews(deps.db, { reach: toolsetReach(principal), cursor: decodeTimeCursor(input.cursor), limit: limit + 1 });
      const { page, nextCursor } = pageOf(rows, limit, (r) => r.createdAt);
      return { views: page.map(view), nextCursor };
    },
    async read(principal: Principal | null, id: string) {
      const row = isUuid(id) ? await repo.savedViewById(deps.db, id.toLowerCase()) : null;
      if (!row || (principal?.toolsets && (row.toolset === null || !principal.toolsets.has(row.toolset)))) throw notFound(`There is no saved view ${id}.`);
      return { view: view(row) };
    },
  };
}

export type SavedViewService = ReturnType<typeof createSavedViewService>;
