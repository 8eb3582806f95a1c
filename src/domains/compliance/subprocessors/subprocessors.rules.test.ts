import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../platform/errors.ts';
import type { SubprocessorRow } from './repository.ts';
import { actedRow, checkName, checkUpsert, checkUrl, createdRow, reviewCutoff, upsertedRow, URL_MAX } from './service.ts';

// The registry's pure rules (docs/compliance/README.md, "Subprocessors"): names, links, what an upsert
// and an action change, and when nothing changes.

const T0 = new Date('2026-11-20T10:00:00.000Z');
const T1 = new Date('2026-11-21T10:00:00.000Z');

function refusal(work: () => unknown): ServiceError {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    return error as ServiceError;
  }
  throw new Error('expected a refusal');
}

const row = (over: Partial<SubprocessorRow> = {}): SubprocessorRow => ({
  id: '3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a9f',
  name: 'Acme Mail',
  role: 'email',
  dataAccess: 'addresses',
  region: 'EU',
  notes: '',
  websiteUrl: 'https://acme.example',
  contractUrl: null,
  lastReviewedAt: null,
  reviewerOperatorId: null,
  archivedAt: null,
  createdAt: T0,
  updatedAt: T0,
  ...over,
});

describe('checkUrl', () => {
  it('takes absolute http and https URLs, trimmed', () => {
    expect(checkUrl(' https://acme.example/dpa ', 'body.contractUrl')).toBe('https://acme.example/dpa');
    expect(checkUrl('http://acme.example', 'body.contractUrl')).toBe('http://acme.example');
  });
  it('clears with null or empty text, and leaves an absent link absent', () => {
    expect(checkUrl(null, 'f')).toBeNull();
    expect(checkUrl('  ', 'f')).toBeNull();
    expect(checkUrl(undefined, 'f')).toBeUndefined();
  });
  it('refuses other schemes, relative or unparsable text, credentials and over-long URLs, naming the field', () => {
    for (const bad of ['javascript:alert(1)', 'ftp://acme.example/x', 'file:///etc/passwd', 'mailto:dpo@acme.example', 'acme.example/dpa', '/dpa', 'https://', 'https://user:pw@acme.example/']) {
      const error = refusal(() => checkUrl(bad, 'body.websiteUrl'));
      expect(error.status, bad).toBe(400);
      expect(error.reason).toBe('invalid-body');
      expect(error.details).toEqual({ field: 'body.websiteUrl' });
    }
    const long = `https://acme.example/${'a'.repeat(URL_MAX)}`;
    expect(refusal(() => checkUrl(long, 'body.websiteUrl')).human).toContain(`${URL_MAX} characters`);
    expect(checkUrl(long.slice(0, URL_MAX), 'f')).toBe(long.slice(0, URL_MAX));
  });
});

describe('checkName', () => {
  it('trims, and refuses blank, over-long and multi-line names', () => {
    expect(checkName('  Acme  ')).toBe('Acme');
    expect(refusal(() => checkName('   ')).details).toEqual({ field: 'body.name' });
    expect(refusal(() => checkName('a'.repeat(201))).status).toBe(400);
    expect(checkName(` ${'a'.repeat(200)} `)).toHaveLength(200);
    expect(refusal(() => checkName('Acme\nEvil')).status).toBe(400);
    expect(refusal(() => checkName('Acme\tMail')).status).toBe(400);
  });
});

describe('createdRow and upsertedRow', () => {
  it('creates with empty text and null links for fields left out, reviewed only when asked', () => {
    const created = createdRow(checkUpsert({ name: ' Acme ', role: 'cdn' }), 'id-1', T0, 'user-1');
    expect(created).toMatchObject({ name: 'Acme', role: 'cdn', dataAccess: '', region: '', notes: '', websiteUrl: null, contractUrl: null, lastReviewedAt: null, reviewerOperatorId: null });
    const reviewed = createdRow(checkUpsert({ name: 'Acme', role: 'cdn', markReviewed: true }), 'id-1', T0, 'user-1');
    expect(reviewed).toMatchObject({ lastReviewedAt: T0, reviewerOperatorId: 'user-1', createdAt: T0, updatedAt: T0 });
  });

  it('replaces the fields given, keeps those left out, and moves updatedAt', () => {
    const before = row({ lastReviewedAt: T0, reviewerOperatorId: 'alice' });
    const after = upsertedRow(before, checkUpsert({ name: 'acme mail', role: 'email', region: ' US ', websiteUrl: null }), T1, 'bob');
    expect(after).toEqual({ ...before, name: 'acme mail', region: 'US', websiteUrl: null, updatedAt: T1 });
  });

  it('answers null when nothing would change (no write, no audit)', () => {
    const before = row({ lastReviewedAt: T0, reviewerOperatorId: 'alice' });
    expect(upsertedRow(before, checkUpsert({ name: 'Acme Mail', role: 'email', dataAccess: 'addresses ' }), T1, 'bob')).toBeNull();
    expect(upsertedRow(before, checkUpsert({ name: 'Acme Mail', role: 'email', markReviewed: false }), T1, 'bob')).toBeNull();
    // The same review at the same instant by the same operator changes nothing either.
    expect(upsertedRow(before, checkUpsert({ name: 'Acme Mail', role: 'email', markReviewed: true }), T0, 'alice')).toBeNull();
  });

  it('stamps a review with markReviewed, and brings an archived row back into use', () => {
    const reviewed = upsertedRow(row(), checkUpsert({ name: 'Acme Mail', role: 'email', markReviewed: true }), T1, 'bob');
    expect(reviewed).toMatchObject({ lastReviewedAt: T1, reviewerOperatorId: 'bob', updatedAt: T1 });
    const back = upsertedRow(row({ archivedAt: T0 }), checkUpsert({ name: 'Acme Mail', role: 'email' }), T1, 'bob');
    expect(back).toMatchObject({ archivedAt: null, lastReviewedAt: null, updatedAt: T1 });
  });

  it('notices a change of role or contract alone', () => {
    expect(upsertedRow(row(), checkUpsert({ name: 'Acme Mail', role: 'other' }), T1, 'bob')?.role).toBe('other');
    expect(upsertedRow(row(), checkUpsert({ name: 'Acme Mail', role: 'email', contractUrl: 'https://acme.example/dpa' }), T1, 'bob')?.contractUrl).toBe('https://acme.example/dpa');
  });
});

describe('actedRow (the state table)', () => {
  it('review stamps the review and the reviewer, and leaves the row in use', () => {
    expect(actedRow(row(), 'review', T1, 'bob')).toEqual({ ...row(), lastReviewedAt: T1, reviewerOperatorId: 'bob', updatedAt: T1 });
    expect(actedRow(row({ archivedAt: T0 }), 'review', T1, 'bob')).toMatchObject({ archivedAt: null, lastReviewedAt: T1 });
  });
  it('archive stamps archivedAt once: archiving an archived row changes nothing', () => {
    expect(actedRow(row(), 'archive', T1, 'bob')).toEqual({ ...row(), archivedAt: T1, updatedAt: T1 });
    expect(actedRow(row({ archivedAt: T0 }), 'archive', T1, 'bob')).toBeNull();
  });
});

describe('reviewCutoff', () => {
  it('is whole days before now', () => {
    expect(reviewCutoff(T1, 365).toISOString()).toBe('2025-11-21T10:00:00.000Z');
    expect(reviewCutoff(T1, 0)).toEqual(T1);
  });
});
