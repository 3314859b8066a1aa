import { tmpdir } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import { runApiKeyCommand } from '../cli/apikey.js';
import { serveCommands } from '../control/channel.js';
import {
  controlHome,
  prepareControlSocket,
  removeControlSocket,
  withdrawControlSocket,
  type ControlSocketPlace,
} from '../control/socketPath.js';
import type { Database } from '../db/index.js';

export interface ControlSocket {
  path: string;
  close(): Promise<void>;
}

/**
 * On the embedded database, which one process holds, `npm run apikey`
 * reaches the running server through a Unix socket only its owner can open
 * (0600, in a 0700 folder): the server runs the command on its own database
 * and streams back its output and exit code. Nothing listens on a network
 * port. Undefined, with a warning, when the socket cannot be made (the CLI
 * then asks for the server to be stopped, as without it).
 */
export async function openControlSocket(
  db: Database,
  dataDir: string,
  env: NodeJS.ProcessEnv,
  log: FastifyBaseLogger,
): Promise<ControlSocket | undefined> {
  let place: ControlSocketPlace | undefined;
  try {
    const { place: prepared, secret } = prepareControlSocket(dataDir, env['XDG_RUNTIME_DIR'] || tmpdir());
    place = prepared;
    const server = await serveCommands(
      prepared.socket,
      async (argv, streams) => {
        const code = await runApiKeyCommand(db, argv, streams);
        log.info({ command: argv[0], exitCode: code }, 'npm run apikey ran over the control socket');
        return code;
      },
      secret,
      (error) => {
        log.warn({ err: error }, 'control socket error');
      },
    );
    log.info(`npm run apikey reaches this server over ${prepared.socket}`);
    return {
      path: prepared.socket,
      async close() {
        await server.close();
        removeControlSocket(prepared);
      },
    };
  } catch (error) {
    // No secret left behind: the CLI sends nothing to a socket no server of ours answers.
    withdrawControlSocket(dataDir);
    log.warn(
      { err: error },
      `cannot open the control socket ${place?.socket ?? `for ${controlHome(dataDir)}`}: ` +
        'npm run apikey needs this server stopped',
    );
    return undefined;
  }
}
