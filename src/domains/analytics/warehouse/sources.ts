import type { Db } from '../../../platform/db/client.ts';
import { MICRO } from '../../../platform/money.ts';
import type { CostAnalyticsFacts } from '../../cost/index.ts';
import type { EmpireAnalyticsFacts } from '../../empire/index.ts';
import type { HoneypotAnalyticsFacts } from '../../honeypot/index.ts';
import type { TriageAnalyticsFacts } from '../../triage/index.ts';
import type { SourceKey } from '../metrics.ts';

/** One warehouse row before it is stored: a metric's value (in millionths) and count on a day for one combination of dimensions. */
export interface FactRow {
  metric: string;
  day: string;
  workspaceId: string;
  toolset: string;
  severity: string;
  region: string;
  valueMicro: bigint;
  count: bigint;
}

/**
 * A fact source the rollup reads (docs/analytics/README.md, "Sources"): the days whose facts changed after
 * a time, and every fact of its metrics for a range of days, both read through the owning
 * domain's service on the rollup's transaction.
 */
export interface FactSource {
  key: SourceKey;
  /** UTC days (`YYYY-MM-DD`) with facts changed after `since`; every day with facts when null. */
  touchedDays(db: Db, since: Date | null): Promise<string[]>;
  /** Every row of the source's metrics for the days in [from, to). */
  facts(db: Db, from: string, to: string): Promise<FactRow[]>;
}

const blank = { workspaceId: '', toolset: '', severity: '' };
/** A count metric's row: its value is the count. */
const counted = (count: bigint) => ({ valueMicro: count * MICRO, count });

export function factSources(deps: {
  /** OBSERVATORY_REGION: the region dimension of everything this deployment records itself. */
  region: string;
  honeypot: HoneypotAnalyticsFacts;
  empire: EmpireAnalyticsFacts;
  triage: TriageAnalyticsFacts;
  cost: CostAnalyticsFacts;
}): FactSource[] {
  const { region, honeypot, empire, triage, cost } = deps;
  return [
    {
      key: 'honeypot-events',
      touchedDays: honeypot.eventDaysReceivedSince,
      async facts(db, from, to) {
        return (await honeypot.eventsPerDay(db, from, to)).flatMap((d) => {
          const base = { ...blank, day: d.day, workspaceId: d.tenant, region };
          const rows: FactRow[] = [{ ...base, metric: 'honeypot.events', ...counted(d.events) }];
          if (d.liarEvents > 0n) rows.push({ ...base, metric: 'honeypot.liar-events', ...counted(d.liarEvents) });
          return rows;
        });
      },
    },
    {
      key: 'honeypot-tarpits',
      touchedDays: honeypot.tarpitDaysOpenedSince,
      async facts(db, from, to) {
        return (await honeypot.tarpitsPerDay(db, from, to)).map((d) => ({ ...blank, metric: 'honeypot.tarpits-opened', day: d.day, workspaceId: d.tenant, region, ...counted(d.tarpits) }));
      },
    },
    {
      key: 'empire-events',
      touchedDays: empire.eventDaysReceivedSince,
      async facts(db, from, to) {
        return (await empire.eventsPerDay(db, from, to)).map((d) => ({ ...blank, metric: 'empire.events', day: d.day, workspaceId: d.tenant, toolset: d.toolset, region, ...counted(d.events) }));
      },
    },
    {
      key: 'empire-incidents',
      touchedDays: empire.incidentDaysChangedSince,
      async facts(db, from, to) {
        const opened = (await empire.incidentsOpenedPerDay(db, from, to)).map((d) => ({
          ...blank,
          metric: 'empire.incidents-opened',
          day: d.day,
          toolset: d.toolset,
          severity: d.severity,
          region,
          ...counted(d.incidents),
        }));
        const resolved = (await empire.incidentsResolvedPerDay(db, from, to)).flatMap((d) => {
          const base = { ...blank, day: d.day, toolset: d.toolset, severity: d.severity, region };
          return [
            { ...base, metric: 'empire.incidents-resolved', ...counted(d.incidents) },
            // Microseconds are millionths of a second: the value in seconds, exactly.
            { ...base, metric: 'empire.incident-open-seconds', valueMicro: d.openMicroSec, count: d.incidents },
          ];
        });
        return [...opened, ...resolved];
      },
    },
    {
      key: 'triage-decisions',
      touchedDays: triage.decisionDaysSince,
      async facts(db, from, to) {
        return (await triage.decisionsPerDay(db, from, to)).flatMap((d) => {
          const base = { ...blank, day: d.day, toolset: d.toolset, region };
          const rows: FactRow[] = [{ ...base, metric: 'triage.proposals-decided', ...counted(d.decided) }];
          if (d.accepted > 0n) rows.push({ ...base, metric: 'triage.proposals-accepted', ...counted(d.accepted) });
          return rows;
        });
      },
    },
    {
      key: 'cost-records',
      touchedDays: cost.recordDaysUpdatedSince,
      async facts(db, from, to) {
        return (await cost.costPerDay(db, from, to)).map((d) => ({
          ...blank,
          metric: 'cost.spend',
          day: d.day,
          workspaceId: d.workspace,
          toolset: d.toolset,
          region: d.region,
          valueMicro: d.amountMicroUsd,
          count: d.records,
        }));
      },
    },
  ];
}
