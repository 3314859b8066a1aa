// Types only (no values, no classes), so that any file of src/db can import
// this one without ever closing an import circle.

/**
 * A parameterized statement. A name lets PostgreSQL prepare it once per
 * connection and, after a few runs, reuse one generic plan for every
 * parameter value. A statement whose best plan depends on the values has no
 * name, so that each run is planned for its own values.
 */
export interface Statement {
  name?: string;
  text: string;
}

export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

/** Anything that runs SQL: the database itself or a transaction. */
export interface Queryable {
  query<Row>(statement: Statement, values?: readonly unknown[]): Promise<QueryResult<Row>>;
  /** Runs a script of several statements without parameters (migrations only). */
  execScript(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'embedded';
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Runs read (statements that change nothing) and, on PostgreSQL, runs it
   * again through a short outage (rideThrough.ts): unlike a write, a read may
   * be run again whatever became of the first attempt.
   */
  read<T>(read: () => Promise<T>): Promise<T>;
  /**
   * A replica to read from (the next healthy one on each call), or undefined
   * when reads must go to this database. A read that fails on the replica
   * for want of the replica is run again here.
   */
  replica(): Queryable | undefined;
  /** Where reads go and the state of each replica. */
  readStatus(): ReadStatus;
  /** Connections of the pool (PostgreSQL); undefined for the embedded database. */
  poolStatus(): PoolStatus | undefined;
  /**
   * Stops the work in flight so that none of it commits later (PostgreSQL:
   * ends the sessions of checked-out connections). Resolves with how many.
   */
  cancelInFlight(): Promise<number>;
  /** Changes to stored API keys, as the database announces them when they commit (keyChanges.ts). */
  readonly keyChanges: KeyChangeFeed;
  close(): Promise<void>;
}

/** A committed change to a stored API key: the key's id, or every key (changes may have been missed). */
export type KeyChange = { keyId: number } | 'all';

export interface KeyChangeFeed {
  /**
   * Calls listener with every change committed from now on, and with 'all'
   * each time the feed (re)connects: a change committed while it was not
   * connected is never heard. Returns the function that stops it.
   */
  subscribe(listener: (change: KeyChange) => void): () => void;
  /** True while every committed change reaches the listeners (connected and listening). */
  live(): boolean;
}

export interface PoolStatus {
  total: number;
  idle: number;
  /** Callers queued for a connection: pool pressure. */
  waiting: number;
  /** The most connections the pool opens. */
  max: number;
}

export interface ReplicaState {
  /** host:port/database, never credentials. */
  replica: string;
  /** streaming, or why reads avoid it: "unreachable: ...", "lagging: ...", "not in recovery", "not checked yet". */
  state: string;
  /** Seconds behind the primary at the last check, when known. */
  lagSeconds?: number;
}

export interface ReadStatus {
  /** replicas when at least one replica serves reads, else primary. */
  reads: 'replicas' | 'primary';
  replicas: ReplicaState[];
}

/** Read replicas of a PostgreSQL primary. */
export interface ReplicaOptions {
  urls: string[];
  /** A replica further behind the primary than this is not read from. */
  maxLagSeconds: number;
  /** How often each replica's reachability and replay position are checked (default 1000 ms). */
  checkIntervalMs?: number;
  /** Called when a replica's state changes (one log line per change). */
  onChange?: (state: ReplicaState, reads: ReadStatus['reads']) => void;
}

/** A PostgreSQL server reached through a pool of connections. */
export interface PostgresOptions {
  url: string;
  poolSize: number;
  /**
   * named (the default): PostgreSQL prepares each named statement once per
   * connection. unnamed: no named prepared statement is ever sent, as any
   * transaction pooler needs (a connection serves other clients between
   * transactions).
   */
  statements?: 'named' | 'unnamed';
  /** Longest wait for a pooled connection, queueing and connecting (default 5000 ms). */
  acquireTimeoutMs?: number;
  /**
   * Longest wait for the answer to one statement, on the client side (none
   * when 0 or unset): it also bounds the wait in a pooler's queue, which the
   * server never sees. The connection is discarded after such a timeout.
   */
  queryTimeoutMs?: number;
  replicas?: ReplicaOptions;
  /** An idle pooled connection is closed after this long (default 10000 ms). */
  idleTimeoutMs?: number;
  /** Called when an idle pooled connection fails (the pool replaces it). */
  onPoolError?: (error: Error) => void;
  /** Called once per transaction or read tried again through a short outage (rideThrough.ts), when it ends. */
  onRideThrough?: (report: RideThroughReport) => void;
  /**
   * Where to LISTEN for key changes: a session of its own on the primary
   * (directly or through a session pooler; a transaction pooler does not
   * deliver notifications). Absent: no key changes are heard.
   */
  keyChanges?: KeyChangeOptions;
}

export interface KeyChangeOptions {
  url: string;
  /** Called when listening starts, and when its connection is lost (until it is back). */
  onState?: (state: 'listening' | 'lost', reason?: string) => void;
  /** Tests only: how often the listening connection is checked (default 5000 ms). */
  heartbeatMs?: number;
}

/** The embedded database (PGlite), its files in one folder. */
export interface EmbeddedOptions {
  dataDir: string;
  /**
   * Below this much free space (MB) in dataDir, every call is refused as
   * unavailable (default 24): PGlite hangs when a write hits ENOSPC.
   */
  minFreeMb?: number;
}

export type DatabaseOptions = PostgresOptions | EmbeddedOptions;

/** One unit of work (a transaction, a read) that was tried again: why, how often, how long, and how it ended. */
export interface RideThroughReport {
  /** Why the first attempt failed, in an operator's words. */
  reason: string;
  /** Attempts made, the first included. */
  attempts: number;
  /** From the start of the first attempt to the outcome. */
  durationMs: number;
  /** succeeded: the work was done; gave up: the budget ran out or a later failure may have had an effect. */
  outcome: 'succeeded' | 'gave up';
}
