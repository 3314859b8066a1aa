import { request } from 'node:http';
import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { startAppWithoutDatabase } from '../helpers/app.js';

t.test('TRUST_PROXY takes the proxies by address; what would believe anyone is refused at start', async (t) => {
  for (const [value, message] of [
    ['1', /TRUST_PROXY=1 looks like a hop count.*whoever connects.*addresses or CIDRs instead \(e\.g\. TRUST_PROXY=10/],
    ['2', /TRUST_PROXY=2 looks like a hop count/],
    ['true', /TRUST_PROXY=true would let any client choose its address.*addresses or CIDRs instead/],
    ['0.0.0.0/0', /'0\.0\.0\.0\/0' would trust every address/],
    ['10.0.0.1, ::/0', /'::\/0' would trust every address/],
    ['10.0.0.0/33', /'10\.0\.0\.0\/33' has a prefix length outside 0-32/],
    ['fd00::/129', /outside 0-128/],
    ['10.0.0.1,abc', /'abc' is not an IPv4 or IPv6 address or CIDR/],
    ['010.0.0.1', /'010\.0\.0\.1' is not an IPv4 or IPv6 address/],
  ] as const) {
    t.throws(() => loadConfig({ TRUST_PROXY: value }), ConfigError, value);
    t.throws(() => loadConfig({ TRUST_PROXY: value }), { message }, value);
  }
  for (const value of ['false', '10.0.0.5', '10.0.0.0/8, 192.168.1.5', 'fd00::/8,::1', '127.0.0.1/32']) {
    t.equal(loadConfig({ TRUST_PROXY: value }).TRUST_PROXY, value, `${value} is accepted`);
  }
});

/** GET /v1/pets without a key from the given loopback address: 401 while the address has quota, then 429. */
function statusFrom(port: number, localAddress: string, forwardedFor: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        localAddress,
        path: '/v1/pets',
        headers: { 'x-forwarded-for': forwardedFor },
        agent: false,
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

t.test('over real connections: only the trusted balancer names the client', async (t) => {
  // The balancer is 127.0.0.1; a client reaching the instance directly connects from 127.0.0.2.
  const app = await startAppWithoutDatabase(t, { RATE_LIMIT_MAX: 2, TRUST_PROXY: '127.0.0.1/32' });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };

  const direct: number[] = [];
  for (let i = 0; i < 3; i += 1) direct.push(await statusFrom(port, '127.0.0.2', `198.51.100.${i}`));
  t.same(direct, [401, 401, 429], "a direct client's X-Forwarded-For does not change its bucket");

  const balanced: number[] = [];
  for (let i = 0; i < 3; i += 1) balanced.push(await statusFrom(port, '127.0.0.1', `198.51.100.${10 + i}`));
  t.same(balanced, [401, 401, 401], "the balancer's X-Forwarded-For gives each client its own bucket");
  const again = [
    await statusFrom(port, '127.0.0.1', '198.51.100.10'),
    await statusFrom(port, '127.0.0.1', '198.51.100.10'),
  ];
  t.same(again, [401, 429], 'and counts each client on its own quota');
});

t.test('the forwarded address is validated and put in one form', async (t) => {
  const proxy = '10.0.0.1';
  const app = await startAppWithoutDatabase(t, { RATE_LIMIT_MAX: 2, TRUST_PROXY: proxy });
  const statusesFor = async (forwardedFor: string[]) => {
    const statuses: number[] = [];
    for (const value of forwardedFor) {
      const response = await app.inject({
        method: 'GET',
        url: '/v1/pets',
        remoteAddress: proxy,
        headers: { 'x-forwarded-for': value },
      });
      statuses.push(response.statusCode);
    }
    return statuses;
  };

  t.same(
    await statusesFor(['192.0.2.1:1234', '192.0.2.1:80', '::ffff:192.0.2.1']),
    [401, 401, 429],
    'an IPv4 address with a port or IPv4-mapped is that address',
  );
  t.same(
    await statusesFor(['[2001:DB8:0::7]:443', '2001:db8:0:0:0:0:0:7', '[2001:db8::7]']),
    [401, 401, 429],
    'IPv6 spellings, bracketed or with a port, are one address',
  );
  t.same(
    await statusesFor(['01.1.1.1', 'not-an-address', 'fe80::1%eth0']),
    [401, 401, 429],
    'what is not an address falls back to the proxy that sent it: no fresh bucket per string',
  );
  t.same(await statusesFor(['any string']), [429], 'the proxy address is that shared bucket');
  t.same(await statusesFor(['192.0.2.99']), [401], 'a valid address still has a bucket of its own');
});
