import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * The offline check of a saved `GET {v1}/audit/chain/{id}` answer (`npm run cli --
 * audit:verify-proof <file>`), written from docs/audit-chain/README.md alone: it shares no code with the
 * service's tree (which builds proofs by splitting ranges); it follows RFC 9162 §2.1.3.2's
 * bit-walking verification with this tree's node hash (no 0x00/0x01 prefixes).
 */

export type ProofCheck = { ok: true; message: string } | { ok: false; reason: string };

const HEX64 = /^[0-9a-f]{64}$/;
const sha256 = (bytes: Buffer | string): Buffer => createHash('sha256').update(bytes).digest();
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function verifySavedFact(saved: unknown): ProofCheck {
  const fail = (reason: string): ProofCheck => ({ ok: false, reason });
  if (!isObject(saved)) return fail('the file is not a JSON object');
  const { fact, proof, head } = saved;
  if (!isObject(fact)) return fail('no "fact" object (save the whole answer of GET {v1}/audit/chain/{id})');
  if (!isObject(proof)) return fail('no "proof" object');

  // 1. The fact's own hash, from its fields.
  for (const field of ['seqNo', 'source', 'sourceId', 'kind', 'ts', 'prevHash', 'entryHash'] as const) {
    if (typeof fact[field] !== 'string') return fail(`fact.${field} is not a string`);
  }
  if (!(fact.actor === null || typeof fact.actor === 'string')) return fail('fact.actor is neither a string nor null');
  if (!('payload' in fact)) return fail('fact.payload is missing (the single-fact answer carries it)');
  const seqText = fact.seqNo as string;
  if (!/^[1-9][0-9]*$/.test(seqText)) return fail(`fact.seqNo "${seqText}" is not a decimal number from 1`);
  const body = {
    seqNo: seqText,
    source: fact.source,
    sourceId: fact.sourceId,
    kind: fact.kind,
    actor: fact.actor,
    ts: fact.ts,
    payload: fact.payload,
    prevHash: fact.prevHash,
  };
  // RFC 8785 refuses a string with a lone surrogate (a damaged or tampered file; the service never
  // appends one): that is a fact that cannot verify, not a crash of the offline check.
  let canonical: string | undefined;
  try {
    canonical = canonicalize(body);
  } catch (error) {
    return fail(`the fact has no canonical JSON form (${error instanceof Error ? error.message : String(error)})`);
  }
  if (canonical === undefined) return fail('the fact has no canonical JSON form');
  const recomputed = sha256(Buffer.from(canonical, 'utf8')).toString('hex');
  if (recomputed !== fact.entryHash) return fail(`entryHash mismatch: the fields hash to ${recomputed}, the fact says ${String(fact.entryHash)}`);

  // 2. The proof's shape.
  const { leafIndex, leafCount, leafHash, rootHash, siblings } = proof;
  if (!Number.isSafeInteger(leafIndex) || !Number.isSafeInteger(leafCount)) return fail('proof.leafIndex and proof.leafCount must be integers');
  const index = BigInt(leafIndex as number);
  const count = BigInt(leafCount as number);
  if (index < 0n || count < 1n || index >= count) return fail(`proof.leafIndex ${index} is not inside a tree of ${count} leaves`);
  if (index !== BigInt(seqText) - 1n) return fail(`proof.leafIndex ${index} is not fact.seqNo − 1 (${BigInt(seqText) - 1n})`);
  if (isObject(head) && typeof head.seqNo === 'string' && /^[0-9]+$/.test(head.seqNo) && count > BigInt(head.seqNo)) {
    return fail(`proof.leafCount ${count} is beyond the head (seqNo ${head.seqNo})`);
  }
  if (leafHash !== fact.entryHash) return fail('proof.leafHash is not the fact\'s entryHash');
  if (typeof rootHash !== 'string' || !HEX64.test(rootHash)) return fail('proof.rootHash is not 64 lowercase hex digits');
  if (!Array.isArray(siblings)) return fail('proof.siblings is not an array');

  // 3. RFC 9162 §2.1.3.2, with node = SHA-256(left ‖ right) over the raw digests.
  let fn = index;
  let sn = count - 1n;
  let running: Buffer = Buffer.from(fact.entryHash as string, 'hex');
  for (const [i, sibling] of siblings.entries()) {
    if (!isObject(sibling) || typeof sibling.hash !== 'string' || !HEX64.test(sibling.hash)) return fail(`proof.siblings[${i}].hash is not 64 lowercase hex digits`);
    if (sn === 0n) return fail(`proof.siblings has ${siblings.length} entries; a leaf ${index} of ${count} has ${i}`);
    const p = Buffer.from(sibling.hash, 'hex');
    if ((fn & 1n) === 1n || fn === sn) {
      if (sibling.side !== 'left') return fail(`proof.siblings[${i}].side must be "left" for leaf ${index} of ${count}`);
      running = sha256(Buffer.concat([p, running]));
      if ((fn & 1n) === 0n) {
        while ((fn & 1n) === 0n && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      if (sibling.side !== 'right') return fail(`proof.siblings[${i}].side must be "right" for leaf ${index} of ${count}`);
      running = sha256(Buffer.concat([running, p]));
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) return fail(`proof.siblings has ${siblings.length} entries; too few for leaf ${index} of ${count}`);
  const root = running.toString('hex');
  if (root !== rootHash) return fail(`root mismatch: the siblings fold to ${root}, the proof says ${rootHash}`);
  return { ok: true, message: `verified: fact ${seqText} (${String(fact.id ?? 'no id')}) is leaf ${index} of ${count}; entryHash ${recomputed}; root ${root}` };
}
