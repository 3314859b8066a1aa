import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { UnreadBodyLimits } from '../limits.js';

const lingering = new WeakSet<Socket>();

/**
 * Ends the connection the way RFC 9112 9.6 asks after an answer sent while
 * the client may still be sending: closing a socket with bytes unread, or
 * receiving bytes after it closed, makes the kernel send a reset, which can
 * wipe the answer from the client's buffers before it is read. So the write
 * side is ended after the answer (the client reads the answer, then the
 * end), what still arrives is read and dropped, and the socket is destroyed
 * when the client ends its side too, or after limits.lingerMs or
 * limits.lingerBytes more, whichever comes first.
 *
 * Node ends a connection whose answer said Connection: close by calling the
 * socket's destroySoon() once the answer is written (destroy as soon as the
 * write side is done, unread bytes or not); this socket's destroySoon is the
 * staged close instead. Node's parser goes on reading the socket and hands
 * the rest of the body to the request, answered already, which drops it.
 */
export function closeGracefully(request: IncomingMessage, limits: UnreadBodyLimits): void {
  const socket = request.socket;
  if (lingering.has(socket)) return;
  lingering.add(socket);
  socket.destroySoon = () => {
    if (socket.destroyed) return;
    let dropped = 0;
    const destroy = () => {
      clearTimeout(deadline);
      request.off('data', countDropped);
      socket.destroy();
    };
    const countDropped = (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > limits.lingerBytes) destroy();
    };
    const deadline = setTimeout(destroy, limits.lingerMs);
    socket.once('close', destroy);
    request.on('data', countDropped);
    request.resume();
    socket.end();
  };
}
