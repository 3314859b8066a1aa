import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { parseResponse, type RawResponse } from './harness.js';

/**
 * One client connection over a raw socket that keeps it open between
 * requests: what the server sent is collected as it comes, answers are
 * taken out one at a time (Content-Length framed), and how the connection
 * ended is kept (the server's end, a reset, or still open).
 */
export class RawConnection {
  private received = Buffer.alloc(0);
  private readonly changed = new EventTarget();
  /** The server ended its side (a FIN), seen as 'end'. */
  endedByServer = false;
  /** The socket's error, if any: ECONNRESET when the server reset it. */
  error: NodeJS.ErrnoException | undefined;
  closed = false;
  /** Body bytes written so far by sendUntilAnswered. */
  bodyBytesSent = 0;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.changed.dispatchEvent(new Event('change'));
    });
    socket.on('end', () => {
      this.endedByServer = true;
      this.changed.dispatchEvent(new Event('change'));
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.error = error;
    });
    socket.on('close', () => {
      this.closed = true;
      this.changed.dispatchEvent(new Event('change'));
    });
  }

  /** allowHalfOpen: the client's side stays open after the server's end (it may go on writing). */
  static async open(port: number, allowHalfOpen = false): Promise<RawConnection> {
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen });
    await once(socket, 'connect');
    return new RawConnection(socket);
  }

  write(bytes: string | Buffer): boolean {
    return this.socket.write(bytes);
  }

  /** The length of the first complete answer in what was received, or undefined. */
  private completeAnswerLength(): number | undefined {
    const headerEnd = this.received.indexOf('\r\n\r\n');
    if (headerEnd < 0) return undefined;
    const head = this.received.subarray(0, headerEnd).toString('latin1');
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    const total = headerEnd + 4 + length;
    return this.received.length >= total ? total : undefined;
  }

  hasAnswer(): boolean {
    return this.completeAnswerLength() !== undefined;
  }

  /** Resolves on the next change (bytes, end, close). */
  private nextChange(): Promise<void> {
    return new Promise((resolve) => {
      this.changed.addEventListener(
        'change',
        () => {
          resolve();
        },
        { once: true },
      );
    });
  }

  /** The next whole answer, taken out of what was received; rejects if the connection closes first. */
  async answer(): Promise<RawResponse> {
    for (;;) {
      const length = this.completeAnswerLength();
      if (length !== undefined) {
        const answer = parseResponse(this.received.subarray(0, length));
        this.received = this.received.subarray(length);
        return answer;
      }
      if (this.closed || this.endedByServer)
        throw new Error(
          `the connection ended before a whole answer (${this.received.length} bytes; ${this.error?.code ?? 'no error'})`,
        );
      await this.nextChange();
    }
  }

  /**
   * Writes the head, then body chunks from nextChunk as fast as the server
   * takes them, until a whole answer has arrived, the connection ends, or
   * maxBodyBytes are sent. The client is still writing when the answer
   * comes, as a client sending a large upload is. With stopOnAnswer false
   * it goes on until the connection closes: a client that never reads.
   */
  async sendUntilAnswered(
    head: string,
    nextChunk: () => Buffer,
    maxBodyBytes: number,
    stopOnAnswer = true,
  ): Promise<void> {
    this.write(head);
    const answered = () => stopOnAnswer && (this.hasAnswer() || this.endedByServer);
    // Errors end the writing: a reset is kept in this.error.
    this.socket.on('error', () => undefined);
    while (!answered() && !this.closed && this.bodyBytesSent < maxBodyBytes) {
      const chunk = nextChunk();
      this.bodyBytesSent += chunk.length;
      if (this.socket.write(chunk)) await new Promise(setImmediate);
      else await this.drainedOrChanged();
    }
  }

  private drainedOrChanged(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.changed.removeEventListener('change', done);
        resolve();
      };
      this.socket.once('drain', done);
      this.changed.addEventListener('change', done, { once: true });
    });
  }

  /** Resolves once the socket has closed (the server ended or reset it). */
  async whenClosed(): Promise<void> {
    while (!this.closed) await this.nextChange();
  }

  destroy(): void {
    this.socket.destroy();
  }
}
