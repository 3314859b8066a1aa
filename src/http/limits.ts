/**
 * The HTTP layer's fixed limits. None but the load-shedding threshold is a
 * setting: each value follows from the contract or from the service's own
 * costs, not from where it runs (the comments say why), so an operator has
 * no reason to change it. The threshold depends on what clients will wait
 * and on the machine (LOAD_SHED_EVENT_LOOP_DELAY_MS). Tests pass
 * other values to buildApp (AppDeps.limits) to reach a limit quickly.
 */
export interface HttpLimits {
  bodyLimitBytes: number;
  unreadBody: UnreadBodyLimits;
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  connectionTimeoutMs: number;
  readinessMaxAgeMs: number;
  redisTimeoutMs: number;
  loadShedding: LoadSheddingLimits;
}

export interface LoadSheddingLimits {
  /**
   * Mean event-loop delay past which API requests are shed; 0 turns shedding
   * off. The setting LOAD_SHED_EVENT_LOOP_DELAY_MS (src/config/schema.ts).
   */
  maxEventLoopDelayMs: number;
  sampleIntervalMs: number;
  retryAfterSeconds: number;
}

/**
 * A body the service answers before reading it all (over the limit, or a
 * request refused before its body is parsed) and how the connection ends
 * then (src/http/server/unreadBodies.ts, RFC 9112 9.6).
 */
export interface UnreadBodyLimits {
  /** A body of at most this many bytes still to come is read and thrown away before the answer; the connection stays open. */
  discardBytes: number;
  /** Past discardBytes the answer closes the connection: after it is sent, the socket is still read for this long at most... */
  lingerMs: number;
  /** ...and this many bytes at most, before it is closed. */
  lingerBytes: number;
  /**
   * Across all connections (src/http/server/refusedBytes.ts): bytes of refused
   * bodies read at once at most, refilled at refusedBytesPerSecond, and sockets
   * lingering at once at most; past either, a refused connection closes at once.
   */
  refusedBytesBurst: number;
  refusedBytesPerSecond: number;
  maxLingering: number;
}

/**
 * The largest valid body (createPet: a name of at most 100 code points,
 * each at most 12 bytes as JSON escapes, a category id and a status) is
 * under 1.5 KB; 64 KiB leaves room for any formatting while a client cannot
 * make the service buffer much before it is refused (413).
 */
const bodyLimitBytes = 65536;

const unreadBody: UnreadBodyLimits = {
  // 16 times the body limit. A body somewhat over the limit is a client's
  // mistake (a long name, a padded document), not an attack: reading it to
  // its end costs the service no memory (each chunk is dropped as it comes)
  // and under a second on a 10 Mbit/s link, and keeps a connection the
  // client, or the balancer in front, goes on using. A larger body costs more
  // to read than a new connection costs to open, so it is not waited for.
  // (Go's net/http makes the same choice at 256 KiB.)
  discardBytes: 16 * bodyLimitBytes,
  // After a closing answer the client needs one round trip (300 ms across
  // the world) and a moment to notice the answer and stop sending; 2 s
  // covers that on a busy machine too, while one that never stops holds a
  // socket for 2 s at most.
  lingerMs: 2000,
  // What a client still sending can put on the wire before it notices the
  // answer: 2 s at 32 Mbit/s. Beyond that it is not reading answers at all.
  lingerBytes: 8 * 1024 * 1024,
  // Reading and dropping a refused body costs the event loop about 1 ms per
  // MiB on loopback (npm run bench -- refused-flood: 200 refused 10 MiB
  // uploads, 1.6 GB read, stalled /healthz for over a second). 16 MiB a
  // second is under 2 % of the loop whatever the number of connections; a
  // burst of 16 MiB (two clients lingering to lingerBytes, or sixteen read to
  // discardBytes at once) is a stall of some 16 ms at most. Honest clients
  // rarely send a body over the limit, so they do not meet the budget: paced
  // to the refill, eight clients sending bodies up to lingerBytes all get
  // their 413 (test/topology/drills/oversizeBodies.ts); the same eight unpaced
  // (some 60 MiB/s of refused bytes) are a flood, and some are closed at once.
  refusedBytesBurst: 16 * 1024 * 1024,
  refusedBytesPerSecond: 16 * 1024 * 1024,
  // The bytes are bounded above; this bounds the sockets a silent client
  // holds after its answer (one descriptor and one timer each, for lingerMs).
  // Far more than honest clients refused at the same moment, far below the
  // process's descriptor limit (1,024 by default).
  maxLingering: 64,
};

/**
 * A request is at most 64 KiB of body and Node's 16 KiB of headers: a few
 * seconds on the slowest mobile link. 30 s covers that many times over and
 * still frees a socket a slow-sending client holds (deploy/haproxy.cfg's
 * timeouts match these two).
 */
const requestTimeoutMs = 30_000;
const headersTimeoutMs = 10_000;

/**
 * A socket with no traffic at all for this long, mid-request or with a
 * response its client stopped reading (idle keep-alive connections have
 * KEEP_ALIVE_TIMEOUT_MS instead), belongs to a client that is gone; every
 * answer of this service is a few tens of KB at most.
 */
const connectionTimeoutMs = 120_000;

/**
 * Load balancers probe every few seconds (HAProxy 2 s, Kubernetes 10 s by
 * default): an answer at most 1 s old is fresher than any of their checks,
 * while any number of probers cost at most one database probe per second.
 */
const readinessMaxAgeMs = 1000;

/**
 * Redis answers a counter update in well under a millisecond on a local
 * network. 50 ms is far past that yet small beside the request it guards;
 * after 3 such waits in a row the counting moves into the process until
 * Redis answers again (docs/operations.md).
 */
const redisTimeoutMs = 50;

const loadShedding: Omit<LoadSheddingLimits, 'maxEventLoopDelayMs'> = {
  // One sample a second: a shed decision is at most a second late, and the
  // sampling costs nothing measurable (@fastify/under-pressure's default).
  sampleIntervalMs: 1000,
  // About what a balancer takes to move traffic off an instance whose /readyz
  // answers 503 (HAProxy's defaults: 3 failed checks 2 s apart), so that the
  // retry lands elsewhere or after the burst; short enough that a client
  // does not give up.
  retryAfterSeconds: 5,
};

export const httpLimits: Readonly<Omit<HttpLimits, 'loadShedding'>> & {
  loadShedding: Readonly<Omit<LoadSheddingLimits, 'maxEventLoopDelayMs'>>;
} = {
  bodyLimitBytes,
  unreadBody,
  requestTimeoutMs,
  headersTimeoutMs,
  connectionTimeoutMs,
  readinessMaxAgeMs,
  redisTimeoutMs,
  loadShedding,
};

/** Test only: what AppDeps.limits may replace; maxEventLoopDelayMs is the setting's value unless a test replaces it. */
export type HttpLimitOverrides = Partial<Omit<HttpLimits, 'loadShedding' | 'unreadBody'>> & {
  loadShedding?: Partial<LoadSheddingLimits>;
  unreadBody?: Partial<UnreadBodyLimits>;
};

export function limitsWith(
  overrides: HttpLimitOverrides & { loadShedding: Pick<LoadSheddingLimits, 'maxEventLoopDelayMs'> },
): HttpLimits {
  return {
    ...httpLimits,
    ...overrides,
    loadShedding: { ...httpLimits.loadShedding, ...overrides.loadShedding },
    unreadBody: { ...httpLimits.unreadBody, ...overrides.unreadBody },
  };
}
