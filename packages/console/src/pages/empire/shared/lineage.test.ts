import { describe, expect, it } from 'vitest';
import { lineageGraph, lineageRows } from './lineage';

const event = (id: string, depth: number, causedBy: string | null, toolset = 'crawler-lab') => ({
  eventId: `uuid-${toolset}-${id}`,
  id,
  toolset,
  eventType: 'crawl.page',
  ts: '2026-11-24T08:00:00.000Z',
  tenant: null,
  causedBy,
  compatMode: false,
  depth,
});

describe('lineage as rows and a graph', () => {
  const data = {
    focal: event('b', 0, 'a'),
    upstream: [event('a', 1, 'root'), event('root', 2, null)],
    downstream: [event('d', 2, 'c'), event('c', 1, 'b')],
  };

  it('lists the farthest cause first and the farthest effect last', () => {
    expect(lineageRows(data).map((r) => [r.side, r.id, r.order])).toEqual([
      ['upstream', 'root', 0],
      ['upstream', 'a', 1],
      ['focal', 'b', 2],
      ['downstream', 'c', 3],
      ['downstream', 'd', 4],
    ]);
  });

  it('draws an edge from each cause to its effect, marking the focal event', () => {
    const { nodes, edges } = lineageGraph(lineageRows(data));
    expect(nodes.find((n) => n.kind === 'Focal')?.id).toBe('uuid-crawler-lab-b');
    expect(edges.map((e) => `${e.source}->${e.target}`)).toEqual([
      'uuid-crawler-lab-root->uuid-crawler-lab-a',
      'uuid-crawler-lab-a->uuid-crawler-lab-b',
      'uuid-crawler-lab-b->uuid-crawler-lab-c',
      'uuid-crawler-lab-c->uuid-crawler-lab-d',
    ]);
  });

  it('draws no edge to a cause outside the walk or of another toolset', () => {
    const rows = lineageRows({ focal: event('x', 0, 'gone'), upstream: [], downstream: [event('y', 1, 'x', 'other-lab')] });
    expect(lineageGraph(rows).edges).toEqual([]);
  });
});
