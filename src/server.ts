import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { apiPrefix } from './contract.js';
import { DataDirLockedError, openDatabase } from './db/index.js';
import { SchemaOutdatedError } from './db/migrations.js';
import { prepareDatabase } from './startup.js';

function fail(message: string, exitCode = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(exitCode);
}

function announceFirstKey(key: string): void {
  process.stdout.write(
    [
      '',
      'No API key existed, so one was created. It is shown this once; keep it:',
      '',
      `    ${key}`,
      '',
      `Use it as:  curl -H 'Authorization: Bearer ${key}' http://HOST:PORT${apiPrefix}/pets`,
      'More keys:  npm run apikey -- create <name>   (with the server stopped, on the embedded database)',
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message, 2);
    throw error;
  }
  const db = await openDatabase(config, { onPoolError: (error) => process.stderr.write(`database pool error: ${error.message}\n`) }).catch(
    (error: unknown) => (error instanceof DataDirLockedError ? fail(error.message) : Promise.reject(error)),
  );
  const prepared = await prepareDatabase(db, config).catch(async (error: unknown) => {
    await db.close();
    return error instanceof SchemaOutdatedError ? fail(error.message) : Promise.reject(error);
  });
  if (prepared.firstKey) announceFirstKey(prepared.firstKey);
  const app = await buildApp(config, { db });
  if (prepared.activeKeys === 0) {
    app.log.warn('No active API key exists: every request will get 401. Create one with `npm run apikey -- create <name>` or set BOOTSTRAP_API_KEY.');
  }

  // Stop accepting, let in-flight requests finish (at most
  // SHUTDOWN_TIMEOUT_MS, then their connections are cut), close the pool or
  // the embedded database (which releases its lock), and exit. A second
  // signal exits at once.
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    closing = true;
    app.log.info({ signal, timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'shutting down: draining in-flight requests');
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      app.log.warn('shutdown timeout reached: closing the remaining connections');
      app.server.closeAllConnections();
    }, config.SHUTDOWN_TIMEOUT_MS);
    let exitCode = 0;
    try {
      await app.close();
    } catch (error) {
      app.log.error({ err: error }, 'error while closing the HTTP server');
      exitCode = 1;
    } finally {
      clearTimeout(deadline);
      await db.close().catch((error: unknown) => {
        app.log.error({ err: error }, 'error while closing the database');
        exitCode = 1;
      });
    }
    app.log.info({ timedOut }, 'shut down');
    process.exit(exitCode);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  const address = await app.listen({ port: config.PORT, host: config.HOST });
  app.log.info(`serving ${address}${apiPrefix} on the ${db.kind === 'embedded' ? `embedded database in ${config.DATA_DIR}` : 'PostgreSQL database'}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
