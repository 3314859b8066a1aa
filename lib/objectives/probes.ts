import { dereference, type JsonObject } from '../openapi/dereference.js';
import { basePathOf } from '../../src/openapi/basePath.js';
import type { OpenApiDocument, OperationObject, ParameterObject } from '../../src/openapi/types.js';

/**
 * Synthetic requests for the operations too quiet for their objectives (the
 * Google SRE workbook, "Alerting on SLOs", low-traffic services: generate
 * artificial traffic). The blackbox exporter sends one a minute to each
 * instance, for every read it can send without choosing anything: a GET
 * with no path parameter and no required parameter (listPets). A GET that
 * needs an id would need a resource the prober made or found, and a write
 * changes state: neither is probed; their low traffic is the low-traffic
 * page's (rules.ts, failing and failingRarely). The probe counts as the
 * operation's traffic too, so its burn-rate alerts always have answers.
 */

/** One probed read: the module of deploy/blackbox/blackbox.yml and the path it requests. */
export interface ProbedRead {
  operation: string;
  /** The request's path, with the base path: /v1/pets. */
  path: string;
  /** The status it must answer: the operation's first declared 2xx. */
  status: number;
  /** The scopes its security requirement names (the prober's key needs them). */
  scopes: string[];
}

/** Where the blackbox exporter reads the prober's API key (docs/operations.md says how to make it). */
export const probeKeyFile = '/etc/prometheus/pet-store-probe.key';

/** How often each read is probed per instance: often enough that the alert's hold sees several probes. */
export const readProbeInterval = '1m';

const requiredParameter = (parameter: ParameterObject) => parameter.in === 'path' || parameter.required === true;

/** The reads a prober can send as they are, in the spec's order. */
export function probedReadsOf(spec: OpenApiDocument): ProbedRead[] {
  const document = dereference(spec as unknown as JsonObject) as unknown as OpenApiDocument;
  const basePath = basePathOf(document);
  return Object.entries(document.paths).flatMap(([path, item]) => {
    const operation = item['get'] as OperationObject | undefined;
    if (!operation || path.includes('{')) return [];
    const parameters = [
      ...((item as { parameters?: ParameterObject[] }).parameters ?? []),
      ...((operation.parameters ?? []) as ParameterObject[]),
    ];
    if (parameters.some(requiredParameter)) return [];
    const status = Object.keys(operation.responses ?? {})
      .filter((code) => /^2\d\d$/.test(code))
      .map(Number)
      .sort((a, b) => a - b)[0];
    if (status === undefined) return [];
    const security = operation.security ?? document.security ?? [];
    const scopes = [...new Set(security.flatMap((requirement) => Object.values(requirement).flat()))];
    return [{ operation: operation.operationId, path: `${basePath}${path}`, status, scopes }];
  });
}

const httpModule = { prober: 'http', timeout: '5s' } as const;
const httpDefaults = { method: 'GET', follow_redirects: false, preferred_ip_protocol: 'ip4' } as const;

/**
 * The blackbox exporter's modules (deploy/blackbox/blackbox.yml): `healthz`,
 * the process's liveness without a key, and one per probed read, named
 * after its operation, with the prober's key and the status the spec
 * declares. A timeout under the scrape interval: the answers take
 * milliseconds.
 */
export function blackboxConfig(reads: ProbedRead[]) {
  return {
    modules: {
      healthz: {
        ...httpModule,
        http: {
          ...httpDefaults,
          valid_status_codes: [200],
          fail_if_body_not_matches_regexp: ['"status":\\s*"ok"'],
        },
      },
      ...Object.fromEntries(
        reads.map((read) => [
          read.operation,
          {
            ...httpModule,
            http: {
              ...httpDefaults,
              valid_status_codes: [read.status],
              authorization: { type: 'Bearer', credentials_file: probeKeyFile },
            },
          },
        ]),
      ),
    },
  };
}

/** docs/operations.md's commands that give the prober its key: a key with the probed reads' scopes alone. */
export function probeKeyCommands(reads: ProbedRead[]): string {
  const scopes = [...new Set(reads.flatMap((read) => read.scopes))];
  return [
    '```sh',
    '# Where npm run apikey reaches the database; the key alone, on the last line, into a file only its owner reads:',
    `(umask 077 && npm run --silent apikey -- create blackbox-prober --scopes ${scopes.join(',')} | tail -n 1 > pet-store-probe.key)`,
    "# On the exporter's host, readable by the exporter's user (Debian: prometheus) alone:",
    `install -m 0400 -o prometheus pet-store-probe.key ${probeKeyFile} && rm pet-store-probe.key`,
    '```',
  ].join('\n');
}
