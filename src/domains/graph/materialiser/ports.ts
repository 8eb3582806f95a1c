import type { SQL } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import type { Positioned, Watermark } from '../../../platform/db/keyset.ts';
import type { AttestationRow, EmpireEventRow, HoneypotEventRow, IncidentRow, KeyRow, TenantRow } from './sources.ts';

/**
 * What the materialiser reads from the domains it draws the graph from (docs/graph/materialiser.md,
 * "Kinds and sources"). The graph says what it needs here; each source domain answers with reads
 * over its own tables (`honeypot/graph/`, `empire/graph/`, `provenance/graph/`), so no SQL of the
 * graph names another domain's table. Every read takes the executor it runs on: a run reads inside
 * its own transaction, a replay inside one read-only snapshot.
 *
 * Replay compares, in one statement, every identity the sources give with the graph rows, over
 * however many rows the sources hold: a source cannot hand its rows over in memory, so it hands a
 * relation (a SELECT the graph places in its own WITH clause), with the columns named below.
 */
export interface GraphSources {
  honeypot: HoneypotGraphSource;
  empire: EmpireGraphSource;
  provenance: ProvenanceGraphSource;
}

/** Rows received after `watermark` and at or before `cutoff`, oldest first by (time, id), at most `limit`. */
export type StreamRead<T> = (db: Db, watermark: Watermark | null, cutoff: Date, limit: number) => Promise<Positioned<T>[]>;

export interface HoneypotGraphSource {
  eventsAfter: StreamRead<HoneypotEventRow>;
  tenants(db: Db): Promise<TenantRow[]>;
  replay: {
    /** Distinct (slug, fp, ja4, vendor_id) of the events at or before `watermark` (none without one). */
    eventsUpTo(watermark: Watermark | null): SQL;
    /** (slug) of every tenant. */
    tenants(): SQL;
  };
}

export interface EmpireGraphSource {
  eventsAfter: StreamRead<EmpireEventRow>;
  /**
   * CAUSED_BY pairs a batch completes: (effect, cause) of one toolset where the effect's caused_by
   * is the cause's sender id, both at or before `end`, at least one of them in the batch.
   */
  causePairs(db: Db, batch: readonly EmpireEventRow[], end: Watermark): Promise<{ effectId: string; causeId: string }[]>;
  incidents(db: Db): Promise<IncidentRow[]>;
  replay: {
    /** (id, toolset, sender_id, tenant, caused_by, key_id, attestation_id, about) of the events at or before `watermark`. */
    eventsUpTo(watermark: Watermark | null): SQL;
    /** (id, toolset, event_ids) of every incident; event_ids a jsonb array. */
    incidents(): SQL;
  };
}

export interface ProvenanceGraphSource {
  attestationsAfter: StreamRead<AttestationRow>;
  keys(db: Db): Promise<KeyRow[]>;
  replay: {
    /** (id, key_id) of the attestations at or before `watermark`. */
    attestationsUpTo(watermark: Watermark | null): SQL;
    /** (id, toolset) of every toolset key. */
    keys(): SQL;
  };
}
