import type { EdgeKind, NodeKind } from '../kinds.ts';

/**
 * What each source row becomes in the graph (docs/graph/materialiser.md, "Kinds and sources"):
 * pure functions from rows the repository read to the nodes and edges to write. Props hold only
 * strings, numbers, booleans and ISO timestamps: never a secret, a token hash, an IP hash or an IP.
 */

export interface NodeRef {
  kind: NodeKind;
  key: string;
}
export interface NodeSpec extends NodeRef {
  toolset: string | null;
  tenant: string | null;
  props: Record<string, unknown>;
  /**
   * For a node of no toolset that only toolsets' events name (a tenant or fingerprint no honeypot
   * reported): those toolsets; absent or null when a toolset-free source has it (graph_nodes.named_by).
   */
  namedBy?: readonly string[] | null;
}

/** The toolsets that alone name a node seen from two sources: a toolset-free source (null) wins, else both lists. */
export function mergeNamedBy(a: readonly string[] | null | undefined, b: readonly string[] | null | undefined): readonly string[] | null {
  if (a === null || a === undefined || b === null || b === undefined) return null;
  return [...new Set([...a, ...b])].sort();
}
export interface EdgeSpec {
  kind: EdgeKind;
  src: NodeRef;
  dst: NodeRef;
  props: Record<string, unknown>;
}

/**
 * How a write treats a node or edge that is already there:
 * - `replace`: the source row is the node's whole truth (props, toolset, tenant are overwritten);
 * - `merge`: the row adds to aggregated counts (events, liarEvents summed; firstAt, lastAt widened);
 * - `ensure`: the row only names it (an edge needs its end); an existing one is left as it is.
 * Every mode brings a node or edge marked removed back.
 */
export type WriteMode = 'replace' | 'merge' | 'ensure';

export interface GraphBatch {
  nodes: Record<WriteMode, NodeSpec[]>;
  edges: Record<WriteMode, EdgeSpec[]>;
}

export const refKey = (ref: NodeRef) => `${ref.kind}|${ref.key}`;
export const edgeKey = (edge: Pick<EdgeSpec, 'kind' | 'src' | 'dst'>) => `${edge.kind}|${refKey(edge.src)}|${refKey(edge.dst)}`;

/**
 * A Fingerprint node's key: the fingerprint id itself. It hashes JA4 and user agent only
 * (docs/honeypot/enrichment.md), so one client seen by several honeypots is one node with a SEEN_ON edge
 * to each tenant: "which fingerprints were seen on two tenants" is a pattern, not a join.
 */
export const fingerprintKey = (fingerprintId: string) => fingerprintId;

/**
 * Who a placeholder belongs to: a toolset (its own nodes: keys, attestations), a tenant, or, for a
 * tenant or fingerprint only a toolset's event names, `namedBy` that toolset (NodeSpec.namedBy).
 */
export interface NodeOwner {
  toolset?: string | null;
  tenant?: string | null;
  namedBy?: string;
}

/** What a node looks like when an edge names it before (or without) its own source row. */
export function placeholderNode(ref: NodeRef, owner: NodeOwner = {}): NodeSpec {
  const namedBy = owner.namedBy === undefined ? null : [owner.namedBy];
  switch (ref.kind) {
    case 'Tenant':
      return { ...ref, toolset: null, tenant: ref.key, props: { slug: ref.key, registered: false }, namedBy };
    case 'Vendor':
      return { ...ref, toolset: null, tenant: null, props: { vendorId: ref.key, registered: false } };
    case 'Key':
      return { ...ref, toolset: owner.toolset ?? null, tenant: null, props: { keyId: ref.key, registered: false } };
    case 'Toolset':
      return { ...ref, toolset: ref.key, tenant: null, props: { name: ref.key } };
    case 'Fingerprint':
      return { ...ref, toolset: null, tenant: owner.tenant ?? null, props: { fingerprintId: ref.key.slice(ref.key.indexOf('/') + 1), events: 0, liarEvents: 0 }, namedBy };
    case 'Attestation':
      return { ...ref, toolset: owner.toolset ?? null, tenant: null, props: { attestationId: ref.key } };
    default:
      return { ...ref, toolset: owner.toolset ?? null, tenant: owner.tenant ?? null, props: {} };
  }
}

/** Collects a batch's writes, one per (mode, node) and per (mode, edge); `merge` writes add up. */
export class BatchBuilder {
  private readonly nodes = { replace: new Map<string, NodeSpec>(), merge: new Map<string, NodeSpec>(), ensure: new Map<string, NodeSpec>() };
  private readonly edges = { replace: new Map<string, EdgeSpec>(), merge: new Map<string, EdgeSpec>(), ensure: new Map<string, EdgeSpec>() };

  node(mode: WriteMode, spec: NodeSpec): NodeRef {
    const key = refKey(spec);
    const known = this.nodes[mode].get(key);
    this.nodes[mode].set(
      key,
      known === undefined || mode === 'replace'
        ? spec
        : { ...known, ...(mode === 'merge' ? { props: mergeCounts(known.props, spec.props) } : {}), namedBy: mergeNamedBy(known.namedBy, spec.namedBy) },
    );
    return { kind: spec.kind, key: spec.key };
  }

  /** Ensures a node exists (as its placeholder) and returns its reference. */
  ensure(ref: NodeRef, owner: NodeOwner = {}): NodeRef {
    return this.node('ensure', placeholderNode(ref, owner));
  }

  edge(mode: WriteMode, spec: EdgeSpec): void {
    const key = edgeKey(spec);
    const known = this.edges[mode].get(key);
    this.edges[mode].set(key, known && mode === 'merge' ? { ...known, props: mergeCounts(known.props, spec.props) } : known && mode === 'ensure' ? known : spec);
  }

  build(): GraphBatch {
    const list = <T>(m: Record<WriteMode, Map<string, T>>) => ({ replace: [...m.replace.values()], merge: [...m.merge.values()], ensure: [...m.ensure.values()] });
    return { nodes: list(this.nodes), edges: list(this.edges) };
  }
}

/**
 * Adds aggregated props the way the database's merge does (repository.ts `MERGE_PROPS`): counts
 * summed, firstAt the earlier, lastAt the later, lastUaClass the one of the later lastAt.
 */
export function mergeCounts(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a, ...b };
  for (const field of SUMMED_PROPS) if (field in a || field in b) out[field] = Number(a[field] ?? 0) + Number(b[field] ?? 0);
  const earlier = [a.firstAt, b.firstAt].filter((v): v is string => typeof v === 'string').sort()[0];
  if (earlier !== undefined) out.firstAt = earlier;
  const aLast = typeof a.lastAt === 'string' ? a.lastAt : null;
  const bLast = typeof b.lastAt === 'string' ? b.lastAt : null;
  if (aLast !== null || bLast !== null) {
    const bIsLater = aLast === null || (bLast !== null && bLast >= aLast);
    out.lastAt = bIsLater ? bLast : aLast;
    if ('lastUaClass' in a || 'lastUaClass' in b) out.lastUaClass = bIsLater ? (b.lastUaClass ?? a.lastUaClass) : (a.lastUaClass ?? b.lastUaClass);
  }
  return out;
}
export const SUMMED_PROPS = ['events', 'liarEvents'] as const;

// Stream sources

export interface HoneypotEventRow {
  tenantSlug: string;
  fingerprintId: string;
  ja4: string | null;
  vendorId: string | null;
  uaClass: string;
  ts: Date;
}

/**
 * Honeypot events are aggregated, never one node per event: per fingerprint (fleet-wide; per
 * tenant on its SEEN_ON edge), per JA4 cluster and per claimed vendor, counts and first/last times grow, so the graph is bounded by
 * fingerprints, clusters and vendors however many events arrive.
 */
export function addHoneypotEvents(batch: BatchBuilder, rows: readonly HoneypotEventRow[]): void {
  for (const row of rows) {
    const at = row.ts.toISOString();
    const liar = row.uaClass === 'LIAR' ? 1 : 0;
    const counted = { events: 1, liarEvents: liar, firstAt: at, lastAt: at };
    const fingerprint = batch.node('merge', {
      kind: 'Fingerprint',
      key: fingerprintKey(row.fingerprintId),
      toolset: null,
      tenant: null,
      props: { fingerprintId: row.fingerprintId, ...counted, lastUaClass: row.uaClass },
    });
    batch.edge('merge', { kind: 'SEEN_ON', src: fingerprint, dst: batch.ensure({ kind: 'Tenant', key: row.tenantSlug }), props: counted });
    if (row.ja4 !== null) {
      const cluster = batch.node('merge', { kind: 'Cluster', key: row.ja4, toolset: null, tenant: null, props: { ja4: row.ja4, events: 1, firstAt: at, lastAt: at } });
      batch.edge('merge', { kind: 'IN_CLUSTER', src: fingerprint, dst: cluster, props: { events: 1, firstAt: at, lastAt: at } });
    }
    if (row.vendorId !== null) batch.edge('merge', { kind: 'CLAIMS', src: fingerprint, dst: batch.ensure({ kind: 'Vendor', key: row.vendorId }), props: counted });
  }
}

export interface EmpireEventRow {
  eventId: string;
  toolset: string;
  senderId: string;
  eventType: string;
  ts: Date;
  receivedAt: Date;
  tenant: string | null;
  causedBy: string | null;
  keyId: string | null;
  attestationId: string | null;
  compatMode: boolean;
  /** payload.fingerprintId when it is a string (1 to 200 characters) and the event names a tenant. */
  aboutFingerprint: string | null;
}

/** One EmpireEvent node per event, with its edges to toolset, tenant, fingerprint, key and attestation (CAUSED_BY: `addCauses`). */
export function addEmpireEvents(batch: BatchBuilder, rows: readonly EmpireEventRow[]): void {
  for (const row of rows) {
    const event = batch.node('replace', {
      kind: 'EmpireEvent',
      key: row.eventId,
      toolset: row.toolset,
      tenant: row.tenant,
      props: {
        senderId: row.senderId,
        eventType: row.eventType,
        ts: row.ts.toISOString(),
        receivedAt: row.receivedAt.toISOString(),
        compatMode: row.compatMode,
        causedBy: row.causedBy,
      },
    });
    batch.edge('ensure', { kind: 'EMITTED_BY', src: event, dst: batch.ensure({ kind: 'Toolset', key: row.toolset }), props: {} });
    if (row.tenant !== null) {
      batch.edge('ensure', { kind: 'FROM_TENANT', src: event, dst: batch.ensure({ kind: 'Tenant', key: row.tenant }, { namedBy: row.toolset }), props: {} });
    }
    if (row.aboutFingerprint !== null) {
      batch.edge('ensure', { kind: 'ABOUT', src: event, dst: batch.ensure({ kind: 'Fingerprint', key: fingerprintKey(row.aboutFingerprint) }, { namedBy: row.toolset }), props: {} });
    }
    if (row.keyId !== null) batch.edge('ensure', { kind: 'SIGNED_BY', src: event, dst: batch.ensure({ kind: 'Key', key: row.keyId }, { toolset: row.toolset }), props: {} });
    if (row.attestationId !== null) {
      batch.edge('ensure', { kind: 'ATTESTS', src: batch.ensure({ kind: 'Attestation', key: row.attestationId }, { toolset: row.toolset }), dst: event, props: {} });
    }
  }
}

/** CAUSED_BY edges (effect → cause) between events both in the graph. */
export function addCauses(batch: BatchBuilder, pairs: readonly { effectId: string; causeId: string }[]): void {
  for (const { effectId, causeId } of pairs) batch.edge('ensure', { kind: 'CAUSED_BY', src: { kind: 'EmpireEvent', key: effectId }, dst: { kind: 'EmpireEvent', key: causeId }, props: {} });
}

export interface AttestationRow {
  id: string;
  toolset: string;
  source: string;
  eventType: string;
  acceptedAt: Date;
  compatMode: boolean;
  rejectionReason: string | null;
  signed: boolean;
  keyId: string | null;
}

/** One Attestation node per admission decision (admitted or rejected), BY_KEY to the key that signed it. */
export function addAttestations(batch: BatchBuilder, rows: readonly AttestationRow[]): void {
  for (const row of rows) {
    const attestation = batch.node('replace', {
      kind: 'Attestation',
      key: row.id,
      toolset: row.toolset,
      tenant: null,
      props: {
        attestationId: row.id,
        source: row.source,
        eventType: row.eventType,
        acceptedAt: row.acceptedAt.toISOString(),
        compatMode: row.compatMode,
        signed: row.signed,
        rejectionReason: row.rejectionReason,
      },
    });
    if (row.keyId !== null) batch.edge('ensure', { kind: 'BY_KEY', src: attestation, dst: batch.ensure({ kind: 'Key', key: row.keyId }, { toolset: row.toolset }), props: {} });
  }
}

// Small sources, compared whole each run

export interface TenantRow {
  slug: string;
  name: string;
  createdAt: Date;
  disabledAt: Date | null;
}
export const tenantNode = (row: TenantRow): NodeSpec => ({
  kind: 'Tenant',
  key: row.slug,
  toolset: null,
  tenant: row.slug,
  props: { slug: row.slug, name: row.name, registered: true, disabled: row.disabledAt !== null, createdAt: row.createdAt.toISOString() },
});

export interface VendorRow {
  id: string;
  name: string;
  category?: string;
  isAi?: boolean;
}
export const vendorNode = (row: VendorRow): NodeSpec => ({
  kind: 'Vendor',
  key: row.id,
  toolset: null,
  tenant: null,
  props: { vendorId: row.id, name: row.name, registered: true, ...(row.category !== undefined ? { category: row.category } : {}), ...(row.isAi !== undefined ? { isAi: row.isAi } : {}) },
});

export interface KeyRow {
  id: string;
  toolset: string;
  status: string;
  createdAt: Date;
  retiredAt: Date | null;
}
export const keyNode = (row: KeyRow): NodeSpec => ({
  kind: 'Key',
  key: row.id,
  toolset: row.toolset,
  tenant: null,
  props: { keyId: row.id, status: row.status, registered: true, createdAt: row.createdAt.toISOString(), retiredAt: row.retiredAt?.toISOString() ?? null },
});

export interface IncidentRow {
  id: string;
  toolset: string;
  severity: string;
  status: string;
  source: string;
  title: string;
  openedAt: Date;
  resolvedAt: Date | null;
  eventIds: readonly string[];
}
const TITLE_MAX = 200;
export const incidentNode = (row: IncidentRow): NodeSpec => ({
  kind: 'Incident',
  key: row.id,
  toolset: row.toolset,
  tenant: null,
  props: {
    severity: row.severity,
    status: row.status,
    source: row.source,
    title: row.title.length > TITLE_MAX ? `${row.title.slice(0, TITLE_MAX - 1)}…` : row.title,
    openedAt: row.openedAt.toISOString(),
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
  },
});

/** The props a registry-backed node keeps when its row is gone but an edge still names it. */
export function unregisteredProps(kind: NodeKind, key: string): Record<string, unknown> {
  return placeholderNode({ kind, key }).props;
}

/** Equal props, regardless of member order. */
export function sameProps(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.hasOwn(b, k) && JSON.stringify(a[k]) === JSON.stringify(b[k]));
}
