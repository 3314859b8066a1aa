import { startServer as startWithEnv, type RunningServer } from '../../src/process/startServer.js';
import { testServerEnv } from './processes.js';

export type { RunningServer };

/** src/process/startServer.ts's start with testServerEnv under the test's env (which may override it). */
export const startServer: typeof startWithEnv = (env, out, options) =>
  startWithEnv({ ...testServerEnv, ...(env ?? process.env) }, out, options);
