import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { repoRoot } from '../../lib/repoRoot.js';

/** One notification Alertmanager sent: the receiver's path, when, and the alerts it carried. */
export interface Notification {
  path: string;
  at: number;
  status: 'firing' | 'resolved';
  groupLabels: Record<string, string>;
  alerts: Array<{ status: string; labels: Record<string, string> }>;
}

export interface WebhookRecorder {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly notifications: Notification[];
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1 and a free port that keeps every
 * notification Alertmanager posts to it (its webhook payload, version 4),
 * by path: each receiver of a configuration gets a path of its own.
 */
export async function startWebhookRecorder(): Promise<WebhookRecorder> {
  const notifications: Notification[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Omit<Notification, 'path' | 'at'>;
        notifications.push({
          path: request.url ?? '/',
          at: Date.now(),
          status: body.status,
          groupLabels: body.groupLabels,
          alerts: body.alerts.map((alert) => ({ status: alert.status, labels: alert.labels })),
        });
        response.writeHead(200).end();
      } catch {
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    notifications,
    close: () =>
      new Promise((resolve) =>
        server.close(() => {
          resolve();
        }),
      ),
  };
}

/** "pager firing: PetsAvailabilityFastBurn createPet, ..." for a report. */
export function describeNotification(notification: Notification, since: number): string {
  const alerts = notification.alerts
    .map(
      (alert) =>
        `${alert.labels['alertname']}${alert.labels['operation'] ? ` ${alert.labels['operation']}` : ''}` +
        ` (${alert.status})`,
    )
    .join(', ');
  return `+${notification.at - since} ms ${notification.path} ${notification.status} [${JSON.stringify(notification.groupLabels)}]: ${alerts}`;
}

/** The shipped Alertmanager configuration (deploy/alertmanager/alertmanager.yml). */
export const alertmanagerConfigFile = join(repoRoot, 'deploy/alertmanager/alertmanager.yml');

interface AlertmanagerConfig {
  route: Record<string, unknown> & { routes?: Array<Record<string, unknown>> };
  receivers: Array<{ name: string; webhook_configs?: Array<{ url: string }> }>;
}

/**
 * The shipped configuration with each receiver's webhooks sent to the
 * recorder at /<receiver name>; routes, grouping and inhibition as shipped.
 * `timings` (group_wait, group_interval) replace the shipped ones on every
 * route, for a test that cannot wait 30 s per group.
 */
export function shippedAlertmanagerConfig(recorderUrl: string, timings: Record<string, string> = {}): string {
  const config = parse(readFileSync(alertmanagerConfigFile, 'utf8')) as AlertmanagerConfig;
  for (const receiver of config.receivers)
    for (const webhook of receiver.webhook_configs ?? []) webhook.url = `${recorderUrl}/${receiver.name}`;
  for (const route of [config.route, ...(config.route.routes ?? [])])
    for (const [name, value] of Object.entries(timings))
      if (name in route || route === config.route) route[name] = value;
  return stringify(config);
}
