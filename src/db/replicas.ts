import type pg from 'pg';
import { createPool, describeUrl, queryableOf, statementSettingsOf, type PoolSettings } from './pool.js';
import { replayState, walPosition } from './replication.js';
import type { Queryable, QueryResult, ReadStatus, ReplicaOptions, ReplicaState, Statement } from './types.js';
import { unavailabilityReason } from './unavailability.js';

interface Replica {
  label: string;
  pool: pg.Pool;
  queryable: Queryable;
  /** Reads may go here: reachable at the last check, in recovery, not too far behind. */
  usable: boolean;
  state: ReplicaState;
}

interface PositionSample {
  at: number;
  lsn: bigint;
}

export interface ReplicaSet {
  /** The next usable replica (round robin), its failures re-run on the primary; undefined when none is usable. */
  pick(): Queryable | undefined;
  status(): ReadStatus;
  /** Checks every replica now (also done every checkIntervalMs). */
  check(): Promise<void>;
  close(): Promise<void>;
}

/** The first word of a state: a change of it is worth a log line, a new lag figure is not. */
const kindOf = (state: string) => /^[a-z ]+/.exec(state)?.[0] ?? state;

/**
 * How far behind the primary a replica is, from the primary's WAL positions
 * sampled at each check: the age of the oldest sample the replica has not
 * replayed yet. An idle primary writes nothing, so a replica that has
 * replayed everything is 0 s behind however old its last transaction is
 * (pg_last_xact_replay_timestamp() would say otherwise).
 */
export function lagSeconds(samples: readonly PositionSample[], replayed: bigint, now: number): number {
  const oldestMissing = samples.find((sample) => sample.lsn > replayed);
  return oldestMissing ? Math.max(0, (now - oldestMissing.at) / 1000) : 0;
}

/**
 * How often replicas are checked. A replica that fails or falls behind is
 * dropped within a second (reads go to the primary meanwhile, so none is
 * lost); a check costs one tiny query on the primary and one per replica,
 * nothing beside the requests they serve.
 */
const defaultCheckIntervalMs = 1000;

/**
 * The read replicas of one primary, each with its own pool. A timer checks
 * them every checkIntervalMs: reachable, still in recovery, and at most
 * maxLagSeconds behind the primary; reads go only to those that pass. A read
 * that fails on a replica because of the replica marks it unusable at once
 * and is run again on the primary, so a replica going away costs no request.
 */
export function openReplicaSet(primary: Queryable, options: ReplicaOptions, settings: PoolSettings): ReplicaSet {
  const statements = statementSettingsOf(settings);
  const checkIntervalMs = options.checkIntervalMs ?? defaultCheckIntervalMs;
  const replicas: Replica[] = options.urls.map((url) => {
    const pool = createPool(url, settings);
    return {
      label: describeUrl(url),
      pool,
      queryable: queryableOf(pool, statements),
      usable: false,
      state: { replica: describeUrl(url), state: 'not checked yet' },
    };
  });
  const samples: PositionSample[] = [];
  // Long enough to tell any lag up to twice the bound.
  const sampleWindowMs = options.maxLagSeconds * 2000 + checkIntervalMs * 2;
  let next = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const readsFrom = (): ReadStatus['reads'] => (replicas.some((replica) => replica.usable) ? 'replicas' : 'primary');

  function update(replica: Replica, usable: boolean, state: ReplicaState): void {
    if (closed) return;
    const changed = kindOf(state.state) !== kindOf(replica.state.state);
    replica.usable = usable;
    replica.state = state;
    if (changed) options.onChange?.(state, readsFrom());
  }

  async function checkOne(replica: Replica, now: number): Promise<void> {
    const base = { replica: replica.label };
    try {
      const replay = await replayState(replica.queryable);
      if (!replay.inRecovery || replay.replayed === undefined) {
        update(replica, false, { ...base, state: 'not in recovery: not a replica (or promoted), not read from' });
        return;
      }
      if (samples.length === 0) {
        // The primary's position is unknown (it does not answer): the replica
        // is the best copy there is.
        update(replica, true, { ...base, state: 'streaming (primary position unknown)' });
        return;
      }
      const lag = Math.round(lagSeconds(samples, replay.replayed, now) * 1000) / 1000;
      if (lag > options.maxLagSeconds) {
        update(replica, false, {
          ...base,
          state: `lagging: ${lag.toFixed(1)} s behind the primary, more than ${options.maxLagSeconds} s allowed`,
          lagSeconds: lag,
        });
        return;
      }
      update(replica, true, { ...base, state: 'streaming', lagSeconds: lag });
    } catch (error) {
      update(replica, false, { ...base, state: `unreachable: ${describeError(error)}` });
    }
  }

  async function check(): Promise<void> {
    const now = Date.now();
    try {
      samples.push({ at: now, lsn: await walPosition(primary) });
    } catch {
      // The primary's own failures show in /readyz and in requests.
    }
    while (samples.length > 1 && (samples[0]?.at ?? now) < now - sampleWindowMs) samples.shift();
    await Promise.all(replicas.map((replica) => checkOne(replica, now)));
  }

  function schedule(): void {
    if (closed) return;
    timer = setTimeout(() => {
      void check().finally(schedule);
    }, checkIntervalMs);
    timer.unref();
  }
  void check().finally(schedule);

  function withFallback(replica: Replica): Queryable {
    async function run<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
      try {
        return await work(replica.queryable);
      } catch (error) {
        if (unavailabilityReason(error) === undefined) throw error;
        update(replica, false, { replica: replica.label, state: `unreachable: ${describeError(error)}` });
        return work(primary);
      }
    }
    return {
      query: <Row>(statement: Statement, values?: readonly unknown[]): Promise<QueryResult<Row>> =>
        run((db) => db.query<Row>(statement, values)),
      execScript: (sql: string) => run((db) => db.execScript(sql)),
    };
  }

  return {
    pick() {
      for (let tried = 0; tried < replicas.length; tried += 1) {
        const replica = replicas[next % replicas.length];
        next = (next + 1) % replicas.length;
        if (replica?.usable) return withFallback(replica);
      }
      return undefined;
    },
    status: () => ({ reads: readsFrom(), replicas: replicas.map((replica) => replica.state) }),
    check,
    async close() {
      closed = true;
      clearTimeout(timer);
      await Promise.all(replicas.map((replica) => replica.pool.end()));
    },
  };
}

function describeError(error: unknown): string {
  const reason = unavailabilityReason(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const message = cause instanceof Error ? cause.message : String(cause);
  return reason && reason !== message ? `${reason} (${message})` : message;
}
