import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  appendLeaf,
  foldPath,
  type Frontier,
  frontierFits,
  frontierRoot,
  inclusionPath,
  nodeKey,
  type NodeRef,
  proofNodeRefs,
  rangeHash,
  rangeParts,
  splitPoint,
} from './merkle.ts';
import { mth, path } from '../../../test/helpers/rfc9162-reference.ts';

/** The tree module against the independent RFC 9162 reference (test/helpers/rfc9162-reference.ts). */
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest();
const leafOf = (i: number) => sha(Buffer.from(`leaf ${i}`)).toString('hex');

/** What the append path stores for `n` leaves: every completed node, and the frontier. */
function grow(n: number) {
  const leaves: string[] = [];
  const stored = new Map<string, string>();
  let frontier: Frontier = [];
  for (let i = 0; i < n; i++) {
    const leaf = leafOf(i);
    leaves.push(leaf);
    stored.set(nodeKey({ level: 0, index: i }), leaf);
    const next = appendLeaf(frontier, i, leaf);
    for (const node of next.completed) {
      expect(stored.has(nodeKey(node)), `node ${nodeKey(node)} completed twice`).toBe(false);
      stored.set(nodeKey(node), node.hash);
    }
    frontier = next.frontier;
  }
  return { leaves, stored, frontier };
}

/** The service's proof of leaf m from the stored nodes, reading only the refs it says it needs. */
function serviceProof(stored: Map<string, string>, m: number, n: number) {
  const needed = new Set(proofNodeRefs(m, n).map(nodeKey));
  const lookup = (ref: NodeRef) => {
    const key = nodeKey(ref);
    if (!needed.has(key)) throw new Error(`read ${key}, which proofNodeRefs did not name`);
    const hash = stored.get(key);
    if (hash === undefined) throw new Error(`node ${key} was never stored`);
    return hash;
  };
  return inclusionPath(m, n).map((step) => ({ hash: rangeHash(step.start, step.end, lookup), side: step.side }));
}

function checkTree(n: number, leavesToCheck: readonly number[]) {
  const { leaves, stored, frontier } = grow(n);
  const root = mth(leaves);
  expect(frontierRoot(frontier)).toBe(root);
  expect(frontierFits(frontier, n)).toBe(true);
  expect(frontierFits(frontier, n + 1)).toBe(false);
  // Every perfect aligned subtree is stored with the independent hash of its leaves.
  for (let level = 1; 2 ** level <= n; level++) {
    for (let index = 0; (index + 1) * 2 ** level <= n; index++) {
      expect(stored.get(nodeKey({ level, index })), `node ${level}:${index} of ${n}`).toBe(mth(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level)));
    }
  }
  for (const m of leavesToCheck) {
    const proof = serviceProof(stored, m, n);
    expect(proof, `leaf ${m} of ${n}`).toEqual(path(m, leaves));
    expect(foldPath(leaves[m]!, proof)).toBe(root);
    // O(log n) reads: one per level at most twice over.
    expect(proofNodeRefs(m, n).length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(n + 1)) + 1);
  }
}

describe('audit Merkle tree', () => {
  it('splits at the largest power of two below n', () => {
    expect([2, 3, 4, 5, 8, 9, 1025].map(splitPoint)).toEqual([1, 2, 2, 4, 4, 8, 1024]);
    expect(rangeParts(0, 7)).toEqual([{ level: 2, index: 0 }, { level: 1, index: 2 }, { level: 0, index: 6 }]);
    expect(rangeParts(8, 12)).toEqual([{ level: 2, index: 2 }]);
  });

  it('stores, roots and proves every leaf of every tree of 1 to 40 leaves as RFC 9162 does', () => {
    for (let n = 1; n <= 40; n++) checkTree(n, Array.from({ length: n }, (_, m) => m));
  });

  it('agrees with the independent tree for random sizes and leaves (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), (n, picks) => {
        checkTree(n, [0, n - 1, ...picks.map((p) => p % n)]);
      }),
      { numRuns: 30 },
    );
  });

  it('tells a frontier that does not describe the tree\'s size', () => {
    expect(frontierFits([], 0)).toBe(true);
    expect(frontierFits([leafOf(0)], 1)).toBe(true);
    expect(frontierFits([leafOf(0)], 2)).toBe(false);
    expect(frontierFits([null, leafOf(0)], 2)).toBe(true);
    expect(frontierFits(['not a hash'], 1)).toBe(false);
    expect(frontierFits({} as unknown as Frontier, 0)).toBe(false);
    // Too short for the size's bits, or holding a part the size has no bit for.
    expect(frontierFits([], 1)).toBe(false);
    expect(frontierFits([null, null], 4)).toBe(false);
    expect(frontierFits([null, leafOf(0)], 0)).toBe(false);
    expect(frontierFits([null, null, leafOf(0)], 2)).toBe(false);
    // A part must be the hash itself: not with more after it, not wrapped in a list.
    expect(frontierFits([`${leafOf(0)}0`], 1)).toBe(false);
    expect(frontierFits([leafOf(0).toUpperCase()], 1)).toBe(false);
    expect(frontierFits([[leafOf(0)]] as unknown as Frontier, 1)).toBe(false);
    // At most 64 levels, the most a leaf count can have.
    expect(frontierFits(Array.from({ length: 64 }, () => null), 0)).toBe(true);
    expect(frontierFits(Array.from({ length: 65 }, () => null), 0)).toBe(false);
  });

  it('has no root for an empty tree or a frontier that is not a list', () => {
    expect(frontierRoot([])).toBeNull();
    expect(frontierRoot([null, null])).toBeNull();
    expect(frontierRoot({} as unknown as Frontier)).toBeNull();
    expect(frontierRoot(null as unknown as Frontier)).toBeNull();
  });

  it('names the leaf itself among the nodes a proof reads', () => {
    // Leaf 5 of 11: siblings [4, 5), [6, 8), [0, 4) and [8, 11), the last as [8, 10) and [10, 11).
    expect(proofNodeRefs(5, 11)).toEqual([
      { level: 0, index: 5 },
      { level: 0, index: 4 },
      { level: 1, index: 3 },
      { level: 2, index: 0 },
      { level: 1, index: 4 },
      { level: 0, index: 10 },
    ]);
    expect(proofNodeRefs(0, 1)).toEqual([{ level: 0, index: 0 }]);
  });

  it('refuses an empty range', () => {
    expect(() => rangeParts(3, 3)).toThrow(new RangeError('empty range [3, 3)'));
    expect(() => rangeParts(4, 3)).toThrow(new RangeError('empty range [4, 3)'));
  });

  it('refuses a leaf outside the tree', () => {
    expect(() => inclusionPath(3, 3)).toThrow(new RangeError('leaf 3 is not in a tree of 3'));
    expect(() => inclusionPath(-1, 3)).toThrow(new RangeError('leaf -1 is not in a tree of 3'));
    expect(inclusionPath(0, 1)).toEqual([]);
  });
});
