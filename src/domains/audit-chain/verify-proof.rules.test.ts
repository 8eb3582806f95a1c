import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mth, path, type ReferenceSibling } from '../../../test/helpers/rfc9162-reference.ts';
import { type ProofCheck, verifySavedFact } from './verify-proof.ts';

/**
 * The offline proof check on answers built here from docs/audit-chain/README.md: a chain of facts
 * whose entryHash is SHA-256 of the canonical JSON of the fact body, and the inclusion proof of one
 * of them in the tree over the whole chain, taken from a recursive RFC 9162 PATH (a different
 * algorithm from the verifier's bit walk). No database: each answer is what
 * `GET {v1}/audit/chain/{id}` returns, as a saved file would hold it.
 */

type Sibling = ReferenceSibling;
interface Answer {
  fact: Record<string, unknown>;
  head: { seqNo: string; headHash: string; observedAt: string } | null;
  proof: { leafIndex: number; leafCount: number; leafHash: string; rootHash: string; siblings: Sibling[] };
}

const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest();

/** Fact seqNo (1-based) of a chain: its fields and entryHash, chained to the previous one. */
function factOf(seqNo: number, prevHash: string): Record<string, unknown> {
  const body = {
    seqNo: String(seqNo),
    source: seqNo % 2 === 0 ? 'http' : 'job',
    sourceId: `src-${seqNo}`,
    kind: 'backup.snapshot',
    // Every third fact has no actor, as a job's facts have none.
    actor: seqNo % 3 === 0 ? null : `token:${seqNo}`,
    ts: new Date(Date.UTC(2026, 10, 1, 0, 0, seqNo)).toISOString(),
    payload: { n: seqNo, note: 'é\u2028', list: [1, null, true] },
    prevHash,
  };
  const entryHash = sha(canonicalize(body)!).toString('hex');
  return { id: `00000000-0000-4000-8000-${String(seqNo).padStart(12, '0')}`, ...body, entryHash };
}

const chains: Record<string, unknown>[] = [];
function chain(n: number): Record<string, unknown>[] {
  while (chains.length < n) chains.push(factOf(chains.length + 1, chains.length === 0 ? '0'.repeat(64) : (chains.at(-1)!.entryHash as string)));
  return chains.slice(0, n);
}

/** The saved answer for fact seqNo in a tree of `leafCount` facts; the head may be further on. */
function answer(seqNo: number, leafCount: number, headSeqNo = leafCount): Answer {
  const facts = chain(Math.max(leafCount, headSeqNo));
  const leaves = facts.slice(0, leafCount).map((f) => f.entryHash as string);
  const fact = facts[seqNo - 1]!;
  return {
    fact: { ...fact },
    head: { seqNo: String(headSeqNo), headHash: facts[headSeqNo - 1]!.entryHash as string, observedAt: '2026-11-28T00:00:00.000Z' },
    proof: { leafIndex: seqNo - 1, leafCount, leafHash: fact.entryHash as string, rootHash: mth(leaves), siblings: path(seqNo - 1, leaves) },
  };
}

const reasonOf = (check: ProofCheck): string => {
  expect(check.ok).toBe(false);
  return (check as { reason: string }).reason;
};

function tampered(base: Answer, change: (a: Answer) => void): ProofCheck {
  const copy = structuredClone(base);
  change(copy);
  return verifySavedFact(copy);
}

describe('a saved proof that holds', () => {
  it('verifies every fact of every tree of 1 to 40 facts, and says which leaf of which tree it is', () => {
    for (let n = 1; n <= 40; n++) {
      for (let seqNo = 1; seqNo <= n; seqNo++) {
        const saved = answer(seqNo, n);
        const check = verifySavedFact(saved);
        expect(check, `fact ${seqNo} of ${n}`).toEqual({
          ok: true,
          message: `verified: fact ${seqNo} (${String(saved.fact.id)}) is leaf ${seqNo - 1} of ${n}; entryHash ${String(saved.fact.entryHash)}; root ${saved.proof.rootHash}`,
        });
      }
    }
  });

  it('verifies facts of larger trees, and proofs in a tree smaller than the head (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1500 }), fc.nat(), fc.nat({ max: 40 }), (n, pick, beyond) => {
        const seqNo = (pick % n) + 1;
        expect(verifySavedFact(answer(seqNo, n, n + beyond))).toMatchObject({ ok: true });
      }),
      { numRuns: 40 },
    );
    expect(verifySavedFact(answer(100, 128))).toMatchObject({ ok: true });
    expect(verifySavedFact(answer(1000, 1000))).toMatchObject({ ok: true });
  });

  it('names a fact without an id, and needs no head', () => {
    const saved = answer(3, 5);
    delete saved.fact.id;
    expect(verifySavedFact(saved)).toMatchObject({ ok: true, message: expect.stringMatching(/^verified: fact 3 \(no id\) is leaf 2 of 5; /) });
    expect(verifySavedFact({ ...answer(3, 5), head: null })).toMatchObject({ ok: true });
    expect(verifySavedFact({ fact: saved.fact, proof: saved.proof })).toMatchObject({ ok: true });
  });

  it('ignores a head whose seqNo is not a decimal string', () => {
    for (const seqNo of [3, 'x12', '12x', '', 'three', '1e1']) {
      expect(verifySavedFact({ ...answer(4, 12), head: { seqNo } }), String(seqNo)).toMatchObject({ ok: true });
    }
    expect(verifySavedFact({ ...answer(4, 12), head: ['12'] })).toMatchObject({ ok: true });
    expect(verifySavedFact({ ...answer(4, 12), head: { seqNo: '12' } })).toMatchObject({ ok: true });
  });
});

describe('every step of the walk is checked', () => {
  it('refuses each sibling moved to the other side, changed, dropped or added, in every tree of 1 to 24 facts', () => {
    for (let n = 1; n <= 24; n++) {
      for (let seqNo = 1; seqNo <= n; seqNo++) {
        const saved = answer(seqNo, n);
        const at = `leaf ${seqNo - 1} of ${n}`;
        saved.proof.siblings.forEach((sibling, i) => {
          const other = sibling.side === 'left' ? 'right' : 'left';
          expect(reasonOf(tampered(saved, (a) => (a.proof.siblings[i]!.side = other))), at).toBe(`proof.siblings[${i}].side must be "${sibling.side}" for ${at}`);
          expect(reasonOf(tampered(saved, (a) => (a.proof.siblings[i]!.hash = 'ab'.repeat(32)))), at).toMatch(/^root mismatch: the siblings fold to [0-9a-f]{64}, the proof says [0-9a-f]{64}$/);
          expect(reasonOf(tampered(saved, (a) => a.proof.siblings.splice(i, 1))), at).not.toBe('');
        });
        const length = saved.proof.siblings.length;
        if (length > 0) {
          expect(reasonOf(tampered(saved, (a) => a.proof.siblings.pop())), at).toBe(`proof.siblings has ${length - 1} entries; too few for ${at}`);
        }
        for (const side of ['left', 'right'] as const) {
          expect(reasonOf(tampered(saved, (a) => a.proof.siblings.push({ hash: 'cd'.repeat(32), side }))), at).toBe(`proof.siblings has ${length + 1} entries; a ${at} has ${length}`);
        }
        expect(reasonOf(tampered(saved, (a) => (a.proof.rootHash = 'ef'.repeat(32)))), at).toBe(
          `root mismatch: the siblings fold to ${saved.proof.rootHash}, the proof says ${'ef'.repeat(32)}`,
        );
      }
    }
  });

  it('refuses the proof of one leaf offered for another fact', () => {
    for (const [n, from, to] of [[7, 3, 4], [8, 1, 2], [12, 9, 11], [5, 5, 1]] as const) {
      const other = answer(to, n);
      const saved = answer(from, n);
      // The right fact and leaf, another leaf's siblings.
      const check = verifySavedFact({ ...saved, proof: { ...saved.proof, siblings: other.proof.siblings } });
      expect(check.ok, `${from} with ${to}'s path in ${n}`).toBe(false);
    }
  });

  it('refuses a sibling hash that is not 64 lowercase hex digits', () => {
    const saved = answer(6, 11);
    for (const bad of ['AB'.repeat(32), 'ab'.repeat(31), `${'ab'.repeat(32)}0`, `x${'ab'.repeat(32)}`, `${'ab'.repeat(32)}x`, 'g'.repeat(64), 7]) {
      expect(reasonOf(tampered(saved, (a) => ((a.proof.siblings[1] as { hash: unknown }).hash = bad))), String(bad)).toBe('proof.siblings[1].hash is not 64 lowercase hex digits');
    }
    // A list holding the hash reads as the hash in text; it is not one.
    expect(reasonOf(tampered(saved, (a) => ((a.proof.siblings[1] as { hash: unknown }).hash = [a.proof.siblings[1]!.hash])))).toBe('proof.siblings[1].hash is not 64 lowercase hex digits');
    for (const bad of [null, 'ab'.repeat(32), ['ab'.repeat(32)]]) {
      expect(reasonOf(tampered(saved, (a) => ((a.proof.siblings as unknown[])[0] = bad)))).toBe('proof.siblings[0].hash is not 64 lowercase hex digits');
    }
  });
});

describe('the fact and the proof\'s shape', () => {
  const saved = answer(6, 11);

  it('refuses what is not a saved answer', () => {
    for (const value of [null, [], 'text', 3, undefined]) expect(reasonOf(verifySavedFact(value)), String(value)).toBe('the file is not a JSON object');
    for (const fact of [undefined, null, [], 'fact']) {
      expect(reasonOf(verifySavedFact({ ...saved, fact }))).toBe('no "fact" object (save the whole answer of GET {v1}/audit/chain/{id})');
    }
    for (const proof of [undefined, null, [], 'proof']) expect(reasonOf(verifySavedFact({ ...saved, proof }))).toBe('no "proof" object');
  });

  it('needs every field of the fact as a string, the actor as a string or null, and the payload', () => {
    for (const field of ['seqNo', 'source', 'sourceId', 'kind', 'ts', 'prevHash', 'entryHash']) {
      expect(reasonOf(tampered(saved, (a) => (a.fact[field] = 6)))).toBe(`fact.${field} is not a string`);
      expect(reasonOf(tampered(saved, (a) => delete a.fact[field]))).toBe(`fact.${field} is not a string`);
    }
    for (const actor of [undefined, 5, {}]) expect(reasonOf(tampered(saved, (a) => (a.fact.actor = actor)))).toBe('fact.actor is neither a string nor null');
    expect(reasonOf(tampered(saved, (a) => delete a.fact.payload))).toBe('fact.payload is missing (the single-fact answer carries it)');
  });

  it('needs seqNo as a decimal number from 1', () => {
    for (const seqNo of ['0', '06', 'x6', '6x', '6.0', '-6', ' 6', '']) {
      expect(reasonOf(tampered(saved, (a) => (a.fact.seqNo = seqNo)))).toBe(`fact.seqNo "${seqNo}" is not a decimal number from 1`);
    }
  });

  it('recomputes entryHash from the fields', () => {
    const changed = tampered(saved, (a) => (a.fact.payload = { forged: true }));
    expect(reasonOf(changed)).toMatch(new RegExp(`^entryHash mismatch: the fields hash to [0-9a-f]{64}, the fact says ${String(saved.fact.entryHash)}$`));
    for (const field of ['seqNo', 'source', 'sourceId', 'kind', 'actor', 'ts', 'prevHash']) {
      expect(reasonOf(tampered(saved, (a) => (a.fact[field] = field === 'seqNo' ? '7' : `${String(a.fact[field])}x`))), field).toMatch(/^entryHash mismatch/);
    }
    expect(saved.fact.actor).toBeNull();
    expect(reasonOf(tampered(answer(5, 11), (a) => (a.fact.actor = null))), 'actor').toMatch(/^entryHash mismatch/);
    // Fields outside the body (id) are not hashed.
    expect(tampered(saved, (a) => (a.fact.id = 'another'))).toMatchObject({ ok: true });
  });

  it('answers a fact that has no canonical form (a lone surrogate) with a reason, not an exception', () => {
    for (const damage of [(a: Answer) => (a.fact.kind = '\ud800'), (a: Answer) => (a.fact.payload = { note: 'x\udfff' })]) {
      expect(reasonOf(tampered(saved, damage))).toMatch(/^the fact has no canonical JSON form \(.+\)$/);
    }
  });

  it('needs leafIndex and leafCount as integers with the leaf inside the tree', () => {
    for (const [leafIndex, leafCount] of [[5.5, 11], [5, 11.5], ['5', 11], [5, '11'], [undefined, 11], [5, 2 ** 53]]) {
      expect(reasonOf(tampered(saved, (a) => Object.assign(a.proof, { leafIndex, leafCount })))).toBe('proof.leafIndex and proof.leafCount must be integers');
    }
    for (const [leafIndex, leafCount] of [[-1, 11], [11, 11], [12, 11], [5, 0], [0, 0], [0, -1]]) {
      expect(reasonOf(tampered(saved, (a) => Object.assign(a.proof, { leafIndex, leafCount })))).toBe(`proof.leafIndex ${leafIndex} is not inside a tree of ${leafCount} leaves`);
    }
    expect(reasonOf(tampered(saved, (a) => (a.proof.leafIndex = 4)))).toBe('proof.leafIndex 4 is not fact.seqNo − 1 (5)');
    expect(reasonOf(tampered(saved, (a) => (a.proof.leafIndex = 6)))).toBe('proof.leafIndex 6 is not fact.seqNo − 1 (5)');
    // The leaf's own tree of one: index 0, count 1.
    expect(verifySavedFact(answer(1, 1))).toMatchObject({ ok: true });
  });

  it('refuses a tree larger than the head it came with', () => {
    expect(reasonOf(tampered(saved, (a) => (a.head!.seqNo = '10')))).toBe('proof.leafCount 11 is beyond the head (seqNo 10)');
    expect(reasonOf(tampered(saved, (a) => (a.head!.seqNo = '0')))).toBe('proof.leafCount 11 is beyond the head (seqNo 0)');
    expect(verifySavedFact(answer(6, 11, 11))).toMatchObject({ ok: true });
  });

  it('needs the leaf hash to be the fact\'s entryHash, the root as 64 lowercase hex digits and the siblings as a list', () => {
    expect(reasonOf(tampered(saved, (a) => (a.proof.leafHash = 'ab'.repeat(32))))).toBe('proof.leafHash is not the fact\'s entryHash');
    expect(reasonOf(tampered(saved, (a) => ((a.proof as { leafHash?: string }).leafHash = undefined)))).toBe('proof.leafHash is not the fact\'s entryHash');
    for (const rootHash of ['AB'.repeat(32), 'ab'.repeat(31), `${'ab'.repeat(32)}0`, `x${'ab'.repeat(32)}`, `${'ab'.repeat(32)}x`, 64, null]) {
      expect(reasonOf(tampered(saved, (a) => ((a.proof as { rootHash: unknown }).rootHash = rootHash))), String(rootHash)).toBe('proof.rootHash is not 64 lowercase hex digits');
    }
    expect(reasonOf(tampered(saved, (a) => ((a.proof as { rootHash: unknown }).rootHash = [a.proof.rootHash])))).toBe('proof.rootHash is not 64 lowercase hex digits');
    for (const siblings of [undefined, null, {}, 'ab']) {
      expect(reasonOf(tampered(saved, (a) => ((a.proof as { siblings: unknown }).siblings = siblings)))).toBe('proof.siblings is not an array');
    }
  });
});
