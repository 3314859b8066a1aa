import pg from 'pg';
import type { KeyChange, KeyChangeFeed, KeyChangeOptions } from './types.js';

/** The application_name of the session that listens for key changes (pg_stat_activity). */
export const keyChangesApplicationName = 'pet-store-service key changes';

/** The channel migration 0008's trigger announces key changes on (payload: the key's id, or '*'). */
export const keyChangesChannel = 'api_keys_changed';

export function parseKeyChange(payload: string | undefined): KeyChange {
  const keyId = Number(payload);
  return payload && /^[1-9][0-9]{0,15}$/.test(payload) ? { keyId } : 'all';
}

/** The listeners of one feed; 'all' is what a listener hears when it must forget everything. */
export function keyChangeListeners() {
  const listeners = new Set<(change: KeyChange) => void>();
  return {
    add: (listener: (change: KeyChange) => void): (() => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit: (change: KeyChange): void => {
      for (const listener of listeners) listener(change);
    },
    count: () => listeners.size,
  };
}

/** A feed that hears nothing: every remembered key is trusted for its cache time only. */
export const noKeyChanges: KeyChangeFeed = { subscribe: () => () => undefined, live: () => false };

/**
 * Reconnecting after a lost connection waits this long, doubled on each
 * failure up to the maximum (with jitter, so that instances restarted
 * together do not reconnect in step): a failover takes seconds, and until
 * the feed is back each remembered key is trusted for its cache time only.
 */
const firstRetryMs = 100;
const maxRetryMs = 5000;
const connectTimeoutMs = 5000;
/** TCP keepalive on the listening connection, so that the kernel does not keep a dead one for hours. */
const keepAliveDelayMs = 10_000;
/**
 * The listening connection is asked SELECT 1 this often, and is taken for
 * lost when the answer takes longer than the interval: a connection that
 * went silent (a partition drops packets, nothing closes it) would
 * otherwise look alive for TCP keepalive's ten minutes while hearing
 * nothing. A statement every 5 s per instance costs the server nothing.
 */
const defaultHeartbeatMs = 5000;

export interface PostgresKeyChanges extends KeyChangeFeed {
  close(): Promise<void>;
}

/**
 * LISTENs on a connection of its own while anyone subscribes. When it is
 * lost it reconnects with backoff, and tells the listeners 'all' once it
 * listens again: what was committed in between was never announced to it.
 */
export function listenOnPostgres(options: KeyChangeOptions): PostgresKeyChanges {
  const listeners = keyChangeListeners();
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let retryMs = firstRetryMs;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  const heartbeatMs = options.heartbeatMs ?? defaultHeartbeatMs;

  function beat(from: pg.Client): void {
    const late = setTimeout(() => {
      lost(from, `no answer to a heartbeat within ${heartbeatMs} ms`);
    }, heartbeatMs);
    from.query('SELECT 1').then(
      () => {
        clearTimeout(late);
      },
      () => {
        // The connection's error event reports it.
        clearTimeout(late);
      },
    );
  }

  function lost(from: pg.Client, reason: string): void {
    if (client !== from) return;
    client = undefined;
    clearInterval(heartbeat);
    const wasListening = listening;
    listening = false;
    from.end().catch(() => undefined);
    if (closed || listeners.count() === 0) return;
    if (wasListening) options.onState?.('lost', reason);
    const delay = retryMs * (0.5 + Math.random() / 2);
    retryMs = Math.min(retryMs * 2, maxRetryMs);
    retryTimer = setTimeout(connect, delay).unref();
  }

  function connect(): void {
    retryTimer = undefined;
    if (closed || client || listeners.count() === 0) return;
    const next = new pg.Client({
      connectionString: options.url,
      // What an operator reads in pg_stat_activity: this session waits for notifications, not for work.
      application_name: keyChangesApplicationName,
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: keepAliveDelayMs,
    });
    client = next;
    next.on('notification', (message) => {
      if (message.channel === keyChangesChannel) listeners.emit(parseKeyChange(message.payload));
    });
    next.on('error', (error) => {
      lost(next, error.message);
    });
    next.on('end', () => {
      lost(next, 'the connection ended');
    });
    next
      .connect()
      .then(() => next.query(`LISTEN ${keyChangesChannel}`))
      .then(
        () => {
          if (client !== next) return;
          listening = true;
          retryMs = firstRetryMs;
          heartbeat = setInterval(() => {
            beat(next);
          }, heartbeatMs).unref();
          options.onState?.('listening');
          listeners.emit('all');
        },
        (error: unknown) => {
          lost(next, error instanceof Error ? error.message : String(error));
        },
      );
  }

  function stop(): Promise<void> {
    clearTimeout(retryTimer);
    clearInterval(heartbeat);
    retryTimer = undefined;
    const current = client;
    client = undefined;
    listening = false;
    return current ? current.end().catch(() => undefined) : Promise.resolve();
  }

  return {
    subscribe(listener) {
      const remove = listeners.add(listener);
      connect();
      return () => {
        remove();
        if (listeners.count() === 0) void stop();
      };
    },
    live: () => listening,
    close() {
      closed = true;
      return stop();
    },
  };
}
