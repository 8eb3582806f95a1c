/**
 * Checks an audit fact's Merkle inclusion proof in the browser, from the answer of
 * `GET {v1}/audit/chain/{id}` alone, with WebCrypto's SHA-256. Nothing the service says about
 * validity is used: the fact's entryHash is recomputed from its fields, the siblings are folded
 * from that recomputed leaf, and only then compared with the root the answer publishes.
 *
 * The rules are docs/audit-chain/README.md's ("Verifying a proof"), the same ones the offline verifier
 * (`npm run cli -- audit:verify-proof`) follows:
 * - entryHash = SHA-256 over the UTF-8 bytes of the RFC 8785 canonical JSON of
 *   {seqNo, source, sourceId, kind, actor, ts, payload, prevHash}, seqNo as the decimal string shown;
 * - the leaf is the entryHash; an interior node is SHA-256(left ‖ right) over the raw 32-byte
 *   digests, with no RFC 9162 0x00/0x01 prefixes;
 * - the siblings are folded with RFC 9162 §2.1.3.2's bit walk, which also fixes how many siblings
 *   there are and which side each is on.
 */

export type ProofVerdict =
  | {
      ok: true;
      seqNo: string;
      leafIndex: number;
      leafCount: number;
      /** The entryHash recomputed from the fact's fields (equal to the one shown). */
      entryHash: string;
      /** The root the siblings fold to, computed here. */
      recomputedRoot: string;
      /** The root the answer publishes (`proof.rootHash`); equal to recomputedRoot. */
      publishedRoot: string;
    }
  | {
      ok: false;
      reason: string;
      /** What could be computed before the check failed (null: not reached). */
      entryHash: string | null;
      recomputedRoot: string | null;
      publishedRoot: string | null;
    };

type Subtle = Pick<SubtleCrypto, 'digest'>;

const HEX64 = /^[0-9a-f]{64}$/;
const FACT_STRINGS = ['seqNo', 'source', 'sourceId', 'kind', 'ts', 'prevHash', 'entryHash'] as const;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Lone surrogates have no UTF-8 form: RFC 8785 refuses them. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * RFC 8785 (JSON Canonicalization Scheme) for a value parsed from JSON: object members sorted by
 * name as UTF-16 code units at every depth, no whitespace, strings and numbers written as
 * ECMAScript's JSON.stringify writes them (which is what the RFC specifies).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${value} has no JSON form`);
    return JSON.stringify(value);
  }
  if (typeof value === 'string') {
    if (LONE_SURROGATE.test(value)) throw new Error('a string holds a lone surrogate');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    // The default sort compares UTF-16 code units, as RFC 8785 §3.2.3 asks.
    const names = Object.keys(value)
      .filter((name) => value[name] !== undefined)
      .sort();
    return `{${names.map((name) => `${canonicalJson(name)}:${canonicalJson(value[name])}`).join(',')}}`;
  }
  throw new Error(`a ${typeof value} has no JSON form`);
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

async function sha256(subtle: Subtle, bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await subtle.digest('SHA-256', bytes));
}

/** node(left, right) = SHA-256(left ‖ right) over the raw digests. */
async function nodeHash(subtle: Subtle, left: Uint8Array<ArrayBuffer>, right: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const joined = new Uint8Array(left.length + right.length);
  joined.set(left, 0);
  joined.set(right, left.length);
  return sha256(subtle, joined);
}

/** The fact's entryHash, recomputed from the fields the answer shows. */
export async function entryHashOf(fact: Record<string, unknown>, subtle: Subtle = globalThis.crypto.subtle): Promise<string> {
  const body = {
    seqNo: fact.seqNo,
    source: fact.source,
    sourceId: fact.sourceId,
    kind: fact.kind,
    actor: fact.actor,
    ts: fact.ts,
    payload: fact.payload,
    prevHash: fact.prevHash,
  };
  return toHex(await sha256(subtle, new TextEncoder().encode(canonicalJson(body))));
}

/**
 * Folds the siblings from `leaf` as RFC 9162 §2.1.3.2 does; answers the root, or why the path
 * does not fit leaf `index` of a tree of `count` leaves (a wrong side, too many or too few).
 */
async function foldSiblings(
  subtle: Subtle,
  leaf: string,
  index: bigint,
  count: bigint,
  siblings: readonly unknown[],
): Promise<{ root: string } | { error: string }> {
  let fn = index;
  let sn = count - 1n;
  let running = fromHex(leaf);
  for (const [i, sibling] of siblings.entries()) {
    if (!isObject(sibling) || typeof sibling.hash !== 'string' || !HEX64.test(sibling.hash)) return { error: `proof.siblings[${i}].hash is not 64 lowercase hex digits` };
    if (sn === 0n) return { error: `the proof has ${siblings.length} siblings; leaf ${index} of a ${count}-leaf tree has ${i}` };
    const hash = fromHex(sibling.hash);
    if ((fn & 1n) === 1n || fn === sn) {
      if (sibling.side !== 'left') return { error: `proof.siblings[${i}] must be on the left for leaf ${index} of ${count}` };
      running = await nodeHash(subtle, hash, running);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      if (sibling.side !== 'right') return { error: `proof.siblings[${i}] must be on the right for leaf ${index} of ${count}` };
      running = await nodeHash(subtle, running, hash);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) return { error: `the proof has ${siblings.length} siblings: too few for leaf ${index} of a ${count}-leaf tree` };
  return { root: toHex(running) };
}

/**
 * Verifies `{fact, head, proof}` as answered by `GET {v1}/audit/chain/{id}`. Pure: it reads
 * nothing but its argument and the digest function.
 */
export async function verifyInclusionProof(answer: unknown, subtle: Subtle = globalThis.crypto.subtle): Promise<ProofVerdict> {
  let entryHash: string | null = null;
  let recomputedRoot: string | null = null;
  let publishedRoot: string | null = null;
  const fail = (reason: string): ProofVerdict => ({ ok: false, reason, entryHash, recomputedRoot, publishedRoot });

  if (!isObject(answer)) return fail('the answer is not a JSON object');
  const { fact, proof, head } = answer;
  if (!isObject(fact)) return fail('the answer has no fact');
  if (!isObject(proof)) return fail('the answer has no proof');
  if (typeof proof.rootHash === 'string') publishedRoot = proof.rootHash;

  // 1. The leaf: the fact's own hash, from its fields.
  for (const field of FACT_STRINGS) if (typeof fact[field] !== 'string') return fail(`fact.${field} is not a string`);
  if (!(fact.actor === null || typeof fact.actor === 'string')) return fail('fact.actor is neither a string nor null');
  if (!('payload' in fact)) return fail('fact.payload is missing');
  const seqNo = fact.seqNo as string;
  if (!/^[1-9][0-9]*$/.test(seqNo)) return fail(`fact.seqNo "${seqNo}" is not a decimal number from 1`);
  try {
    entryHash = await entryHashOf(fact, subtle);
  } catch (cause) {
    return fail(`the fact has no canonical JSON form: ${cause instanceof Error ? cause.message : String(cause)}`);
  }

  // 2. The position and the proof's shape.
  const { leafIndex, leafCount, leafHash, siblings } = proof;
  if (!Number.isSafeInteger(leafIndex) || !Number.isSafeInteger(leafCount)) return fail('proof.leafIndex and proof.leafCount must be whole numbers');
  const index = BigInt(leafIndex as number);
  const count = BigInt(leafCount as number);
  if (index < 0n || count < 1n || index >= count) return fail(`proof.leafIndex ${index} is not inside a tree of ${count} leaves`);
  if (index !== BigInt(seqNo) - 1n) return fail(`proof.leafIndex ${index} is not fact ${seqNo}'s position (${BigInt(seqNo) - 1n})`);
  if (isObject(head) && typeof head.seqNo === 'string' && /^[0-9]+$/.test(head.seqNo) && count > BigInt(head.seqNo)) {
    return fail(`proof.leafCount ${count} is beyond the chain's head (fact ${head.seqNo})`);
  }
  if (publishedRoot === null || !HEX64.test(publishedRoot)) return fail('proof.rootHash is not 64 lowercase hex digits');
  if (!Array.isArray(siblings)) return fail('proof.siblings is not a list');

  // 3. Fold from the recomputed leaf (never from the hashes the answer states), then compare.
  const folded = await foldSiblings(subtle, entryHash, index, count, siblings);
  if ('error' in folded) return fail(folded.error);
  recomputedRoot = folded.root;
  if (entryHash !== fact.entryHash) return fail(`the fact's fields hash to ${entryHash}, not to the entryHash shown (${String(fact.entryHash)})`);
  if (leafHash !== entryHash) return fail('proof.leafHash is not the fact\'s entryHash');
  if (recomputedRoot !== publishedRoot) return fail('the siblings fold to a different root than the published one');
  return { ok: true, seqNo, leafIndex: Number(index), leafCount: Number(count), entryHash, recomputedRoot, publishedRoot };
}
