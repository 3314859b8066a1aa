import t from 'tap';
import { rotateKey } from '../../src/auth/provisioning.js';
import { forEachBackend, startTestApp } from '../helpers/app.js';

/**
 * An instance whose clock is off: its own clock (the app's now), not the
 * database's, is skewed, as on a machine whose NTP has stopped.
 */
void forEachBackend(t, async (t, backend) => {
  for (const { skewSeconds, overlapSeconds, oldKey } of [
    { skewSeconds: -30, overlapSeconds: 0, oldKey: 401 },
    { skewSeconds: 90, overlapSeconds: 60, oldKey: 200 },
  ]) {
    await t.test(
      `an instance ${Math.abs(skewSeconds)} s ${skewSeconds < 0 ? 'behind' : 'ahead'}: after rotate --overlap ${overlapSeconds}s the old key gets ${oldKey}`,
      async (t) => {
        const { app, db, key } = await startTestApp(t, backend, {}, { now: () => Date.now() + skewSeconds * 1000 });
        const get = (bearer: string) =>
          app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${bearer}` } });
        t.equal((await get(key)).statusCode, 200, 'the key works before the rotation');
        const rotated = await rotateKey(db, 'test', { overlapSeconds }, (rotation) => rotation);
        if (!rotated) throw new Error('nothing rotated');
        t.equal((await get(rotated.key)).statusCode, 200, 'the new key works');
        t.equal((await get(key)).statusCode, oldKey, 'the overlap ends by the database clock');
      },
    );
  }
});
