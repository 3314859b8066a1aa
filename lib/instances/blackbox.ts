import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { startReadyDaemon, type ReadyDaemon } from './readyDaemon.js';

/**
 * A private blackbox exporter on 127.0.0.1 and a free port with the given
 * configuration file (deploy/blackbox/blackbox.yml): Prometheus asks it to
 * probe a target with GET /probe?module=...&target=.... Stopped by its pid.
 */

/** Debian's prometheus-blackbox-exporter installs it under this name. */
export const blackboxBin = process.env['BLACKBOX_EXPORTER_BIN'] ?? 'prometheus-blackbox-exporter';

export type BlackboxServer = ReadyDaemon;

export async function startBlackboxExporter(options: { configFile: string; parent?: string }): Promise<BlackboxServer> {
  return startReadyDaemon({
    name: 'the blackbox exporter',
    command: blackboxBin,
    prefix: 'blackbox',
    ...(options.parent === undefined ? {} : { parent: options.parent }),
    flags: (folder, listenAddress) => {
      const configFile = join(folder, 'blackbox.yml');
      copyFileSync(options.configFile, configFile);
      return [`--config.file=${configFile}`, `--web.listen-address=${listenAddress}`, '--log.level=warn'];
    },
  });
}
