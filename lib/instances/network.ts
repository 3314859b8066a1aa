import { createConnection, createServer } from 'node:net';

export const loopback = '127.0.0.1';

/** Ports handed out by this process, so two calls never return the same one before it is bound. */
const handedOut = new Set<number>();

/** A TCP port on 127.0.0.1 that nothing listens on now (the kernel picks it). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.unref();
      server.on('error', reject);
      server.listen(0, loopback, () => {
        const address = server.address();
        const chosen = typeof address === 'object' && address ? address.port : 0;
        server.close(() => {
          resolve(chosen);
        });
      });
    });
    if (port > 0 && !handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('could not find a free TCP port on 127.0.0.1');
}

/** Sends `request` to 127.0.0.1:port and resolves with what came back before `until` matched or the peer closed. */
export function exchange(port: number, request: string, until: RegExp, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: loopback, port });
    let received = '';
    const done = (error?: Error) => {
      socket.destroy();
      if (error) reject(error);
      else resolve(received);
    };
    socket.setTimeout(timeoutMs, () => {
      done(new Error(`no answer from 127.0.0.1:${port} within ${timeoutMs} ms`));
    });
    socket.on('error', (error) => {
      done(error);
    });
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk) => {
      received += chunk.toString();
      if (until.test(received)) done();
    });
    socket.on('end', () => {
      done();
    });
  });
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function accepts(port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: loopback, port });
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => {
      done(false);
    });
    socket.on('error', () => {
      done(false);
    });
    socket.on('connect', () => {
      done(true);
    });
  });
}
