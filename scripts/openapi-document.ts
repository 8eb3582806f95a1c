import { writeFileSync } from 'node:fs';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/platform/config.ts';
import { openDatabase } from '../src/platform/db/client.ts';
import { V1 } from '../src/platform/http/registry.ts';

/**
 * Writes the served OpenAPI document to the path given (the console's typed client is generated
 * from it at build time, so the console fails to build when an endpoint it uses changes). It asks a
 * throwaway app on an in-memory database, the same document `GET {v1}/openapi.json` serves.
 */
const target = process.argv[2];
if (!target) {
  process.stderr.write('usage: openapi-document.ts <output.json>\n');
  process.exit(2);
}
const { DATABASE_URL: _url, OBSERVATORY_ADMIN_TOKEN: _token, ...env } = process.env;
const config = loadConfig({ ...env, LOG_LEVEL: 'error', OBSERVATORY_SCHEDULER: 'false' }, false);
const database = await openDatabase({ databaseUrl: null, dataDir: null });
let token = '';
const app = await createApp({ config, database, onFirstToken: (t) => (token = t) });
try {
  const response = await app.server.inject({ method: 'GET', url: `${V1}/openapi.json`, headers: { authorization: `Bearer ${token}` } });
  if (response.statusCode !== 200) throw new Error(`GET ${V1}/openapi.json answered ${response.statusCode}`);
  writeFileSync(target, response.body);
} finally {
  await app.close();
  await database.close();
}
