import closeWithGrace from 'close-with-grace';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import type { Config } from './config/load.js';
import { isMainModule } from './entryPoint.js';
import { startServer, type RunningServer } from './process/startServer.js';
import { loadConfigOrFail, StartupError } from './process/startupErrors.js';

// After the shutdown deadline, cancelling and closing get this long before
// the process exits regardless: SHUTDOWN_TIMEOUT_MS bounds the exit.
const exitGraceMs = 2000;

/** What the process logs with: the app's logger once it exists, JSON lines on stdout before. */
function processLogger(config: Config, server: () => RunningServer | undefined): () => FastifyBaseLogger {
  let early: FastifyBaseLogger | undefined;
  return () => server()?.app.log ?? (early ??= pino({ level: config.LOG_LEVEL }));
}

/**
 * The process, run by close-with-grace as fastify/demo does: it starts the
 * server, and on SIGTERM, SIGINT (or another terminating signal) runs our
 * shutdown (the drain, then closeGracefully) and exits. A second signal
 * exits at once; so does the deadline (DRAIN_DELAY_MS + SHUTDOWN_TIMEOUT_MS
 * and a little). An uncaught exception or unhandled rejection is logged as
 * one JSON line (its stack inside), then the server shuts down without the
 * drain and the process exits 1. A signal during start-up stops it.
 */
async function main(): Promise<void> {
  const config = loadConfigOrFail(process.env);
  const starting = new AbortController();
  const serving: { server?: RunningServer } = {};
  const log = processLogger(config, () => serving.server);
  const started = startServer(process.env, process.stdout, { signal: starting.signal });
  closeWithGrace(
    {
      delay: config.DRAIN_DELAY_MS + config.SHUTDOWN_TIMEOUT_MS + exitGraceMs,
      logger: {
        error: (error: unknown) => {
          log().error({ err: error }, 'shutdown failed: exiting');
        },
      },
      onSecondSignal: (signal) => {
        log().warn({ signal }, 'second signal: exiting without waiting');
      },
      onSecondError: (error) => {
        log().fatal({ err: error }, 'uncaught error while shutting down: exiting without waiting');
      },
      onTimeout: (delayMs) => {
        log().error({ delayMs }, 'shutdown did not finish within DRAIN_DELAY_MS + SHUTDOWN_TIMEOUT_MS: exiting');
      },
    },
    async ({ signal, err }) => {
      if (err) log().fatal({ err }, 'uncaught error: shutting down');
      starting.abort();
      const running = await started.catch(() => undefined);
      // A start that failed or was stopped: the catch below reports it and exits.
      if (!running) return new Promise<never>(() => undefined);
      const code = await running.shutdown(signal ?? (err ? 'error' : 'exit'));
      if (code !== 0) process.exit(code);
    },
  );
  serving.server = await started;
}

if (isMainModule(import.meta.url)) {
  main().catch((error: unknown) => {
    const message =
      error instanceof StartupError
        ? error.message
        : `Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
    process.stderr.write(`${message}\n`);
    process.exit(error instanceof StartupError ? error.exitCode : 1);
  });
}
