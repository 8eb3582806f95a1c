import { sha256Hex } from '../crypto.ts';
import { canonicalJsonFast } from './canonical.ts';

export const GENESIS_HASH = '0'.repeat(64);

export const FACT_SOURCES = [
  'OperatorAudit',
  'TrustDriftEvent',
  'RestoreVerification',
  'RegionFailoverDrill',
  'ComplianceEvaluation',
  'CostAlert',
] as const;
export type FactSource = (typeof FACT_SOURCES)[number];

export const FACT_KINDS = [
  'operator',
  'drift',
  'backup',
  'region-drill',
  'compliance',
  'cost-alert-fired',
  'cost-alert-acknowledged',
  'cost-alert-resolved',
] as const;
export type FactKind = (typeof FACT_KINDS)[number];

/** The hashed content of a fact: everything but its id and its own hash. */
export interface FactBody {
  seqNo: number;
  source: FactSource;
  sourceId: string;
  kind: FactKind;
  actor: string | null;
  ts: string;
  payload: unknown;
  prevHash: string;
}

/**
 * entryHash = SHA-256 over the RFC 8785 canonical JSON of the fact body. seqNo is hashed as a
 * decimal string, the form the API shows, so a verifier outside the service hashes the same bytes.
 */
export function entryHashOf(fact: FactBody): string {
  // Fields are picked, not spread: a stored row also carries its id and its own hash.
  return sha256Hex(
    canonicalJsonFast({
      seqNo: String(fact.seqNo),
      source: fact.source,
      sourceId: fact.sourceId,
      kind: fact.kind,
      actor: fact.actor,
      ts: fact.ts,
      payload: fact.payload,
      prevHash: fact.prevHash,
    }),
  );
}
