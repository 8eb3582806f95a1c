import { createHash } from 'node:crypto';

/**
 * The materialisation digest (docs/graph/materialiser.md, "Digest"): a hash of the SET of node and
 * edge identities the graph holds, never of their props (counts and statuses change without the
 * graph's shape changing). It is kept incrementally so a run costs what it changes, not what the
 * graph holds: the accumulator is the sum, modulo 2^256, of SHA-256 of every present identity, so
 * adding an element adds its hash and removing it subtracts it, in any order.
 */

export const DIGEST_VERSION = 'graph-digest-v1';
const MODULUS = 1n << 256n;
const CHUNKS = 8;

export const nodeIdentity = (kind: string, key: string) => `n|${kind}|${key}`;
export const edgeIdentity = (kind: string, srcKind: string, srcKey: string, dstKind: string, dstKey: string) => `e|${kind}|${srcKind}|${srcKey}|${dstKind}|${dstKey}`;

/** SHA-256 of the identity's UTF-8 bytes, as a 256-bit number. */
export function identityHash(identity: string): bigint {
  return BigInt(`0x${createHash('sha256').update(identity, 'utf8').digest('hex')}`);
}

/** The accumulator of a set of identities (each counted once per occurrence: pass a set). */
export function accumulate(identities: Iterable<string>): bigint {
  let acc = 0n;
  for (const identity of identities) acc = (acc + identityHash(identity)) % MODULUS;
  return acc;
}

export const addAcc = (a: bigint, b: bigint) => (a + b) % MODULUS;
export const subtractAcc = (a: bigint, b: bigint) => (((a - b) % MODULUS) + MODULUS) % MODULUS;

/**
 * The accumulator from the per-chunk sums SQL computes: the database splits each SHA-256 into
 * eight 32-bit big-endian words and sums each word over the rows (exact in numeric), so
 * Σ hash = Σ_i sum_i · 2^(32·(7−i)); this folds them back and reduces modulo 2^256.
 */
export function accFromChunkSums(sums: readonly (string | number | bigint | null)[]): bigint {
  if (sums.length !== CHUNKS) throw new Error(`expected ${CHUNKS} chunk sums, got ${sums.length}`);
  let acc = 0n;
  for (let i = 0; i < CHUNKS; i++) acc += BigInt(sums[i] ?? 0) << BigInt(32 * (CHUNKS - 1 - i));
  return acc % MODULUS;
}

export const accToHex = (acc: bigint) => acc.toString(16).padStart(64, '0');
export const accFromHex = (hex: string | null | undefined) => (hex ? BigInt(`0x${hex}`) : 0n);

/** The digest a run stores: SHA-256 (hex) of the version, the accumulator and the counts. */
export function digestOf(acc: bigint, nodes: number, edges: number): string {
  return createHash('sha256').update(`${DIGEST_VERSION}|${accToHex(acc)}|${nodes}|${edges}`, 'utf8').digest('hex');
}
