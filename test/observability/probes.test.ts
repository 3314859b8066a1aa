import t from 'tap';
import { blackboxConfig, probedReadsOf, probeKeyCommands, probeKeyFile } from '../../lib/objectives/probes.js';
import type { OpenApiDocument } from '../../src/openapi/types.js';

// The reads the blackbox exporter probes come from the spec: every GET it can send as it is, and nothing else.

const get = (operationId: string, extra: object = {}) => ({
  get: { operationId, responses: { '200': {}, '304': {} }, ...extra },
});
const spec = {
  openapi: '3.1.0',
  info: { title: 'pets', version: '1' },
  servers: [{ url: 'https://api.example.com/v1' }, { url: 'https://staging.example.com/v1/' }],
  security: [{ bearerAuth: [] }],
  paths: {
    '/pets': {
      ...get('listPets', {
        security: [{ bearerAuth: ['pets:read'] }],
        parameters: [{ name: 'limit', in: 'query' }, { $ref: '#/components/parameters/Etag' }],
      }),
      post: { operationId: 'createPet', responses: { '201': {} } },
    },
    '/pets/{petId}': get('getPet'),
    '/search': get('search', { parameters: [{ name: 'q', in: 'query', required: true }] }),
    '/owners': { parameters: [{ $ref: '#/components/parameters/Tenant' }], ...get('listOwners') },
    '/made': { get: { operationId: 'makeThing', responses: { '202': {}, '201': {} } } },
  },
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
    parameters: {
      Etag: { name: 'If-None-Match', in: 'header' },
      Tenant: { name: 'X-Tenant', in: 'header', required: true },
    },
  },
} as unknown as OpenApiDocument;

t.test(
  'probed: GETs without a path or required parameter, under the base path, expecting their first 2xx',
  async (t) => {
    t.same(probedReadsOf(spec), [
      { operation: 'listPets', path: '/v1/pets', status: 200, scopes: ['pets:read'] },
      { operation: 'makeThing', path: '/v1/made', status: 201, scopes: [] },
    ]);
  },
);

t.test('a module per probed read, with the key file and its status; the key gets their scopes alone', async (t) => {
  const reads = probedReadsOf(spec);
  const { modules } = blackboxConfig(reads);
  t.same(Object.keys(modules), ['healthz', 'listPets', 'makeThing']);
  t.same(modules['listPets' as 'healthz'].http, {
    method: 'GET',
    follow_redirects: false,
    preferred_ip_protocol: 'ip4',
    valid_status_codes: [200],
    authorization: { type: 'Bearer', credentials_file: probeKeyFile },
  });
  t.notOk('authorization' in modules.healthz.http, '/healthz needs no key');
  t.match(probeKeyCommands(reads), /--scopes pets:read \|/);
});
