import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Starts the drain: /readyz answers 503 from now on so that a load
     * balancer takes the instance out, while every other request is still
     * served. Closing the app (later) ends it.
     */
    beginDrain(): void;
  }
}

export interface DrainState {
  /** The drain began: not ready, answers close their connections. */
  draining(): boolean;
  /** The app is closing: new requests are refused. */
  closing(): boolean;
  /** The step on arrival that applies both: a 503 while closing, Connection: close while draining. */
  onArrival: (request: unknown, reply: FastifyReply) => void;
}

/**
 * The two steps of a shutdown a load balancer can follow. Draining (from
 * beginDrain): requests are served as usual, but every response says
 * Connection: close, so keep-alive clients open a new connection - through
 * the balancer, to another instance - instead of finding this one gone.
 * Closing (from app.close()): a request that still arrives gets the 503
 * Error object, and the listener is closed. Both are decided on arrival: a
 * request already in progress when the drain begins keeps its connection,
 * and the next request on it is told to close it.
 */
export function registerDraining(app: FastifyInstance): DrainState {
  let draining = false;
  let closing = false;
  app.decorate('beginDrain', () => {
    draining = true;
  });
  app.addHook('preClose', async () => {
    draining = true;
    closing = true;
  });
  function onArrival(_request: unknown, reply: FastifyReply): void {
    if (!draining) return;
    reply.header('connection', 'close');
    if (closing)
      throw new ApiError(503, 'service_unavailable', 'The service is shutting down; retry the request.', {
        'retry-after': '1',
      });
  }
  return { draining: () => draining, closing: () => closing, onArrival };
}
