import { createHash } from 'node:crypto';

/**
 * An independent reference for the audit tree, written from RFC 9162 §2.1.1 and §2.1.3.1 (MTH and
 * PATH over the whole leaf list, recursively) with this service's node hash: SHA-256 over the raw
 * bytes of the left then the right child, and leaf = entryHash. The tree module and the offline
 * proof check are tested against it; neither shares its algorithm.
 */

export interface ReferenceSibling {
  hash: string;
  side: 'left' | 'right';
}

const nodeHash = (left: string, right: string) =>
  createHash('sha256').update(Buffer.concat([Buffer.from(left, 'hex'), Buffer.from(right, 'hex')])).digest('hex');

/** The largest power of two below n (n > 1). */
function splitOf(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH: the root over `leaves` (hex hashes, at least one). */
export function mth(leaves: readonly string[]): string {
  if (leaves.length === 1) return leaves[0]!;
  const k = splitOf(leaves.length);
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

/** PATH: the inclusion path of leaf `m`, leaf first, each sibling with its side. */
export function path(m: number, leaves: readonly string[]): ReferenceSibling[] {
  if (leaves.length === 1) return [];
  const k = splitOf(leaves.length);
  return m < k
    ? [...path(m, leaves.slice(0, k)), { hash: mth(leaves.slice(k)), side: 'right' }]
    : [...path(m - k, leaves.slice(k)), { hash: mth(leaves.slice(0, k)), side: 'left' }];
}
