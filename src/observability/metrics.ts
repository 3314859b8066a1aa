import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { batchedObservations } from './batchedObservations.js';
import type { PoolStatus } from '../db/index.js';

/** pets_ready's help, the same in a lone server and a cluster's primary (clusterMetrics.ts). */
export const readyHelp = 'Whether /readyz answers 200 (1) or 503 (0); in a cluster, 1 when a worker is ready.';

/** Why a request was not authenticated (the label of the authentication failures counter). */
export const authFailureReasons = ['missing', 'malformed', 'invalid', 'duplicate', 'expired', 'checksum'] as const;
export type AuthFailureReason = (typeof authFailureReasons)[number];

/**
 * The 5xx the error handler answers, as (status, code): a bug (500) and
 * every refusal or outage (503). Their series exist from the start.
 */
const serverErrorKinds = [
  { status_code: '500', code: 'internal_error' },
  { status_code: '503', code: 'service_unavailable' },
] as const;

/** What the request-duration histogram records for one (operation, method, status). */
export interface DurationSeries {
  observe(seconds: number): void;
}

/**
 * The service's metrics, as calls the rest of the code makes. Every method
 * is a plain function (no `this`), so it can be handed on alone, e.g.
 * `deps.metrics.idempotentReplay` to a handler.
 */
export interface ServiceMetrics {
  /** The registry to scrape; undefined for the no-op metrics. */
  readonly registry: Registry | undefined;
  /** The histogram series of one label set; callers keep it instead of asking per request. */
  durationSeries: (operation: string, method: string, statusCode: number) => DurationSeries;
  /**
   * Makes the series of one label set exist at 0 before its first request, so that the first
   * failures of an operation count in rate() (a series that appears at 5 hides its first 5).
   */
  declareDurations: (operation: string, method: string, statusCode: number) => void;
  rateLimited: () => void;
  /** A client closed or reset its connection in the middle of a request: nothing could be answered. */
  requestAbandoned: () => void;
  authenticationFailed: (reason: AuthFailureReason) => void;
  /** A request of this operation (its operationId) was answered with the stored answer of its Idempotency-Key. */
  idempotentReplay: (operation: string) => void;
  /** Makes an operation's replay series exist at 0 (see declareDurations). */
  declareReplays: (operation: string) => void;
  serverError: (statusCode: number, code: string) => void;
  loadShed: (reason: string) => void;
  /** Makes a shedding reason's series exist at 0 (see declareDurations). */
  declareLoadShed: (reason: string) => void;
  /** A database transaction or read was tried again through a short outage, and how that ended. */
  databaseRideThrough: (outcome: 'succeeded' | 'gave up') => void;
  /** Reads the pool at scrape time (nothing per request). */
  watchPool: (stats: () => PoolStatus | undefined) => void;
  /** Asks whether the service is ready at scrape time. */
  watchReadiness: (isReady: () => Promise<boolean>) => void;
  /** Asks whether a planned drain is under way, at scrape time. */
  watchDraining: (isDraining: () => boolean) => void;
  /** Asks whether the process sheds API requests now (over its load limit), at scrape time. */
  watchShedding: (isShedding: () => boolean) => void;
}

// Requests here take about a millisecond; the upper buckets catch a slow database.
// A latency objective's threshold (x-slo in openapi.yaml) must be one of them.
export const durationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const ignore = (): void => undefined;
const noSeries: DurationSeries = { observe: ignore };

/** Metrics that record nothing: the app without a metrics listener. */
export const noMetrics: ServiceMetrics = {
  registry: undefined,
  durationSeries: () => noSeries,
  declareDurations: ignore,
  rateLimited: ignore,
  requestAbandoned: ignore,
  authenticationFailed: ignore,
  idempotentReplay: ignore,
  declareReplays: ignore,
  serverError: ignore,
  loadShed: ignore,
  declareLoadShed: ignore,
  databaseRideThrough: ignore,
  watchPool: ignore,
  watchReadiness: ignore,
  watchDraining: ignore,
  watchShedding: ignore,
};

/** A registry of its own per app (tests build many), with the process's default metrics. */
export function createMetrics(): ServiceMetrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  const pendingDurations = batchedObservations();
  const duration = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Time from receiving a request to sending its response, by operationId (unknown for unmatched routes), method and status code.',
    labelNames: ['operation', 'method', 'status_code'] as const,
    buckets: durationBuckets,
    registers,
    // Before every scrape: the observations still waiting in the batch.
    collect() {
      pendingDurations.flush();
    },
  });
  const rateLimited = new Counter({
    name: 'pets_rate_limit_rejections_total',
    help: 'Requests answered 429 because their API key or address exceeded the rate limit.',
    registers,
  });
  const abandoned = new Counter({
    name: 'pets_abandoned_requests_total',
    help:
      'Requests whose client closed or reset the connection before all of their head or body had arrived: ' +
      'nothing was answered, and they are not in http_server_request_duration_seconds.',
    registers,
  });
  const authFailures = new Counter({
    name: 'pets_authentication_failures_total',
    help: 'Requests refused for their credentials, by reason (missing, malformed, invalid, duplicate, expired, checksum).',
    labelNames: ['reason'] as const,
    registers,
  });
  const replays = new Counter({
    name: 'pets_idempotent_replays_total',
    help: 'Requests answered with the stored response of an earlier request with the same Idempotency-Key, by operationId.',
    labelNames: ['operation'] as const,
    registers,
  });
  const serverErrors = new Counter({
    name: 'pets_server_errors_total',
    help: "API responses with a 5xx status, by status code and Error object code (a readiness probe's 503 aside: pets_ready).",
    labelNames: ['status_code', 'code'] as const,
    registers,
  });
  const shed = new Counter({
    name: 'pets_load_shed_requests_total',
    help: 'API requests answered 503 by load shedding, by the limit passed (reason; docs/operations.md, Load shedding).',
    labelNames: ['reason'] as const,
    registers,
  });

  const rideThroughs = new Counter({
    name: 'pets_db_ride_throughs_total',
    help:
      'Database transactions and reads tried again on a fresh connection after an outage that left them ' +
      'undone (a switchover), by outcome: succeeded, or gave up (answered 503).',
    labelNames: ['outcome'] as const,
    registers,
  });

  // Every label value the code can emit exists at 0 from the start: rate() and increase() miss a series' first value.
  for (const reason of authFailureReasons) authFailures.labels({ reason }).inc(0);
  for (const kind of serverErrorKinds) serverErrors.labels(kind).inc(0);
  for (const outcome of ['succeeded', 'gave_up']) rideThroughs.labels({ outcome }).inc(0);

  let poolStatus: () => PoolStatus | undefined = () => undefined;
  const poolGauge = (name: string, help: string, read: (stats: PoolStatus) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const stats = poolStatus();
        this.set(stats ? read(stats) : 0);
      },
    });
  poolGauge(
    'pets_db_pool_connections',
    'Open PostgreSQL connections in the pool, busy or idle (0 on the embedded database).',
    (s) => s.total,
  );
  poolGauge('pets_db_pool_idle_connections', 'Idle PostgreSQL connections in the pool.', (s) => s.idle);
  poolGauge(
    'pets_db_pool_waiting_requests',
    'Queries waiting for a PostgreSQL connection from the pool.',
    (s) => s.waiting,
  );
  poolGauge('pets_db_pool_max_connections', 'The most connections the pool opens (DATABASE_POOL_SIZE).', (s) => s.max);

  let isReady: () => Promise<boolean> = () => Promise.resolve(true);
  new Gauge({
    name: 'pets_ready',
    help: readyHelp,
    registers,
    async collect() {
      this.set((await isReady().catch(() => false)) ? 1 : 0);
    },
  });

  let isDraining: () => boolean = () => false;
  new Gauge({
    name: 'pets_draining',
    help:
      'Whether a planned drain is under way (1): /readyz answers 503 on purpose, so PetsNotReady stays quiet; ' +
      'summed over the workers of a cluster.',
    registers,
    collect() {
      this.set(isDraining() ? 1 : 0);
    },
  });

  let isShedding: () => boolean = () => false;
  new Gauge({
    name: 'pets_load_shedding',
    help:
      'Whether the process sheds API requests now (1): /readyz answers 503 for it, so PetsNotReady leaves it to ' +
      'PetsLoadShedding; summed over the workers of a cluster.',
    registers,
    collect() {
      this.set(isShedding() ? 1 : 0);
    },
  });

  return {
    registry,
    durationSeries: (operation, method, statusCode) => {
      const series = duration.labels({ operation, method, status_code: String(statusCode) });
      return {
        observe: (seconds) => {
          pendingDurations.record(series, seconds);
        },
      };
    },
    declareDurations: (operation, method, statusCode) => {
      duration.zero({ operation, method, status_code: String(statusCode) });
    },
    rateLimited: () => {
      rateLimited.inc();
    },
    requestAbandoned: () => {
      abandoned.inc();
    },
    authenticationFailed: (reason) => {
      authFailures.labels({ reason }).inc();
    },
    idempotentReplay: (operation) => {
      replays.labels({ operation }).inc();
    },
    declareReplays: (operation) => {
      replays.labels({ operation }).inc(0);
    },
    serverError: (statusCode, code) => {
      serverErrors.labels({ status_code: String(statusCode), code }).inc();
    },
    loadShed: (reason) => {
      shed.labels({ reason }).inc();
    },
    declareLoadShed: (reason) => {
      shed.labels({ reason }).inc(0);
    },
    databaseRideThrough: (outcome) => {
      rideThroughs.labels({ outcome: outcome === 'succeeded' ? 'succeeded' : 'gave_up' }).inc();
    },
    watchPool: (stats) => {
      poolStatus = stats;
    },
    watchReadiness: (check) => {
      isReady = check;
    },
    watchDraining: (check) => {
      isDraining = check;
    },
    watchShedding: (check) => {
      isShedding = check;
    },
  };
}
