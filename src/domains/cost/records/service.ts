import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { badRequest } from '../../../platform/errors.ts';
import { assertToolsetInReach, toolsetReach, type ToolsetCaller } from '../../../platform/http/auth.ts';
import { checkDay, checkDayRange, dayText } from '../../../platform/days.ts';
import { isToolsetName } from '../../../platform/toolset-name.ts';
import { type MicroBounds, MICRO, microToNumber, parseMicro, sumMicro } from '../../../platform/money.ts';
import * as repo from './repository.ts';

/**
 * Cost records and their rollups (spec D6 `POST cost/records`; B group 4 `cost/rollup`,
 * `cost/by-toolset`; docs/cost/README.md). A record is one day's cost of one (toolset, vendor, sku,
 * workspace, region), FOCUS's BilledCost for a one-day charge period; the same key posted again
 * replaces amount and units. Money is exact: integers of millionths end to end (src/platform/money.ts).
 */

/** Records one request may carry (spec D6). */
export const RECORDS_MAX = 5000;
/** Longest vendor, sku, workspace, region or filter value. Toolsets follow the toolset-name rule (3 to 128). */
export const TEXT_MAX = 128;
/** The longest `from`..`to` range a rollup or series covers, in days: a year, leap day included. */
export const RANGE_MAX_DAYS = 366;
export const AMOUNT_BOUNDS: MicroBounds = { min: -(10n ** 15n - 1n), max: 10n ** 15n - 1n };
/** One record's consumed quantity: 0 to 999,999,999,999 units (with at most 15 significant digits). */
export const UNITS_BOUNDS: MicroBounds = { min: 0n, max: (10n ** 12n - 1n) * MICRO };
export const ROLLUP_GROUPS = ['sku', 'toolset', 'vendor'] as const;
export type RollupGroup = (typeof ROLLUP_GROUPS)[number];

export interface CostRecordInput {
  date: string;
  toolset: string;
  vendor: string;
  sku: string;
  workspace?: string | undefined;
  region?: string | undefined;
  amountUsd: number;
  units?: number | undefined;
}

export interface RollupQuery {
  from: string;
  to: string;
  group?: RollupGroup | undefined;
  toolset?: string | undefined;
  vendor?: string | undefined;
  workspace?: string | undefined;
  region?: string | undefined;
}

/** Who a spend is summed for (budgets): empire-wide when both are absent. */
export interface SpendFilter {
  toolset?: string;
  workspace?: string;
}

/** Exact order of rollup rows: amount descending, then key ascending by UTF-16 code units. */
export function compareRollupRows(a: { key: string; amountMicroUsd: bigint }, b: { key: string; amountMicroUsd: bigint }): number {
  if (a.amountMicroUsd !== b.amountMicroUsd) return a.amountMicroUsd > b.amountMicroUsd ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

export function createCostRecordService(deps: { db: Db; clock: Clock; audit: AuditLog }) {
  const { db, clock, audit } = deps;

  /** Every record checked and turned into a row; duplicates of a key merged, the last one kept. */
  function checkedRows(principal: CallContext['principal'], records: readonly CostRecordInput[]): repo.CostRecordRow[] {
    if (records.length < 1 || records.length > RECORDS_MAX) {
      throw badRequest('invalid-body', `records must hold 1 to ${RECORDS_MAX} records (got ${records.length}).`, { field: 'body.records' });
    }
    const byKey = new Map<string, repo.CostRecordRow>();
    records.forEach((r, i) => {
      const at = `body.records[${i}]`;
      checkDay(r.date, `${at}.date`);
      if (!isToolsetName(r.toolset)) {
        throw badRequest('invalid-toolset', `${at}.toolset must be a toolset name: 3 to 128 characters, a letter, then letters, digits or - (got ${JSON.stringify(r.toolset.slice(0, 140))}).`, {
          field: `${at}.toolset`,
        });
      }
      assertToolsetInReach(principal, r.toolset, 'write cost records of');
      const row: repo.CostRecordRow = {
        day: r.date,
        toolset: r.toolset,
        vendor: r.vendor,
        sku: r.sku,
        workspace: r.workspace ?? '',
        region: r.region ?? '',
        amountMicroUsd: parseMicro(r.amountUsd, `${at}.amountUsd`, AMOUNT_BOUNDS),
        unitsMicro: r.units === undefined ? 0n : parseMicro(r.units, `${at}.units`, UNITS_BOUNDS),
      };
      const key = JSON.stringify([row.day, row.toolset, row.vendor, row.sku, row.workspace, row.region]);
      // Map.set on a known key keeps its place and takes the later value: the last one wins.
      byKey.set(key, row);
    });
    return [...byKey.values()];
  }

  return {
    /**
     * D6 `POST cost/records`: inserts or replaces each record by (date, toolset, vendor, sku,
     * workspace, region) in one statement, audited as `cost.records-upsert` with counts (not the
     * batch). `upserted` counts distinct keys written: duplicates inside the request count once.
     */
    async upsert(ctx: CallContext, records: readonly CostRecordInput[]): Promise<{ ok: true; upserted: number }> {
      const rows = checkedRows(ctx.principal, records);
      const now = clock.now();
      const days = rows.map((r) => r.day).sort();
      const toolsets = [...new Set(rows.map((r) => r.toolset))].sort();
      return withTransaction(db, async (tx) => {
        const { upserted, inserted } = await repo.upsertRecords(tx, rows, now);
        await audit.record(tx, {
          verb: 'cost.records-upsert',
          target: `cost-records:${days[0]}..${days[days.length - 1]}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: null,
          after: {
            received: records.length,
            upserted,
            inserted,
            replaced: upserted - inserted,
            firstDay: days[0],
            lastDay: days[days.length - 1],
            toolsetCount: toolsets.length,
            toolsets: toolsets.slice(0, 20),
          },
          requestId: ctx.requestId,
        });
        return { ok: true as const, upserted };
      });
    },

    /**
     * B `GET cost/rollup`: sums per sku, toolset or vendor over [from, to), exact, in the documented
     * order. A token bound to toolsets sums only its toolsets' records (a toolset filter outside them is 403).
     */
    async rollup(query: RollupQuery, principal: ToolsetCaller) {
      checkDayRange(query.from, query.to, RANGE_MAX_DAYS);
      if (query.toolset !== undefined) assertToolsetInReach(principal, query.toolset, 'read the cost of');
      const toolsetIn = toolsetReach(principal) ?? undefined;
      const group = query.group ?? 'toolset';
      const filters = { workspace: query.workspace ?? null, toolset: query.toolset ?? null, vendor: query.vendor ?? null, region: query.region ?? null };
      const rows = (await repo.rollup(db, group, query.from, query.to, { toolset: query.toolset, vendor: query.vendor, workspace: query.workspace, region: query.region, toolsetIn })).sort(
        compareRollupRows,
      );
      return {
        group,
        filters,
        from: query.from,
        to: query.to,
        total: { amountUsd: microToNumber(sumMicro(rows.map((r) => r.amountMicroUsd))), rows: rows.reduce((n, r) => n + r.records, 0) },
        rows: rows.map((r) => ({ key: r.key, amountUsd: microToNumber(r.amountMicroUsd), units: microToNumber(r.unitsMicro), dayCount: r.dayCount })),
      };
    },

    /** B `GET cost/by-toolset`: one toolset's amount per day of [from, to), every day listed (0 without records). */
    async byToolset(query: { toolset: string; from: string; to: string }, principal: ToolsetCaller) {
      const range = checkDayRange(query.from, query.to, RANGE_MAX_DAYS);
      assertToolsetInReach(principal, query.toolset, 'read the cost of');
      const known = new Map((await repo.dailyAmounts(db, query.toolset, query.from, query.to)).map((d) => [d.day, d.amountMicroUsd]));
      const series: { dimDate: string; amountUsd: number }[] = [];
      for (let day = range.from; day < range.to; day++) {
        const dimDate = dayText(day);
        series.push({ dimDate, amountUsd: microToNumber(known.get(dimDate) ?? 0n) });
      }
      return { toolset: query.toolset, from: query.from, to: query.to, total: { amountUsd: microToNumber(sumMicro(known.values())) }, series };
    },

    /**
     * The exact spend in millionths of a dollar over [from, to) (`YYYY-MM-DD`, `to` exclusive) of
     * one toolset, one workspace, both, or the whole empire (no filter); 0n when `from` is not
     * before `to`. For the budgets; no range cap. Throws 400 `invalid-date` for a date that is not
     * a calendar date.
     */
    async spendMicroUsd(filter: SpendFilter, from: string, to: string): Promise<bigint> {
      const start = checkDay(from, 'from');
      const end = checkDay(to, 'to');
      if (start >= end) return 0n;
      return repo.totalAmount(db, from, to, { toolset: filter.toolset, workspace: filter.workspace });
    },
  };
}

export type CostRecordService = ReturnType<typeof createCostRecordService>;
