import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { UnreadBodyLimits } from '../limits.js';
import type { RefusedBytesBudget } from './refusedBytes.js';

const lingering = new WeakSet<Socket>();

/**
 * Ends the connection the way RFC 9112 9.6 asks after an answer sent while
 * the client may still be sending: closing a socket with bytes unread, or
 * receiving bytes after it closed, makes the kernel send a reset, which can
 * wipe the answer from the client's buffers before it is read. So the write
 * side is ended after the answer (the client reads the answer, then the
 * end), what still arrives is read and dropped, and the socket is destroyed
 * when the client ends its side too, or after limits.lingerMs or
 * limits.lingerBytes more, whichever comes first, or when the server's
 * budget for refused bytes is spent; with no room in that budget (too many
 * sockets lingering, no bytes left) the socket is left to Node, which
 * destroys it once the answer is written.
 *
 * Node ends a connection whose answer said Connection: close by calling the
 * socket's destroySoon() once the answer is written (destroy as soon as the
 * write side is done, unread bytes or not); this socket's destroySoon is the
 * staged close instead. Node's parser goes on reading the socket and hands
 * the rest of the body to the request, answered already, which drops it
 * after counting it.
 */
export function closeGracefully(request: IncomingMessage, limits: UnreadBodyLimits, budget: RefusedBytesBudget): void {
  const socket = request.socket;
  // Only a connection lingers: a request injected in-process (light-my-request) has no socket to end.
  if (!(socket instanceof Socket) || lingering.has(socket)) return;
  if (!budget.hasBytes() || !budget.admitLingering(socket)) return;
  lingering.add(socket);
  let dropped = 0;
  let deadline: NodeJS.Timeout | undefined;
  const stop = () => {
    clearTimeout(deadline);
    request.off('data', countDropped);
  };
  const destroy = () => {
    stop();
    socket.destroy();
  };
  // Counted from now, as the request's data: Node hands a request it drops
  // itself (one nobody read when its answer was done) no more bytes at all.
  const countDropped = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > limits.lingerBytes || !budget.spend(chunk.length)) destroy();
  };
  request.on('data', countDropped);
  request.resume();
  socket.once('close', stop);
  socket.destroySoon = () => {
    if (socket.destroyed || deadline !== undefined) return;
    deadline = setTimeout(destroy, limits.lingerMs);
    socket.end();
  };
}
