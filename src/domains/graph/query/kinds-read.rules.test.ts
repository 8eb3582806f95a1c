import { describe, expect, it } from 'vitest';
import { FULL_VISIBILITY, NODE_KINDS, type Visibility } from '../kinds.ts';
import { parseQueryText } from './parser.ts';
import { kindsRead } from './service.ts';

// The node kinds whose materialisation a query's answer depends on (docs/graph/query.md, "Freshness").

const kinds = (text: string, visibility: Visibility = FULL_VISIBILITY) => kindsRead(parseQueryText(text), visibility);

describe('kindsRead', () => {
  it('is the labels of the node patterns when every node has one', () => {
    expect(kinds('MATCH (f:Fingerprint)-[:SEEN_ON]->(t:Tenant) RETURN f')).toEqual(['Tenant', 'Fingerprint']);
    expect(kinds('MATCH (i:Incident), (e:EmpireEvent) RETURN i, e').sort()).toEqual(['EmpireEvent', 'Incident']);
  });

  it('is every visible kind when a node has no label or a variable-length relationship passes any kind', () => {
    expect(kinds('MATCH (f:Fingerprint)-[:SEEN_ON]->(x) RETURN x')).toEqual([...NODE_KINDS]);
    expect(kinds('MATCH (a:EmpireEvent)-[:CAUSED_BY*1..3]->(b:EmpireEvent) RETURN b')).toEqual([...NODE_KINDS]);
  });

  it('stays within what the caller sees', () => {
    const narrow: Visibility = { kinds: ['EmpireEvent', 'Toolset'], toolsets: null };
    expect(kinds('MATCH (n) RETURN n', narrow)).toEqual(['EmpireEvent', 'Toolset']);
    expect(kinds('MATCH (t:Tenant) RETURN t', narrow)).toEqual([]);
  });
});
