import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { accFromChunkSums, accumulate, accToHex, addAcc, DIGEST_VERSION, digestOf, edgeIdentity, identityHash, nodeIdentity, subtractAcc } from './digest.ts';
import { kindLags, lagBadge, lagSecOf, worstLag } from './lag.ts';
import { addEmpireEvents, addHoneypotEvents, BatchBuilder, mergeCounts, mergeNamedBy, placeholderNode } from './sources.ts';

describe('the set digest (pure)', () => {
  const a = nodeIdentity('Tenant', 'edge-eu');
  const b = edgeIdentity('SEEN_ON', 'Fingerprint', 'edge-eu/abc', 'Tenant', 'edge-eu');
  const c = nodeIdentity('Cluster', 't13d1516h2_8daaf6152771_02713d6af862');

  it('spells identities as kind and keys joined by |', () => {
    expect(a).toBe('n|Tenant|edge-eu');
    expect(b).toBe('e|SEEN_ON|Fingerprint|edge-eu/abc|Tenant|edge-eu');
  });

  it('does not depend on order, and removal undoes addition', () => {
    expect(accumulate([a, b, c])).toBe(accumulate([c, a, b]));
    expect(subtractAcc(accumulate([a, b, c]), identityHash(b))).toBe(accumulate([a, c]));
    expect(addAcc(accumulate([a]), identityHash(c))).toBe(accumulate([a, c]));
    expect(subtractAcc(0n, identityHash(a))).toBe((1n << 256n) - identityHash(a));
    expect(accumulate([])).toBe(0n);
  });

  it('is the SHA-256 sum modulo 2^256', () => {
    const ha = BigInt(`0x${createHash('sha256').update(a).digest('hex')}`);
    const hb = BigInt(`0x${createHash('sha256').update(b).digest('hex')}`);
    expect(accumulate([a, b])).toBe((ha + hb) % (1n << 256n));
  });

  it('folds per-word sums back into the accumulator', () => {
    // Two identities: their hashes split into 8 big-endian 32-bit words and summed per word, as SQL does.
    const words = (identity: string) => Array.from({ length: 8 }, (_, i) => createHash('sha256').update(identity).digest().readUInt32BE(4 * i));
    const sums = words(a).map((w, i) => String(w + words(b)[i]!));
    expect(accFromChunkSums(sums)).toBe(accumulate([a, b]));
    expect(accFromChunkSums(['0', '0', '0', '0', '0', '0', '0', '0'])).toBe(0n);
    expect(() => accFromChunkSums(['1'])).toThrow(/8 chunk sums/);
  });

  it('digests the version, accumulator and counts', () => {
    const acc = accumulate([a, c]);
    expect(digestOf(acc, 2, 0)).toBe(createHash('sha256').update(`${DIGEST_VERSION}|${accToHex(acc)}|2|0`).digest('hex'));
    expect(digestOf(acc, 2, 0)).not.toBe(digestOf(acc, 1, 1));
    expect(accToHex(1n)).toBe(`${'0'.repeat(63)}1`);
  });
});

describe('lag and badges (pure)', () => {
  it('badges green to 300 s, yellow to 1800 s, red beyond, unknown for null', () => {
    expect([0, 300, 301, 1800, 1801].map(lagBadge)).toEqual(['green', 'green', 'yellow', 'yellow', 'red']);
    expect(lagBadge(null)).toBe('unknown');
  });

  it('measures whole seconds, never negative, null when never materialised', () => {
    const now = new Date('2026-11-26T10:00:00.000Z');
    expect(lagSecOf(new Date('2026-11-26T09:58:59.500Z'), now)).toBe(60);
    expect(lagSecOf(new Date('2026-11-26T10:05:00.000Z'), now)).toBe(0);
    expect(lagSecOf(null, now)).toBeNull();
  });

  it('finds the kind that lags most', () => {
    const now = new Date('2026-11-26T10:00:00.000Z');
    const lags = kindLags(new Map([['Tenant', new Date('2026-11-26T09:59:00.000Z')], ['Fingerprint', new Date('2026-11-26T09:50:00.000Z')]]), now);
    expect(lags).toHaveLength(9);
    expect(worstLag(lags)).toMatchObject({ kind: 'Fingerprint', lagSec: 600 });
    expect(lags.find((l) => l.kind === 'Incident')).toMatchObject({ lagSec: null });
    expect(worstLag(kindLags(new Map(), now))).toBeNull();
  });
});

describe('source rows to graph writes (pure)', () => {
  const at = (iso: string) => new Date(iso);

  it('aggregates honeypot events per fingerprint, cluster and vendor, never a node per event', () => {
    const batch = new BatchBuilder();
    addHoneypotEvents(batch, [
      { tenantSlug: 'edge-eu', fingerprintId: 'f1', ja4: 'j1', vendorId: 'openai-gptbot', uaClass: 'KNOWN_LLM_AGENT', ts: at('2026-11-26T09:00:00.000Z') },
      { tenantSlug: 'edge-eu', fingerprintId: 'f1', ja4: 'j1', vendorId: 'openai-gptbot', uaClass: 'LIAR', ts: at('2026-11-26T08:00:00.000Z') },
      { tenantSlug: 'edge-eu', fingerprintId: 'f1', ja4: 'j1', vendorId: null, uaClass: 'BROWSER', ts: at('2026-11-26T09:30:00.000Z') },
      { tenantSlug: 'edge-us', fingerprintId: 'f1', ja4: null, vendorId: null, uaClass: 'BROWSER', ts: at('2026-11-26T07:00:00.000Z') },
    ]);
    const built = batch.build();
    // One Fingerprint node across tenants (the id hashes JA4 and user agent only); per tenant counts are on SEEN_ON.
    expect(built.nodes.merge.map((n) => `${n.kind}|${n.key}`).sort()).toEqual(['Cluster|j1', 'Fingerprint|f1']);
    expect(built.nodes.merge.find((n) => n.key === 'f1')).toMatchObject({
      tenant: null,
      props: { fingerprintId: 'f1', events: 4, liarEvents: 1, firstAt: '2026-11-26T07:00:00.000Z', lastAt: '2026-11-26T09:30:00.000Z', lastUaClass: 'BROWSER' },
    });
    expect(built.nodes.ensure.map((n) => `${n.kind}|${n.key}`).sort()).toEqual(['Tenant|edge-eu', 'Tenant|edge-us', 'Vendor|openai-gptbot']);
    const claims = built.edges.merge.find((e) => e.kind === 'CLAIMS')!;
    expect(claims.props).toEqual({ events: 2, liarEvents: 1, firstAt: '2026-11-26T08:00:00.000Z', lastAt: '2026-11-26T09:00:00.000Z' });
    const seenOn = built.edges.merge.filter((e) => e.kind === 'SEEN_ON');
    expect(seenOn.map((e) => [e.dst.key, e.props.events]).sort()).toEqual([['edge-eu', 3], ['edge-us', 1]]);
    expect(built.edges.merge.filter((e) => e.kind === 'IN_CLUSTER')).toHaveLength(1);
  });

  it('merges counts as the database does, keeping the class of the later event', () => {
    expect(mergeCounts({ events: 2, liarEvents: 1, firstAt: 'b', lastAt: 'c', lastUaClass: 'X' }, { events: 1, liarEvents: 0, firstAt: 'a', lastAt: 'b', lastUaClass: 'Y' })).toEqual({
      events: 3,
      liarEvents: 1,
      firstAt: 'a',
      lastAt: 'c',
      lastUaClass: 'X',
    });
    expect(mergeCounts({ fingerprintId: 'f', events: 0, liarEvents: 0 }, { events: 1, liarEvents: 1, firstAt: 'a', lastAt: 'a', lastUaClass: 'LIAR' })).toMatchObject({ events: 1, lastUaClass: 'LIAR' });
  });

  it('names an empire event\'s toolset, tenant, fingerprint, key and attestation', () => {
    const batch = new BatchBuilder();
    addEmpireEvents(batch, [
      {
        eventId: 'e-1',
        toolset: 'crawler-lab',
        senderId: 's-1',
        eventType: 'crawl.page',
        ts: at('2026-11-26T09:00:00.000Z'),
        receivedAt: at('2026-11-26T09:00:01.000Z'),
        tenant: 'ghost',
        causedBy: 's-0',
        keyId: 'k-1',
        attestationId: 'a-1',
        compatMode: false,
        aboutFingerprint: 'fp-9',
      },
      { eventId: 'e-2', toolset: 'crawler-lab', senderId: 's-2', eventType: 'x', ts: at('2026-11-26T09:00:00.000Z'), receivedAt: at('2026-11-26T09:00:01.000Z'), tenant: null, causedBy: null, keyId: null, attestationId: null, compatMode: true, aboutFingerprint: 'fp-2' },
    ]);
    const built = batch.build();
    expect(built.edges.ensure.map((e) => `${e.kind} ${e.src.key}->${e.dst.key}`).sort()).toEqual([
      'ABOUT e-1->fp-9',
      'ABOUT e-2->fp-2',
      'ATTESTS a-1->e-1',
      'EMITTED_BY e-1->crawler-lab',
      'EMITTED_BY e-2->crawler-lab',
      'FROM_TENANT e-1->ghost',
      'SIGNED_BY e-1->k-1',
    ]);
    // A tenant and fingerprints only the toolset's events name belong to that toolset's reach (named_by).
    expect(built.nodes.ensure.find((n) => n.kind === 'Tenant')).toEqual({ ...placeholderNode({ kind: 'Tenant', key: 'ghost' }), namedBy: ['crawler-lab'] });
    expect(built.nodes.ensure.filter((n) => n.kind === 'Fingerprint').map((n) => n.namedBy)).toEqual([['crawler-lab'], ['crawler-lab']]);
    expect(placeholderNode({ kind: 'Tenant', key: 'ghost' }).props).toEqual({ slug: 'ghost', registered: false });
    expect(built.nodes.ensure.find((n) => n.kind === 'Key')).toMatchObject({ toolset: 'crawler-lab', props: { registered: false } });
    expect(built.nodes.replace.map((n) => n.key)).toEqual(['e-1', 'e-2']);
  });
});

describe('who alone names a node (named_by)', () => {
  it('merges as a toolset-free source wins and toolsets add up', () => {
    expect(mergeNamedBy(['b'], ['a', 'b'])).toEqual(['a', 'b']);
    expect(mergeNamedBy(['a'], null)).toBeNull();
    expect(mergeNamedBy(undefined, ['a'])).toBeNull();
  });

  it('keeps one write per node in a batch, its named_by widened by each toolset that names it', () => {
    const batch = new BatchBuilder();
    batch.ensure({ kind: 'Tenant', key: 't' }, { namedBy: 'lab-b' });
    batch.ensure({ kind: 'Tenant', key: 't' }, { namedBy: 'lab-a' });
    batch.ensure({ kind: 'Tenant', key: 'u' }, { namedBy: 'lab-a' });
    batch.ensure({ kind: 'Tenant', key: 'u' });
    expect(batch.build().nodes.ensure.map((n) => [n.key, n.namedBy])).toEqual([['t', ['lab-a', 'lab-b']], ['u', null]]);
  });
});
