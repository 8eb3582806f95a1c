import { describe, expect, it } from 'vitest';
import { examplesOf, type ManifestEntry, matches } from './manifest';

const entry: ManifestEntry = {
  id: 'listOperatorAudit',
  title: 'Operator audit log',
  description: 'Every state-changing call: verb, target, surface, actor.',
  method: 'GET',
  path: '/api/observatory/v1/honeypot/ops/audit',
  auth: 'session-or-bearer',
  scope: 'read:empire',
  uiPath: '/ops/audit',
  tag: 'ops',
  kind: 'read',
  paramsSchema: null,
  querySchema: { type: 'object', examples: [{ limit: 100 }] },
  bodySchema: null,
  responseSchema: null,
  example: null,
};

describe('the endpoint search', () => {
  it('matches every word, case-insensitively, across id, title, path, scope and description', () => {
    expect(matches(entry, '')).toBe(true);
    expect(matches(entry, 'AUDIT read:empire')).toBe(true);
    expect(matches(entry, 'listoperatoraudit')).toBe(true);
    expect(matches(entry, 'state-changing /ops/audit')).toBe(true);
    expect(matches(entry, 'audit tokens')).toBe(false);
  });

  it('reads request examples from a schema, and none from anything else', () => {
    expect(examplesOf(entry.querySchema)).toEqual([{ limit: 100 }]);
    expect(examplesOf(null)).toEqual([]);
    expect(examplesOf({ examples: 'not a list' })).toEqual([]);
  });
});
