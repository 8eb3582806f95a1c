import { ConfigError, loadConfig } from './platform/config.ts';
import { CONSOLE_PATH, consoleBuilt } from './platform/http/console.ts';
import { createLogger } from './platform/logger.ts';

/**
 * `npm start`: validate the configuration, open storage (PGlite in DATA_DIR, or DATABASE_URL),
 * migrate, make sure the first credential exists, serve HTTP, run the scheduler, and shut down
 * cleanly on SIGTERM or SIGINT.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`observatory: configuration error: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }

  // Loaded only once the configuration is valid: app.ts pulls in some 600 modules, and a start
  // refused for its configuration should say so in a second, not after loading them all.
  const { createApp } = await import('./app.ts');
  let app;
  try {
    app = await createApp({
      config,
      // LOG_FORMAT: readable lines on a terminal, JSON lines otherwise (config.logFormat).
      logger: createLogger(config.logLevel, { format: config.logFormat }),
      onFirstToken: (token) =>
        process.stdout.write(
          `\nFirst start: created an admin API token with every scope. It is shown once; keep it:\n\n  ${token}\n\n`,
        ),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const database = config.databaseUrl ? 'the PostgreSQL server in DATABASE_URL' : `the embedded database in ${config.dataDir}`;
    process.stderr.write(`observatory: start-up failed (database: ${database}): ${message}\n`);
    process.exit(1);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.server.log.info({ signal }, 'shutting down: finishing requests in flight');
    try {
      await app.close();
      process.exit(0);
    } catch (error) {
      app.server.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  const address = await app.server.listen({ port: config.port, host: config.host });
  if (config.schedulerEnabled) app.scheduler.start(config.schedulerTickMs);
  const consoleNote = consoleBuilt() ? `console at ${address}${CONSOLE_PATH}/` : 'console not built: run npm run build:console';
  app.server.log.info(
    { address, database: app.database.driver, endpoints: app.endpoints.length },
    `Observatory is serving ${address} (${consoleNote}; manifest at ${address}/api/observatory/v1/manifest)`,
  );
}

void main();
