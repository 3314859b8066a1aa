import { chmodSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { isProof, newNonce, proofOf } from './serverProof.js';

// One command per connection, as lines of JSON: the client sends
// {"nonce": hex}, the server answers {"proof": HMAC of the nonce under its
// secret} (serverProof.ts); only then does the client send {"argv": [...]},
// and the server answers {"out": text} and {"err": text} as the command
// writes, then {"exit": code}, and closes. A server with all its
// connections taken answers {"busy": true} and closes.

/** The longest request line, the arguments of one command: far above any real one. */
const maxRequestBytes = 64 * 1024;

/**
 * How long a connection may stay without sending its command: the CLI
 * sends it as it connects, so a few seconds is plenty; one that says
 * nothing holds a descriptor the API needs.
 */
const controlIdleTimeoutMs = 5_000;

/**
 * The most control connections open at once: commands are typed by hand,
 * and each held connection is a descriptor; past this, a new one is closed
 * as it arrives, so a flood of them never takes the API's descriptors.
 */
const maxControlConnections = 16;

export interface ControlLimits {
  idleTimeoutMs: number;
  maxConnections: number;
}

export const controlLimits: ControlLimits = {
  idleTimeoutMs: controlIdleTimeoutMs,
  maxConnections: maxControlConnections,
};

/** How long the CLI waits on the server; past either, it gives up with one line. */
export interface ControlDeadlines {
  /**
   * For the proof, which the server writes as soon as it reads the nonce:
   * the server's own idle timeout, so a listener that says nothing is left
   * no sooner than the server would leave a silent client.
   */
  proofMs: number;
  /**
   * For the command's end: each is a statement or two on the embedded
   * database (milliseconds); a minute means the server is stuck.
   */
  commandMs: number;
}

export const controlDeadlines: ControlDeadlines = { proofMs: controlIdleTimeoutMs, commandMs: 60_000 };

/** The server had all its control connections taken: nothing was sent; trying again later works. */
export class ControlBusyError extends Error {
  override name = 'ControlBusyError';
  constructor(path: string) {
    super(`The server is busy (all its control connections at ${path} are taken); nothing was sent. Try again.`);
  }
}

/** The server did not answer in time (controlDeadlines). */
export class ControlTimeoutError extends Error {
  override name = 'ControlTimeoutError';
}

/** A listener that did not prove it holds DATA_DIR's lock: nothing it said is reported, and the command may not have run. */
export class UnprovenServerError extends Error {
  override name = 'UnprovenServerError';
  constructor(what: string) {
    super(
      `Refusing the answer: ${what}; it may be another user's, and the command is not known to have run. ` +
        'If the server is running, restart it, then run this again.',
    );
  }
}

export interface CommandStreams {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

/** Runs one command and resolves with its exit code; what it writes to out and err reaches the client as written. */
export type CommandRunner = (argv: string[], streams: CommandStreams) => Promise<number>;

function frameWriter(socket: Socket, stream: 'out' | 'err'): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      // At once, in order: the socket buffers, and the exit frame follows what was written.
      socket.write(`${JSON.stringify({ [stream]: chunk.toString() })}\n`);
      done();
    },
  });
}

function parseNonce(line: string): string | undefined {
  try {
    const { nonce } = JSON.parse(line) as { nonce?: unknown };
    return typeof nonce === 'string' && /^[0-9a-f]{32}$/.test(nonce) ? nonce : undefined;
  } catch {
    return undefined;
  }
}

function parseArgv(line: string): string[] | undefined {
  try {
    const { argv } = JSON.parse(line) as { argv?: unknown };
    return Array.isArray(argv) && argv.every((arg) => typeof arg === 'string') ? argv : undefined;
  } catch {
    return undefined;
  }
}

const malformed = `${JSON.stringify({ err: 'malformed request\n' })}\n${JSON.stringify({ exit: 2 })}\n`;

function serveConnection(
  socket: Socket,
  run: CommandRunner,
  secret: Buffer,
  idleTimeoutMs: number,
  onError: (error: unknown) => void,
  started: () => void,
): void {
  let received = '';
  let proven = false;
  socket.setEncoding('utf8');
  socket.on('error', onError);
  socket.setTimeout(idleTimeoutMs, () => socket.destroy());
  const onData = (chunk: string) => {
    received += chunk;
    let end: number;
    while ((end = received.indexOf('\n')) >= 0) {
      const line = received.slice(0, end);
      received = received.slice(end + 1);
      if (!proven) {
        const nonce = parseNonce(line);
        if (nonce === undefined) {
          socket.off('data', onData);
          socket.end(malformed);
          return;
        }
        proven = true;
        socket.write(`${JSON.stringify({ proof: proofOf(secret, nonce) })}\n`);
        continue;
      }
      socket.off('data', onData);
      // A command may run as long as it needs; only silence before it is cut.
      socket.setTimeout(0);
      started();
      const argv = parseArgv(line);
      if (!argv) {
        socket.end(malformed);
        return;
      }
      run(argv, { out: frameWriter(socket, 'out'), err: frameWriter(socket, 'err') }).then(
        (code) => socket.end(`${JSON.stringify({ exit: code })}\n`),
        (error: unknown) => {
          onError(error);
          socket.end(
            `${JSON.stringify({ err: 'the server failed to run the command\n' })}\n${JSON.stringify({ exit: 1 })}\n`,
          );
        },
      );
      return;
    }
    if (received.length > maxRequestBytes) socket.destroy();
  };
  socket.on('data', onData);
}

export interface ControlServer {
  close(): Promise<void>;
}

/**
 * Listens on a Unix socket at path, made readable and writable by its owner
 * only (0600; its folder is 0700 already, so nobody else reaches it even
 * before the chmod), and runs each command it receives, proving each time
 * that it knows secret.
 */
export async function serveCommands(
  path: string,
  run: CommandRunner,
  secret: Buffer,
  onError: (error: unknown) => void,
  limits: ControlLimits = controlLimits,
): Promise<ControlServer> {
  // Connections that have not sent their command yet: closing ends them.
  const waiting = new Set<Socket>();
  let open = 0;
  const server: Server = createServer((socket) => {
    // Past the cap a new connection is told so and closed at once (never
    // held: a flood of them must not take the API's descriptors).
    if (open >= limits.maxConnections) {
      socket.on('error', () => undefined);
      socket.end(`${JSON.stringify({ busy: true })}\n`, () => socket.destroy());
      return;
    }
    open += 1;
    socket.once('close', () => (open -= 1));
    waiting.add(socket);
    socket.on('close', () => waiting.delete(socket));
    serveConnection(socket, run, secret, limits.idleTimeoutMs, onError, () => waiting.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
  server.on('error', onError);
  return {
    close: () =>
      new Promise((resolve) => {
        // A command running now finishes, and its client hears its end.
        server.close(() => {
          resolve();
        });
        for (const socket of waiting) socket.destroy();
      }),
  };
}

interface Frame {
  proof?: unknown;
  busy?: unknown;
  out?: string;
  err?: string;
  exit?: number;
}

/**
 * Calls onExpiry once ms have passed and the I/O that arrived meanwhile has
 * been read: Node runs expired timers before it reads sockets, so a process
 * held past the deadline (a busy machine) would otherwise judge the server
 * before reading an answer that came in time. Returns the cancel.
 */
function deadlineAfter(ms: number, onExpiry: () => void): () => void {
  let readFirst: NodeJS.Immediate | undefined;
  const timer = setTimeout(() => {
    readFirst = setImmediate(onExpiry);
  }, ms);
  return () => {
    clearTimeout(timer);
    if (readFirst !== undefined) clearImmediate(readFirst);
  };
}

/**
 * Sends argv to the server listening at path and writes what the command
 * writes to streams; resolves with its exit code (1 if the connection ends
 * without one). Sends only a nonce until the listener proves it knows
 * secret: rejects with UnprovenServerError (nothing sent, nothing written)
 * unless it does, with ControlBusyError when the server has no connection
 * left, and with ControlTimeoutError past the deadlines.
 */
export function sendCommand(
  path: string,
  argv: string[],
  secret: Buffer,
  streams: CommandStreams,
  deadlines: ControlDeadlines = controlDeadlines,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    const nonce = newNonce();
    let proven = false;
    let settled = false;
    let received = '';
    let exit: number | undefined;
    const fail = (error: Error) => {
      settled = true;
      cancelDeadline();
      socket.destroy();
      reject(error);
    };
    const proofDeadline = () =>
      deadlineAfter(deadlines.proofMs, () => {
        fail(
          new ControlTimeoutError(
            `The server at ${path} did not answer within ${deadlines.proofMs} ms; nothing was sent.`,
          ),
        );
      });
    let cancelDeadline = proofDeadline();
    socket.setEncoding('utf8');
    // The proof is awaited from the nonce's sending, not from the connection's start.
    socket.on('connect', () => {
      cancelDeadline();
      if (settled) return;
      socket.write(`${JSON.stringify({ nonce })}\n`);
      cancelDeadline = proofDeadline();
    });
    const onFrame = (frame: Frame): void => {
      if (proven) {
        if (frame.out !== undefined) streams.out.write(frame.out);
        if (frame.err !== undefined) streams.err.write(frame.err);
        if (frame.exit !== undefined) exit = frame.exit;
        return;
      }
      if (frame.busy === true) {
        fail(new ControlBusyError(path));
        return;
      }
      if (!isProof(secret, nonce, frame.proof)) {
        fail(new UnprovenServerError(`the listener at ${path} did not prove it is the server holding DATA_DIR's lock`));
        return;
      }
      proven = true;
      cancelDeadline();
      cancelDeadline = deadlineAfter(deadlines.commandMs, () => {
        fail(
          new ControlTimeoutError(
            `The server at ${path} did not finish the command within ${deadlines.commandMs} ms; ` +
              'it may still finish: see npm run apikey -- list.',
          ),
        );
      });
      socket.write(`${JSON.stringify({ argv })}\n`);
    };
    socket.on('data', (chunk: string) => {
      received += chunk;
      let end: number;
      while (!settled && (end = received.indexOf('\n')) >= 0) {
        let frame: Frame;
        try {
          frame = JSON.parse(received.slice(0, end)) as Frame;
        } catch {
          fail(new UnprovenServerError(`the listener at ${path} answered something that is not the protocol`));
          return;
        }
        received = received.slice(end + 1);
        onFrame(frame);
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      // Cut before a word (a server of an older release at its cap): nothing was sent either.
      if (!proven && (error.code === 'EPIPE' || error.code === 'ECONNRESET')) fail(new ControlBusyError(path));
      else fail(error);
    });
    socket.on('close', () => {
      if (settled) return;
      settled = true;
      cancelDeadline();
      if (!proven) reject(new UnprovenServerError(`the listener at ${path} closed before proving it is the server`));
      else if (exit !== undefined) resolve(exit);
      else {
        streams.err.write('the server closed its control socket before the command finished\n');
        resolve(1);
      }
    });
  });
}
