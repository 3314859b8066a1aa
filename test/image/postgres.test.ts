import t from 'tap';
import { createScratchPostgres, postgresUnavailableReason } from '../helpers/databases.js';
import {
  checkConformance,
  createVolume,
  generousRateLimit,
  imageRef,
  runOnce,
  runVerify,
  startContainer,
  waitReady,
} from './harness.js';

/**
 * The image with DATABASE_URL: a database of its own on the machine's
 * PostgreSQL, the image's own `node dist/cli/migrate.js` run first as the
 * release step and `node dist/cli/apikey.js create` for a key, then the
 * service, all with a read-only root.
 *
 * The container reaches the host's loopback (where PostgreSQL listens) through
 * slirp4netns with allow_host_loopback, as 10.0.2.2; its ports are published
 * on 127.0.0.1 as with the default network.
 */

const network = 'slirp4netns:allow_host_loopback=true';
const hostLoopbackFromContainer = '10.0.2.2';

t.ok(imageRef, 'PET_STORE_IMAGE names the image under test (npm run test:system -- image sets it)');

t.test('the image on PostgreSQL, migrated by its own release step', async (t) => {
  const unavailable = await postgresUnavailableReason();
  if (unavailable) {
    t.fail(unavailable);
    return;
  }
  const database = await createScratchPostgres();
  t.teardown(() => database.drop());
  const url = new URL(database.url);
  url.hostname = hostLoopbackFromContainer;
  const env = { DATABASE_URL: url.toString(), ...generousRateLimit };
  const volume = await createVolume(t);
  const options = { volume, network, env, readOnly: true };

  const early = await runOnce({ ...options, command: ['node', 'dist/server.js'] });
  t.not(early.status, 0, 'before the migration the service refuses to start', { output: early.stdout + early.stderr });
  t.match(early.stdout + early.stderr, /migrat/i, 'and says the database must be migrated');

  const migrated = await runOnce({ ...options, command: ['node', 'dist/cli/migrate.js'] });
  t.equal(migrated.status, 0, 'node dist/cli/migrate.js exits 0', { output: migrated.stdout + migrated.stderr });

  const created = await runOnce({ ...options, command: ['node', 'dist/cli/apikey.js', 'create', 'image-suite'] });
  t.equal(created.status, 0, 'node dist/cli/apikey.js create exits 0', { output: created.stdout + created.stderr });
  const key = /store it safely:\n(\S{20,})\n/.exec(created.stdout)?.[1];
  if (!key) {
    t.fail(`no key in the output of apikey create: ${created.stdout}`);
    return;
  }

  const container = await startContainer(t, options);
  await waitReady(container);

  await t.test('generated requests conform to openapi.yaml through the published port', (t) =>
    checkConformance(t, container, key),
  );

  await t.test('npm run verify -- --read-only passes against the container', async (t) => {
    const result = await runVerify(container.baseUrl, key);
    t.equal(result.status, 0, 'exit code 0', { output: (result.stdout + result.stderr).slice(-4000) });
  });
});
