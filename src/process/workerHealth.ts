import cluster, { type Worker } from 'node:cluster';
import type { WorkerState } from '../observability/clusterMetrics.js';

/**
 * The cluster primary's health check of its workers, over the IPC channel:
 * the primary asks each worker every healthCheckIntervalMs; the worker's
 * event loop answers. A worker stopped (SIGSTOP), stuck in a synchronous
 * loop or swapped out answers nothing: after unresponsiveAfterMs without an
 * answer the primary counts it unresponsive (scrapes stop waiting for it, a
 * gauge shows it), and after replaceAfterMs it kills it (SIGKILL: a stopped
 * process acts on no other signal) so that cluster.ts forks another.
 *
 * Connections never wait on such a worker: cluster.ts shares the listening
 * socket (SCHED_NONE), and only a worker whose event loop turns calls
 * accept(). What a stopped worker holds already (its keep-alive connections,
 * requests in flight) is cut when it is killed.
 *
 * A worker starts answering (answerHealthChecks) once its metrics can be
 * asked for; before that it is starting, and not checked: a start-up has its
 * own bound (DATABASE_STARTUP_TIMEOUT_MS), and a starting worker does not
 * listen, so it holds no connection.
 */

/** Often enough that an unresponsive worker is seen within a few seconds; an IPC message costs microseconds. */
const healthCheckIntervalMs = 1000;
/**
 * No answer for this long: unresponsive. A loaded worker's event loop turns
 * within tens of milliseconds (load shedding starts well before), a full GC
 * ends within a second; three missed checks are none of those.
 */
export const unresponsiveAfterMs = 3000;
/**
 * No answer for this long: killed and replaced. Longer than unresponsive so
 * that a worker that was only paused (a debugger, a long GC on a swapping
 * host) may come back on its own and keep its connections; short enough
 * that the keep-alive connections it holds are cut before most clients'
 * own timeouts.
 */
export const replaceAfterMs = 10_000;

const ask = 'pets:health-check';
const answer = 'pets:health-answer';

interface Message {
  type?: unknown;
}

/** In a worker: answer the primary's health checks from now on (and say so at once). */
export function answerHealthChecks(): void {
  if (!cluster.isWorker || !process.send) return;
  const reply = () => process.send?.({ type: answer }, undefined, {}, () => undefined);
  process.on('message', (message: Message) => {
    if (message.type === ask) reply();
  });
  reply();
}

export interface WorkerHealth {
  stateOf(worker: number): WorkerState;
  /** Stops the checks (the primary is stopping). */
  stop(): void;
}

/** In the primary, before forking: checks every worker, and kills one that stays unresponsive. */
export function watchWorkers(log: (message: string) => void): WorkerHealth {
  const lastAnswer = new Map<number, number>();
  const unresponsive = new Set<number>();
  const killed = new Set<number>();

  cluster.on('message', (worker: Worker, message: Message) => {
    if (message.type !== answer) return;
    lastAnswer.set(worker.id, performance.now());
    if (unresponsive.delete(worker.id)) log(`worker ${worker.process.pid} answers again`);
  });
  cluster.on('exit', (worker: Worker) => {
    lastAnswer.delete(worker.id);
    unresponsive.delete(worker.id);
    killed.delete(worker.id);
  });

  const check = () => {
    const now = performance.now();
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (!worker?.isConnected()) continue;
      worker.send({ type: ask }, () => undefined);
      const last = lastAnswer.get(worker.id);
      if (last === undefined) continue;
      const silentMs = now - last;
      if (silentMs >= unresponsiveAfterMs && !unresponsive.has(worker.id)) {
        unresponsive.add(worker.id);
        log(`worker ${worker.process.pid} has not answered for ${Math.round(silentMs)} ms: unresponsive`);
      }
      if (silentMs >= replaceAfterMs && !killed.has(worker.id)) {
        killed.add(worker.id);
        log(`worker ${worker.process.pid} has not answered for ${Math.round(silentMs)} ms: killing it`);
        worker.process.kill('SIGKILL');
      }
    }
  };
  const timer = setInterval(check, healthCheckIntervalMs);

  return {
    stateOf(worker) {
      if (unresponsive.has(worker)) return 'unresponsive';
      return lastAnswer.has(worker) ? 'responsive' : 'starting';
    },
    stop() {
      clearInterval(timer);
    },
  };
}
