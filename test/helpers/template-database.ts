import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { MIGRATIONS_FOLDER, openDatabase, pgliteDatabase } from '../../src/platform/db/client.ts';

/**
 * The migrated database every test file starts from (docs/testing.md, "A fresh database per test
 * file"): migrated once, then copied for each file, because running the 28 migrations is most of
 * what opening a fresh database costs.
 *
 * - PGlite: a dump of a migrated data directory (`dumpDataDir`, uncompressed: it loads faster than
 *   gzip), kept in the OS temp directory under a name that hashes every migration file and the
 *   PGlite version, so a changed migration makes a new dump and an unchanged one is reused by the
 *   next run. Each test file loads it into a new in-memory PGlite (`loadDataDir`).
 * - PostgreSQL: a template database made for the run by the global setup (test/global-setup.ts)
 *   and dropped at its end; each test file's database is `CREATE DATABASE … TEMPLATE` it.
 */

/** Where the global setup names the dump (PGlite) or the template database (PostgreSQL) to the workers. */
export const PGLITE_DUMP_ENV = 'OBSERVATORY_TEST_PGLITE_DUMP';
export const SERVER_TEMPLATE_ENV = 'OBSERVATORY_TEST_PG_TEMPLATE';

/** The file of the migrated PGlite dump, written first if this set of migrations has none yet. */
export async function migratedPgliteDump(): Promise<string> {
  const file = join(tmpdir(), `observatory-migrated-${dumpKey()}.tar`);
  if (existsSync(file)) return file;
  const client = new PGlite();
  await client.waitReady;
  const database = pgliteDatabase(client);
  await database.migrate();
  const dumped = await client.dumpDataDir('none');
  await database.close();
  // Written aside and renamed, so a concurrent reader never sees half a file.
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(partial, Buffer.from(await dumped.arrayBuffer()));
  renameSync(partial, file);
  return file;
}

function dumpKey(): string {
  const hash = createHash('sha256');
  hash.update(`pglite ${pgliteVersion()}\n`);
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else hash.update(entry.name).update(readFileSync(path));
    }
  };
  walk(MIGRATIONS_FOLDER);
  return hash.digest('hex').slice(0, 16);
}

/** The installed PGlite's version (its package.json is not among the files the package exports). */
function pgliteVersion(): string {
  for (let dir = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
    if (name === '@electric-sql/pglite' && version) return version;
  }
  throw new Error('The installed @electric-sql/pglite has no package.json with its version.');
}

/** `serverUrl` with its database name replaced. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs `statement` on the server's maintenance connection (the database DATABASE_URL names). */
export async function onServerAdmin(serverUrl: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

/**
 * Creates and migrates this run's template database on the server and returns its name. It is
 * closed to connections afterwards: PostgreSQL refuses to copy a database anyone is connected to,
 * so a stray connection would fail every test file's CREATE DATABASE.
 */
export async function createServerTemplate(serverUrl: string): Promise<string> {
  const name = `obs_template_${randomBytes(6).toString('hex')}`;
  await onServerAdmin(serverUrl, `CREATE DATABASE ${name}`);
  try {
    await migrateServerDatabase(serverUrl, name);
    await onServerAdmin(serverUrl, `ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
  } catch (error) {
    await dropServerDatabase(serverUrl, name);
    throw error;
  }
  return name;
}

export async function migrateServerDatabase(serverUrl: string, name: string): Promise<void> {
  const database = await openDatabase({ databaseUrl: databaseUrl(serverUrl, name), dataDir: null, poolMax: 1 });
  try {
    await database.migrate();
  } finally {
    await database.close();
  }
}

export function dropServerDatabase(serverUrl: string, name: string): Promise<void> {
  return onServerAdmin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
