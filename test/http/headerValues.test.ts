import t from 'tap';
import { assertHeaderValuesWritable } from '../../src/http/operations/headerValues.js';

t.test("a handler's header with CR or LF is refused in the handler's call, naming the header only", (t) => {
  t.throws(
    () => {
      assertHeaderValuesWritable({ location: '/v1/pets/1\r\nSet-Cookie: x=1' });
    },
    {
      message: /header location .*control character/,
    },
  );
  t.throws(() => {
    assertHeaderValuesWritable({ location: '/v1/pets/1\n' });
  });
  const refused = t.throws(() => {
    assertHeaderValuesWritable({ location: 'secret\r\n' });
  }) as Error;
  t.notMatch(refused.message, /secret/, "the client's text stays out of the message");
  t.doesNotThrow(() => {
    assertHeaderValuesWritable({ location: '/v1/pets/1', 'idempotent-replayed': 'true' });
  });
  t.end();
});
