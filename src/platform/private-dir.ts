import { chmod, mkdir } from 'node:fs/promises';

/**
 * Creates `dir` (and its parents) for the service's user only (0700), and makes an existing one
 * so: the embedded database's data directory and the backup folders hold the whole database
 * (docs/operations.md, "Start-up"; docs/backups/README.md, "Where files go").
 */
export async function privateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}
