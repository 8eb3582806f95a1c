import { describe, expect, it } from 'vitest';
import { consolePathFor, type RoutedEndpoint, sameOrigin } from './evidence';
import { parseObserved } from './OverrideForm';

const V1 = '/api/observatory/v1';
const endpoints: RoutedEndpoint[] = [
  { method: 'GET', path: `${V1}/backups/ladder`, uiPath: '/backups' },
  { method: 'GET', path: `${V1}/cost/alerts`, uiPath: '/cost' },
  { method: 'POST', path: `${V1}/audit/chain/verify`, uiPath: '/ops/audit' },
  { method: 'GET', path: `${V1}/audit/chain`, uiPath: '/audit' },
  { method: 'GET', path: `${V1}/audit/chain/{seqNo}`, uiPath: '/audit' },
  { method: 'GET', path: `${V1}/compliance/replay/{evaluationId}`, uiPath: '/compliance/controls' },
  { method: 'GET', path: `${V1}/honeypot/ops/audit`, uiPath: null },
];

describe('consolePathFor', () => {
  it('finds the page of the GET endpoint an evidence URL names, whatever its host and query', () => {
    expect(consolePathFor(`http://localhost:8080${V1}/backups/ladder`, endpoints)).toBe('/backups');
    expect(consolePathFor(`https://obs.example.org${V1}/cost/alerts?status=open`, endpoints)).toBe('/cost');
    expect(consolePathFor(`${V1}/audit/chain`, endpoints)).toBe('/audit');
  });

  it('matches a templated path one segment per parameter, and prefers an exact path', () => {
    expect(consolePathFor(`http://h${V1}/compliance/replay/7f3e2d1c-0b9a-4877-8665-544332211000`, endpoints)).toBe('/compliance/controls');
    expect(consolePathFor(`http://h${V1}/compliance/replay/a/b`, endpoints)).toBeNull();
    expect(consolePathFor(`http://h${V1}/audit/chain/42`, endpoints)).toBe('/audit');
  });

  it('answers null for a path no GET endpoint with a page serves', () => {
    expect(consolePathFor(`http://h${V1}/honeypot/ops/audit`, endpoints)).toBeNull();
    expect(consolePathFor(`http://h${V1}/audit/chain/verify/x`, endpoints)).toBeNull();
    expect(consolePathFor(`http://h${V1}/backups/ladder/extra`, endpoints)).toBeNull();
    expect(consolePathFor('http://[not a url', endpoints)).toBeNull();
  });
});

describe('sameOrigin', () => {
  it('keeps the path and the signed query, drops the public host', () => {
    expect(sameOrigin(`http://localhost:8080${V1}/compliance/evidence/b/soc2-summary.pdf?expires=1&signature=ab`)).toBe(
      `${V1}/compliance/evidence/b/soc2-summary.pdf?expires=1&signature=ab`,
    );
    expect(sameOrigin('/relative?x=1')).toBe('/relative?x=1');
  });
});

describe('parseObserved', () => {
  it('reads empty as no evidence, JSON as its value, and names what is not JSON', () => {
    expect(parseObserved('  ')).toEqual({});
    expect(parseObserved('{"ticket":"PROC-1"}')).toEqual({ value: { ticket: 'PROC-1' } });
    expect(parseObserved('null')).toEqual({ value: null });
    expect(parseObserved('{ticket}').error).toMatch(/^The evidence is not JSON: /);
  });
});
