import type { Socket } from 'node:net';
import type { UnreadBodyLimits } from '../limits.js';

/**
 * What the whole server spends on refused bodies, across every connection
 * (HAProxy's and nginx's global limits on buffered request bytes): the
 * bytes read and dropped of bodies answered unread and of connections
 * lingering after a closing answer, and the number of lingering sockets.
 * Each connection has its own bounds too (discardBytes, lingerBytes), but
 * many connections at once would each get theirs: 200 connections refused
 * at once had the event loop reading 1.6 GB. Bytes come from a bucket
 * (limits.refusedBytesBurst) refilled at limits.refusedBytesPerSecond; a
 * refused connection that finds it empty, or the lingering sockets at their
 * limit, is closed at once after its answer (which a client still sending
 * may then lose to a reset: the price of the flood, not of a mistake).
 */
export class RefusedBytesBudget {
  #bytes: number;
  #filledAt = performance.now();
  readonly #lingering = new Set<Socket>();

  constructor(private readonly limits: UnreadBodyLimits) {
    this.#bytes = limits.refusedBytesBurst;
  }

  #refill(): void {
    const now = performance.now();
    const earned = ((now - this.#filledAt) / 1000) * this.limits.refusedBytesPerSecond;
    this.#bytes = Math.min(this.limits.refusedBytesBurst, this.#bytes + earned);
    this.#filledAt = now;
  }

  /**
   * Spends `bytes` read from a refused request (read already: what the
   * budget cannot cover is owed, and repaid before it refills); false once
   * the budget is overspent.
   */
  spend(bytes: number): boolean {
    this.#refill();
    this.#bytes -= bytes;
    return this.#bytes >= 0;
  }

  /** Whether any byte is left to read a refused body with. */
  hasBytes(): boolean {
    this.#refill();
    return this.#bytes > 0;
  }

  /** Counts this socket as lingering until it closes; false when the lingering sockets are at their limit. */
  admitLingering(socket: Socket): boolean {
    if (this.#lingering.size >= this.limits.maxLingering) return false;
    this.#lingering.add(socket);
    socket.once('close', () => this.#lingering.delete(socket));
    return true;
  }
}
