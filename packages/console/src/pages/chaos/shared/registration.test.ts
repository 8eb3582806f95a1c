import { describe, expect, it } from 'vitest';
import { EMPTY_DRAFT, registrationBody } from './registration';

describe('the register form\'s body', () => {
  it('leaves blank optional fields out, so the service applies the kind\'s defaults', () => {
    expect(registrationBody({ ...EMPTY_DRAFT, slug: ' latency-search ', kind: 'synthetic-latency', target: ' searchTopics ' })).toEqual({
      slug: 'latency-search',
      kind: 'synthetic-latency',
      target: 'searchTopics',
    });
  });

  it('sends numbers as numbers and the severity chosen', () => {
    expect(
      registrationBody({ slug: 'skip-backup', kind: 'cron-skip-one', target: 'backup-nightly', description: ' Skips one run. ', recoverySloSec: '600', cooldownMinutes: '1440', severity: 'minor' }),
    ).toEqual({ slug: 'skip-backup', kind: 'cron-skip-one', target: 'backup-nightly', description: 'Skips one run.', recoverySloSec: 600, cooldownMinutes: 1440, severity: 'minor' });
  });

  it('sends a value the service will judge, even one it will refuse', () => {
    expect(registrationBody({ ...EMPTY_DRAFT, slug: 'x', target: 't', recoverySloSec: '99999', cooldownMinutes: '0' })).toMatchObject({ recoverySloSec: 99999, cooldownMinutes: 0 });
  });
});
