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
  /** The step on arrival: a 503 once the app is closing. */
  onArrival: (request: unknown, reply: FastifyReply) => void;
}

/**
 * The two steps of a shutdown a load balancer can follow. Draining (from
 * beginDrain): requests are served as usual, but every answer sent from
 * then on says Connection: close and closes its connection - including the
 * answer to a request that was already in progress - so keep-alive clients
 * open a new connection (through the balancer, to another instance) instead
 * of finding this one gone, and no connection outlives its last answer.
 * Closing (from app.close()): the listener stops accepting, Node's
 * server.close() closes the idle keep-alive connections at once, and a
 * request that still arrives on an open one gets the 503 Error object.
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
  // Decided as the answer is sent, not on arrival: a request in progress
  // when the drain begins would otherwise keep its connection open until
  // the shutdown deadline.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });
  function onArrival(): void {
    if (closing)
      throw new ApiError(503, 'service_unavailable', 'The service is shutting down; retry the request.', {
        'retry-after': '1',
      });
  }
  return { draining: () => draining, closing: () => closing, onArrival };
}
