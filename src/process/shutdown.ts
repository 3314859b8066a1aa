import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/load.js';
import type { Database } from '../db/index.js';
import type { MetricsServer } from '../observability/metricsServer.js';
import type { Tracing } from '../observability/tracingTypes.js';
import type { ControlSocket } from './controlSocket.js';

/** Balancers and orchestrators stop an instance with SIGTERM; SIGINT is someone at a terminal. */
const drainDelayOf = (config: Config, signal: string) => (signal === 'SIGTERM' ? config.DRAIN_DELAY_MS : 0);

/**
 * The shutdown a load balancer can follow. First the drain (SIGTERM only,
 * DRAIN_DELAY_MS): /readyz answers 503 so that the balancer's checks take
 * the instance out, while requests are still served as usual (every answer
 * from then on closes its connection). Then it stops accepting, closes the
 * idle connections and lets in-flight requests finish for at most
 * SHUTDOWN_TIMEOUT_MS, exiting as soon as the last is answered; at that
 * deadline the database work still in flight is cancelled (so that a write
 * whose client is cut never commits later) and the remaining connections
 * are cut. Then the pool or the embedded database (its lock) is closed.
 * SIGINT, someone at a terminal, skips the drain.
 */
export interface Attached {
  metricsServer: MetricsServer | undefined;
  tracing: Tracing | undefined;
  controlSocket: ControlSocket | undefined;
}

export async function closeGracefully(
  app: FastifyInstance,
  db: Database,
  config: Config,
  attached: Attached,
  signal: string,
): Promise<number> {
  const drainMs = drainDelayOf(config, signal);
  app.beginDrain();
  if (drainMs > 0) {
    app.log.info({ signal, drainMs }, 'draining: /readyz answers 503, requests are still served until the delay ends');
    await sleep(drainMs);
  }
  app.log.info({ signal, timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'shutting down: draining in-flight requests');
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    void db.cancelInFlight().then((cancelled) => {
      app.log.warn(
        { cancelled },
        'shutdown timeout reached: cancelled the database work in flight, closing the remaining connections',
      );
    });
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
    // Before the database: a command in flight over it finishes first.
    await attached.controlSocket?.close().catch((error: unknown) => {
      app.log.warn({ err: error }, 'error while closing the control socket');
    });
    await db.close().catch((error: unknown) => {
      app.log.error({ err: error }, 'error while closing the database');
      exitCode = 1;
    });
  }
  await attached.metricsServer?.close();
  await attached.tracing?.flush().catch((error: unknown) => {
    app.log.warn({ err: error }, 'could not send the last spans');
  });
  app.log.info({ timedOut }, 'shut down');
  return exitCode;
}
