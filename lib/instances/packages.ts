import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { alertmanagerBin, amtoolBin } from './alertmanager.js';
import { pgAutoctlBin } from './autoFailover.js';
import { blackboxBin } from './blackbox.js';
import { haproxyBin } from './haproxy.js';
import { pgbouncerBin } from './pgbouncer.js';
import { postgresBin } from './postgres.js';
import { prometheusBin, promtoolBin } from './prometheus.js';
import { redisServerBin } from './redis.js';

/** The Debian packages the topology runs, and how to tell each is there. */
const requirements = [
  {
    debian: 'postgresql-15',
    present: () => existsSync(join(postgresBin, 'postgres')) && existsSync(join(postgresBin, 'pg_basebackup')),
  },
  { debian: 'redis-server', present: () => onPath(redisServerBin) },
  { debian: 'pgbouncer', present: () => onPath(pgbouncerBin) },
  { debian: 'haproxy', present: () => onPath(haproxyBin) },
  // The failover topology: pg_autoctl, and the monitor's extension for PostgreSQL 15.
  { debian: 'pg-auto-failover-cli', present: () => onPath(pgAutoctlBin) },
  {
    debian: 'postgresql-15-auto-failover',
    present: () => existsSync('/usr/share/postgresql/15/extension/pgautofailover.control'),
  },
  // Prometheus scraping the instances with the objectives' rules; promtool checks and tests the rules.
  { debian: 'prometheus', present: () => onPath(prometheusBin) && onPath(promtoolBin) },
  // Alertmanager routing the alerts (amtool checks and tests its configuration); the probe of /healthz.
  { debian: 'prometheus-alertmanager', present: () => onPath(alertmanagerBin) && onPath(amtoolBin) },
  { debian: 'prometheus-blackbox-exporter', present: () => onPath(blackboxBin) },
] as const;

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v "$0"`, command], { stdio: 'ignore' }).status === 0;
}

/** The Debian packages the topology needs (requirements above), or only those named, that are missing. */
export function missingPackages(only?: readonly string[]): string[] {
  return requirements
    .filter((requirement) => only === undefined || only.includes(requirement.debian))
    .filter((requirement) => !requirement.present())
    .map((requirement) => requirement.debian);
}

/**
 * Installs the missing packages (all, or only those named) with apt-get when we are root (saying so on
 * `say`). Returns undefined when everything is there afterwards, else the
 * reason it is not (not root, apt-get failed), for a skip message.
 */
export function ensurePackages(
  say: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  only?: readonly string[],
): string | undefined {
  const missing = missingPackages(only);
  if (missing.length === 0) return undefined;
  if (process.getuid?.() !== 0)
    return `missing Debian packages ${missing.join(', ')}; install them as root: apt-get install -y ${missing.join(' ')}`;
  if (!onPath('apt-get')) return `missing packages ${missing.join(', ')} and no apt-get to install them with`;
  say(`Installing missing Debian packages with apt-get (as root): ${missing.join(', ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update'], { encoding: 'utf8', env, timeout: 300_000 });
  const install =
    update.status === 0
      ? spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], {
          encoding: 'utf8',
          env,
          timeout: 600_000,
        })
      : update;
  const still = missingPackages(only);
  if (still.length === 0) return undefined;
  const output = `${install.stdout ?? ''}\n${install.stderr ?? ''}`.trim().split('\n').slice(-5).join('\n');
  return `could not install ${still.join(', ')} with apt-get (exit ${install.status ?? install.signal}): ${output}`;
}
