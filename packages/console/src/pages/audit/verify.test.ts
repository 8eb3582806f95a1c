// @vitest-environment node
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import chain from './fixtures/chain-proofs.json';
import { canonicalJson, entryHashOf, verifyInclusionProof } from './verify';

/**
 * The browser's proof check against proofs the service really produced: fixtures/chain-proofs.json
 * holds `GET {v1}/audit/chain/{n}` for every fact of a 12-fact chain of a test app (tokens named
 * with quotes, a backslash, a tab, a newline, accents, CJK and an astral character; budgets with
 * six-decimal amounts), so every leaf position of a 12-leaf tree is folded. Then the worked example
 * of docs/audit-chain/README.md, and tampered answers that must fail.
 */

type Answer = (typeof chain)[number];
const clone = (answer: Answer): Answer => structuredClone(answer);

describe('verifyInclusionProof on proofs the service produced', () => {
  it('verifies every fact of the chain, folding to the published root', async () => {
    expect(chain).toHaveLength(12);
    const roots = new Set<string>();
    for (const answer of chain) {
      const verdict = await verifyInclusionProof(answer);
      expect(verdict, `fact ${answer.fact.seqNo}`).toMatchObject({ ok: true, seqNo: answer.fact.seqNo, entryHash: answer.fact.entryHash });
      if (verdict.ok) {
        expect(verdict.recomputedRoot).toBe(answer.proof.rootHash);
        roots.add(verdict.recomputedRoot);
      }
    }
    // Every proof is of the same tree (facts 1 to 12).
    expect(roots.size).toBe(1);
  });

  it('recomputes each entryHash from the fact fields, chained by prevHash', async () => {
    let previous = '0'.repeat(64);
    for (const { fact } of chain) {
      expect(fact.prevHash).toBe(previous);
      await expect(entryHashOf(fact)).resolves.toBe(fact.entryHash);
      previous = fact.entryHash;
    }
  });
});

describe('verifyInclusionProof refuses a tampered answer', () => {
  const fact5 = chain[4]!;

  it('a changed payload (the fact is not the one hashed)', async () => {
    const tampered = clone(fact5);
    (tampered.fact.payload as { after: { name: string } }).after.name = 'someone else';
    const verdict = await verifyInclusionProof(tampered);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.reason).toMatch(/fields hash to [0-9a-f]{64}, not to the entryHash shown/);
      // The root folded from the recomputed leaf is shown beside the published one, and differs.
      expect(verdict.recomputedRoot).toMatch(/^[0-9a-f]{64}$/);
      expect(verdict.recomputedRoot).not.toBe(verdict.publishedRoot);
    }
  });

  it('a changed fact whose entryHash and leafHash were changed to match (the siblings no longer fold to the root)', async () => {
    const tampered = clone(fact5);
    tampered.fact.actor = 'mallory';
    const forged = await entryHashOf(tampered.fact);
    tampered.fact.entryHash = forged;
    tampered.proof.leafHash = forged;
    const verdict = await verifyInclusionProof(tampered);
    expect(verdict).toMatchObject({ ok: false, reason: 'the siblings fold to a different root than the published one', entryHash: forged, publishedRoot: fact5.proof.rootHash });
  });

  it('a changed sibling hash', async () => {
    const tampered = clone(fact5);
    const first = tampered.proof.siblings[0]!;
    first.hash = (first.hash[0] === '0' ? '1' : '0') + first.hash.slice(1);
    await expect(verifyInclusionProof(tampered)).resolves.toMatchObject({ ok: false, reason: 'the siblings fold to a different root than the published one' });
  });

  it('a changed published root', async () => {
    const tampered = clone(fact5);
    tampered.proof.rootHash = 'f'.repeat(64);
    const verdict = await verifyInclusionProof(tampered);
    expect(verdict).toMatchObject({ ok: false, recomputedRoot: fact5.proof.rootHash, publishedRoot: 'f'.repeat(64) });
  });

  it('a sibling on the wrong side, a missing or an extra sibling', async () => {
    const flipped = clone(fact5);
    flipped.proof.siblings[1]!.side = flipped.proof.siblings[1]!.side === 'left' ? 'right' : 'left';
    await expect(verifyInclusionProof(flipped)).resolves.toMatchObject({ ok: false, reason: expect.stringMatching(/must be on the (left|right)/) });

    const short = clone(fact5);
    short.proof.siblings.pop();
    await expect(verifyInclusionProof(short)).resolves.toMatchObject({ ok: false, reason: expect.stringMatching(/too few/) });

    const long = clone(fact5);
    long.proof.siblings.push({ hash: 'a'.repeat(64), side: 'left' });
    await expect(verifyInclusionProof(long)).resolves.toMatchObject({ ok: false, reason: expect.stringMatching(/has 5 siblings/) });
  });

  it('a proof moved to another position, or to a tree larger than the chain', async () => {
    const moved = clone(fact5);
    moved.proof.leafIndex = 5;
    await expect(verifyInclusionProof(moved)).resolves.toMatchObject({ ok: false, reason: expect.stringMatching(/not fact 5's position/) });

    const beyond = clone(fact5);
    beyond.proof.leafCount = 13;
    await expect(verifyInclusionProof(beyond)).resolves.toMatchObject({ ok: false, reason: expect.stringMatching(/beyond the chain's head/) });
  });

  it('answers that are not proofs at all', async () => {
    await expect(verifyInclusionProof(null)).resolves.toMatchObject({ ok: false });
    await expect(verifyInclusionProof({ fact: fact5.fact })).resolves.toMatchObject({ ok: false, reason: 'the answer has no proof' });
    const noPayload = clone(fact5) as Partial<Answer['fact']> & Answer;
    delete (noPayload.fact as { payload?: unknown }).payload;
    await expect(verifyInclusionProof(noPayload)).resolves.toMatchObject({ ok: false, reason: 'fact.payload is missing' });
  });
});

describe("docs/audit-chain/README.md's worked example (a chain of 3 facts)", () => {
  const L0 = '0c273af6edd4b0d7fed2ad9237d92582fbd84d7a0e0bbed0b68614c6c46d4719';
  const L1 = 'cf9a16cb88d9a878d7a78c110bae7341e4304080cda51674d8ebbf38058ba271';
  const L2 = '4e6be26a7d7352991110dec9904f05940914505e52d0b9c663caa88f70da9f80';
  const N10 = '3b13bbac28e877460e5e718e9c97779d45dfc551e313bcc2a9eafec4bb8a2728';
  const ROOT = 'fd3cccc975ec77a9433a5f743711e132f75d79daf6f81fff10d81d908ce0e543';
  const fact1 = {
    id: 'x',
    seqNo: '1',
    source: 'OperatorAudit',
    sourceId: '11111111-1111-4111-8111-111111111111',
    kind: 'operator',
    actor: 'admin',
    ts: '2026-11-25T08:00:00.000Z',
    payload: { verb: 'token.create', target: 'token:a', surface: 'api', before: null, after: { name: 'ci' } },
    prevHash: '0'.repeat(64),
    entryHash: L0,
  };

  it('fact 1 hashes to its entryHash and its proof folds to the root', async () => {
    expect(canonicalJson(fact1).startsWith('{"actor":"admin","entryHash":')).toBe(true);
    await expect(entryHashOf(fact1)).resolves.toBe(L0);
    const verdict = await verifyInclusionProof({
      fact: fact1,
      head: { seqNo: '3' },
      proof: { leafIndex: 0, leafCount: 3, leafHash: L0, rootHash: ROOT, siblings: [{ hash: L1, side: 'right' }, { hash: L2, side: 'right' }] },
    });
    expect(verdict).toMatchObject({ ok: true, recomputedRoot: ROOT });
  });

  it('the root is node(node(L0, L1), L2) over raw digests', async () => {
    // Fact 3's proof, folded without its body: one left sibling N(1,0).
    const fact3 = { ...fact1, seqNo: '3', entryHash: L2 };
    const verdict = await verifyInclusionProof({
      fact: fact3,
      proof: { leafIndex: 2, leafCount: 3, leafHash: L2, rootHash: ROOT, siblings: [{ hash: N10, side: 'left' }] },
    });
    // The body is not fact 3's, so the leaf does not recompute: the check says so.
    expect(verdict.ok).toBe(false);
    const digest = async (hex: string) =>
      Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16))))), (b) =>
        b.toString(16).padStart(2, '0'),
      ).join('');
    expect(await digest(L0 + L1)).toBe(N10);
    expect(await digest(N10 + L2)).toBe(ROOT);
  });
});

describe('canonicalJson', () => {
  it('writes what the canonicalize package (the service\'s reference) writes', () => {
    const values: unknown[] = [
      { b: 1, a: [true, false, null], 'é': 'x', '\u20ac': 1, '\r': 2, 'aa': { z: 0, y: -0 } },
      ['\u0000\u0001\u001f\u007f', '"\\/', '\u2028\u2029', 'Café ☕ 東京 — 𝄞', '\ud83d\ude00'],
      [1e21, 1e-7, 0.1 + 0.2, -5.25, 999999999999, 1234.567891, 0.000001, 2 ** 53, -0],
      { '\ud83d\ude00': 1, '\ufb33': 2, '\u0080': 3, 'Z': 4, 'a': 5 },
      ...chain.map((answer) => answer.fact),
    ];
    for (const value of values) expect(canonicalJson(value)).toBe(canonicalize(value));
  });

  it('refuses what has no canonical form', () => {
    expect(() => canonicalJson('\ud800')).toThrow(/lone surrogate/);
    expect(() => canonicalJson(Number.NaN)).toThrow();
    expect(() => canonicalJson({ a: Number.POSITIVE_INFINITY })).toThrow();
  });
});
