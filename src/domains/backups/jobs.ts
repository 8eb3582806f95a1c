import type { JobDefinition } from '../../platform/jobs/scheduler.ts';
import type { BackupService } from './service.ts';

/**
 * The nightly snapshot and, an hour later, the restore that proves it (docs/backups/README.md). Both run
 * on demand too: `POST {v1}/ops/jobs/{job}/run`.
 */
export function backupJobs(backups: BackupService): JobDefinition[] {
  return [
    {
      name: 'backup-snapshot',
      description: 'Takes a snapshot of the database (source provider), then deletes snapshots whose retention has ended (file and row).',
      schedule: '30 2 * * *',
      // Jobs wait for the backup turn (turn.ts) rather than fail while a request holds it; the
      // expiry holds it too, so no verification reads a file it is deleting.
      run: ({ now }) =>
        backups.exclusive(async () => {
          const snapshot = await backups.takeSnapshot({ source: 'provider' });
          const { expired, failed } = await backups.expireSnapshots(now);
          return { sizeBytes: snapshot.sizeBytes, tables: Object.keys(snapshot.byTable).length, expired, expireFailed: failed };
        }, { wait: true }),
    },
    {
      name: 'backup-verify',
      description: 'Restores the newest snapshot of the database into a scratch database and compares it with its record; a run whose verification is not ok ends in error.',
      schedule: '30 3 * * *',
      async run() {
        const latest = await backups.latestSnapshot();
        if (latest === null) return { verified: 0 };
        const verification = await backups.verifySnapshot(latest.id, { trigger: 'job', wait: true });
        if (verification.outcome !== 'ok') {
          throw new Error(`restore verification ${verification.id} of snapshot ${latest.id}: ${verification.outcome}: ${verification.errorText ?? ''}`);
        }
        return { verified: 1, durationMs: verification.durationMs };
      },
    },
  ];
}
