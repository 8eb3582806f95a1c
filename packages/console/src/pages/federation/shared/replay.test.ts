import { describe, expect, it } from 'vitest';
import { parseTuples } from './ReplayForm';

const tuple = { regionKey: 'alpha', migrationDigest: 'a'.repeat(64), graphDigest: 'b'.repeat(64), complianceDigest: 'c'.repeat(64) };

describe('the pinned tuples box', () => {
  it('is none when empty, the array when JSON, and says why otherwise', () => {
    expect(parseTuples('  ')).toEqual({});
    expect(parseTuples(JSON.stringify([tuple]))).toEqual({ value: [tuple] });
    expect(parseTuples('{"regionKey": "alpha"}').error).toMatch(/not a JSON array/);
    expect(parseTuples('[not json').error).toMatch(/^The pinned tuples are not JSON: /);
  });
});
