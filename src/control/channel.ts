import { chmodSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { isProof, newNonce, proofOf } from './serverProof.js';

// One command per connection, as lines of JSON: the client sends
// {"argv": [...], "nonce": hex}, the server answers {"proof": HMAC of the
// nonce under its secret} (serverProof.ts), then {"out": text} and
// {"err": text} as the command writes, then {"exit": code}, and closes.

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

interface Request {
  argv: string[];
  nonce: string;
}

function parseRequest(line: string): Request | undefined {
  try {
    const { argv, nonce } = JSON.parse(line) as { argv?: unknown; nonce?: unknown };
    if (!Array.isArray(argv) || !argv.every((arg) => typeof arg === 'string')) return undefined;
    return typeof nonce === 'string' && /^[0-9a-f]{32}$/.test(nonce) ? { argv, nonce } : undefined;
  } catch {
    return undefined;
  }
}

function serveConnection(
  socket: Socket,
  run: CommandRunner,
  secret: Buffer,
  idleTimeoutMs: number,
  onError: (error: unknown) => void,
  started: () => void,
): void {
  let received = '';
  socket.setEncoding('utf8');
  socket.on('error', onError);
  socket.setTimeout(idleTimeoutMs, () => socket.destroy());
  const onData = (chunk: string) => {
    received += chunk;
    const end = received.indexOf('\n');
    if (end < 0) {
      if (received.length > maxRequestBytes) socket.destroy();
      return;
    }
    socket.off('data', onData);
    // A command may run as long as it needs; only silence before it is cut.
    socket.setTimeout(0);
    started();
    const request = parseRequest(received.slice(0, end));
    if (!request) {
      socket.end(`${JSON.stringify({ err: 'malformed request\n' })}\n${JSON.stringify({ exit: 2 })}\n`);
      return;
    }
    socket.write(`${JSON.stringify({ proof: proofOf(secret, request.nonce) })}\n`);
    run(request.argv, { out: frameWriter(socket, 'out'), err: frameWriter(socket, 'err') }).then(
      (code) => socket.end(`${JSON.stringify({ exit: code })}\n`),
      (error: unknown) => {
        onError(error);
        socket.end(
          `${JSON.stringify({ err: 'the server failed to run the command\n' })}\n${JSON.stringify({ exit: 1 })}\n`,
        );
      },
    );
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
  const server: Server = createServer((socket) => {
    waiting.add(socket);
    socket.on('close', () => waiting.delete(socket));
    serveConnection(socket, run, secret, limits.idleTimeoutMs, onError, () => waiting.delete(socket));
  });
  server.maxConnections = limits.maxConnections;
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
  out?: string;
  err?: string;
  exit?: number;
}

/**
 * Sends argv to the server listening at path and writes what the command
 * writes to streams; resolves with its exit code (1 if the connection ends
 * without one). Rejects with UnprovenServerError, before anything is
 * written, unless the first answer proves the listener knows secret.
 */
export function sendCommand(path: string, argv: string[], secret: Buffer, streams: CommandStreams): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    const nonce = newNonce();
    let proven = false;
    let received = '';
    let exit: number | undefined;
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify({ argv, nonce })}\n`));
    socket.on('data', (chunk: string) => {
      received += chunk;
      let end: number;
      while ((end = received.indexOf('\n')) >= 0) {
        let frame: Frame;
        try {
          frame = JSON.parse(received.slice(0, end)) as Frame;
        } catch (error) {
          socket.destroy();
          reject(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        received = received.slice(end + 1);
        if (!proven) {
          if (!isProof(secret, nonce, frame.proof)) {
            socket.destroy();
            reject(
              new UnprovenServerError(`the listener at ${path} did not prove it is the server holding DATA_DIR's lock`),
            );
            return;
          }
          proven = true;
          continue;
        }
        if (frame.out !== undefined) streams.out.write(frame.out);
        if (frame.err !== undefined) streams.err.write(frame.err);
        if (frame.exit !== undefined) exit = frame.exit;
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      if (!proven) reject(new UnprovenServerError(`the listener at ${path} closed before proving it is the server`));
      else if (exit !== undefined) resolve(exit);
      else {
        streams.err.write('the server closed its control socket before the command finished\n');
        resolve(1);
      }
    });
  });
}
