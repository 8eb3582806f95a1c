import { createHash } from 'node:crypto';

/**
 * The Merkle tree over the audit chain (docs/audit-chain/README.md, "The Merkle tree"). RFC 9162's shape: the
 * tree over n leaves splits at k, the largest power of two smaller than n, into the tree over the
 * first k leaves and the tree over the rest. Leaf i (0-based) is fact seqNo i + 1 and its hash is
 * the fact's entryHash; an interior node is SHA-256 over the raw 32 bytes of its left child then
 * the raw 32 bytes of its right child (no RFC 9162 0x00/0x01 prefixes: docs/audit-chain/README.md says why).
 *
 * Only perfect aligned subtrees are stored: node (level L, index i) covers leaves
 * [i·2^L, (i+1)·2^L). Level 0 is the facts' own entryHash; levels ≥ 1 live in audit_merkle_nodes.
 * Every subtree hash a proof or a root needs is a fold of O(log n) of them.
 */

export type Hex = string;

export interface NodeRef {
  level: number;
  index: number;
}

export interface StoredNode extends NodeRef {
  hash: Hex;
}

export type Side = 'left' | 'right';

export const nodeKey = (ref: NodeRef): string => `${ref.level}:${ref.index}`;

/** SHA-256(left bytes ‖ right bytes) over the raw digests. */
export function nodeHash(left: Hex, right: Hex): Hex {
  return createHash('sha256').update(Buffer.from(left, 'hex')).update(Buffer.from(right, 'hex')).digest('hex');
}

/** The largest power of two strictly smaller than n (n ≥ 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

const isPowerOfTwo = (n: number): boolean => n >= 1 && 2 ** Math.round(Math.log2(n)) === n;

/**
 * The stored nodes whose fold gives the hash of leaves [start, end), left to right: the range
 * split RFC 9162's way until every part is a perfect subtree. Only ranges that arise in the tree
 * (aligned to their split) are asked for, so every part is an aligned stored node.
 */
export function rangeParts(start: number, end: number): NodeRef[] {
  const size = end - start;
  if (size < 1) throw new RangeError(`empty range [${start}, ${end})`);
  if (isPowerOfTwo(size)) return [{ level: Math.round(Math.log2(size)), index: start / size }];
  const k = splitPoint(size);
  return [...rangeParts(start, start + k), ...rangeParts(start + k, end)];
}

/** The hash of leaves [start, end) from the stored nodes `lookup` answers (RFC 9162 MTH). */
export function rangeHash(start: number, end: number, lookup: (ref: NodeRef) => Hex): Hex {
  const size = end - start;
  if (isPowerOfTwo(size)) return lookup({ level: Math.round(Math.log2(size)), index: start / size });
  const k = splitPoint(size);
  return nodeHash(rangeHash(start, start + k, lookup), rangeHash(start + k, end, lookup));
}

export interface PathStep {
  side: Side;
  start: number;
  end: number;
}

/**
 * RFC 9162 PATH(m, D[start:end]) bottom-up: for each level from the leaf to the root, the range
 * whose hash is the sibling and on which side of the running hash it goes.
 */
export function inclusionPath(leafIndex: number, leafCount: number): PathStep[] {
  if (!(leafIndex >= 0 && leafIndex < leafCount)) throw new RangeError(`leaf ${leafIndex} is not in a tree of ${leafCount}`);
  const steps: PathStep[] = [];
  let start = 0;
  let end = leafCount;
  // Top-down, then reversed: the deepest sibling comes first in a proof.
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (leafIndex < start + k) {
      steps.push({ side: 'right', start: start + k, end });
      end = start + k;
    } else {
      steps.push({ side: 'left', start, end: start + k });
      start += k;
    }
  }
  return steps.reverse();
}

/** Every stored node a proof of `leafIndex` in a tree of `leafCount` reads (O(log n), no duplicates). */
export function proofNodeRefs(leafIndex: number, leafCount: number): NodeRef[] {
  const refs = new Map<string, NodeRef>();
  const add = (ref: NodeRef) => refs.set(nodeKey(ref), ref);
  add({ level: 0, index: leafIndex });
  for (const step of inclusionPath(leafIndex, leafCount)) for (const ref of rangeParts(step.start, step.end)) add(ref);
  return [...refs.values()];
}

/** Folds a leaf hash up its siblings: the root the proof claims. */
export function foldPath(leafHash: Hex, siblings: readonly { hash: Hex; side: Side }[]): Hex {
  let running = leafHash;
  for (const s of siblings) running = s.side === 'left' ? nodeHash(s.hash, running) : nodeHash(running, s.hash);
  return running;
}

/**
 * The right edge of a tree of `size` leaves: `frontier[L]` is the hash of the perfect subtree of
 * 2^L leaves in its decomposition when bit L of `size` is set, null otherwise. It is all an append
 * needs (a binary counter) and all the root needs.
 */
export type Frontier = (Hex | null)[];

/**
 * Appends leaf number `size` (0-based) to a tree of `size` leaves: the new frontier and the stored
 * nodes (level ≥ 1) the leaf completes, lowest first.
 */
export function appendLeaf(frontier: Frontier, size: number, leafHash: Hex): { frontier: Frontier; completed: StoredNode[] } {
  const next = [...frontier];
  const completed: StoredNode[] = [];
  let running = leafHash;
  let level = 0;
  // Past the end of the list a slot is undefined, as empty as a null one.
  while (next[level]) {
    running = nodeHash(next[level]!, running);
    next[level] = null;
    level += 1;
    completed.push({ level, index: Math.floor(size / 2 ** level), hash: running });
  }
  next[level] = running;
  return { frontier: next, completed };
}

/** The root of the tree the frontier describes (null for an empty tree): right-most part first. */
export function frontierRoot(frontier: Frontier): Hex | null {
  if (!Array.isArray(frontier)) return null;
  let root: Hex | null = null;
  for (const part of frontier) if (part) root = root === null ? part : nodeHash(part, root);
  return root;
}

/** True when the frontier has exactly one part per set bit of `size`. */
export function frontierFits(frontier: Frontier, size: number): boolean {
  if (!Array.isArray(frontier) || frontier.length > 64) return false;
  for (let level = 0; level < Math.max(frontier.length, Math.ceil(Math.log2(size + 1))); level++) {
    const bit = Math.floor(size / 2 ** level) % 2 === 1;
    const part = frontier[level] ?? null;
    if (bit !== (typeof part === 'string' && /^[0-9a-f]{64}$/.test(part))) return false;
  }
  return true;
}
