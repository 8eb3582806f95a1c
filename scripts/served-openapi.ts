import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/platform/config.ts';
import { openDatabase } from '../src/platform/db/client.ts';
import { V1 } from '../src/platform/http/registry.ts';

/**
 * The OpenAPI document `GET {v1}/openapi.json` serves, asked of a throwaway app on an in-memory
 * database (the typed clients of the console and the toolset client are generated from it).
 */
export async function servedOpenApiDocument(): Promise<string> {
  const { DATABASE_URL: _url, OBSERVATORY_ADMIN_TOKEN: _token, ...env } = process.env;
  const config = loadConfig({ ...env, LOG_LEVEL: 'error', OBSERVATORY_SCHEDULER: 'false' }, false);
  const database = await openDatabase({ databaseUrl: null, dataDir: null });
  let token = '';
  const app = await createApp({ config, database, onFirstToken: (t) => (token = t) });
  try {
    const response = await app.server.inject({ method: 'GET', url: `${V1}/openapi.json`, headers: { authorization: `Bearer ${token}` } });
    if (response.statusCode !== 200) throw new Error(`GET ${V1}/openapi.json answered ${response.statusCode}`);
    return response.body;
  } finally {
    await app.close();
    await database.close();
  }
}
