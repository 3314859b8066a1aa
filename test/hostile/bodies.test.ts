import { gzipSync } from 'node:zlib';
import t from 'tap';
import { assertErrorAnswer, rawRequest, startHostileApp } from './harness.js';

t.test('JSON bodies are decoded strictly', async (t) => {
  const h = await startHostileApp(t);
  const auth = { Authorization: `Bearer ${h.key}` };
  const pet = JSON.stringify({ name: 'Rex', categoryId: 1 });
  const post = (headers: Record<string, string>, body: string | Buffer) => {
    const bytes = Buffer.from(body);
    return h.send([
      rawRequest('POST /v1/pets HTTP/1.1', { ...auth, ...headers, 'Content-Length': String(bytes.length) }),
      bytes,
    ]);
  };
  const storedNames = async () => {
    const response = await h.send(rawRequest('GET /v1/pets?limit=100 HTTP/1.1', auth));
    return (JSON.parse(response.body) as { name: string }[]).map((stored) => stored.name);
  };

  await t.test('invalid UTF-8 in a JSON body: 400, nothing stored', async (t) => {
    const bytes = Buffer.concat([
      Buffer.from('{"name":"R'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('x","categoryId":1}'),
    ]);
    const error = await assertErrorAnswer(
      t,
      h,
      await post({ 'Content-Type': 'application/json' }, bytes),
      400,
      'invalid_request',
    );
    t.match(error['message'], /UTF-8/);
    const overlong = Buffer.concat([
      Buffer.from('{"name":"'),
      Buffer.from([0xc0, 0xaf]),
      Buffer.from('","categoryId":1}'),
    ]);
    await assertErrorAnswer(t, h, await post({ 'Content-Type': 'application/json' }, overlong), 400, 'invalid_request');
    t.same(await storedNames(), [], 'no pet named with U+FFFD');
  });

  await t.test('a charset other than UTF-8: 415', async (t) => {
    for (const charset of ['latin1', 'iso-8859-1', 'utf-16', '"windows-1252"']) {
      const response = await post({ 'Content-Type': `application/json; charset=${charset}` }, pet);
      await assertErrorAnswer(t, h, response, 415, 'unsupported_media_type');
    }
  });

  await t.test('charset utf-8, in any spelling, is accepted', async (t) => {
    for (const charset of ['utf-8', 'UTF-8', '"utf-8"', 'utf8']) {
      const response = await post({ 'Content-Type': `application/json; charset=${charset}` }, pet);
      t.equal(response.status, 201, charset);
    }
  });

  await t.test('a Content-Encoding other than identity: 415', async (t) => {
    const gzipped = await post({ 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, gzipSync(pet));
    await assertErrorAnswer(t, h, gzipped, 415, 'unsupported_media_type');
    const mislabelled = await post({ 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, pet);
    await assertErrorAnswer(t, h, mislabelled, 415, 'unsupported_media_type');
    const deflate = await post({ 'Content-Type': 'application/json', 'Content-Encoding': 'deflate' }, pet);
    await assertErrorAnswer(t, h, deflate, 415, 'unsupported_media_type');
    const identity = await post({ 'Content-Type': 'application/json', 'Content-Encoding': 'identity' }, pet);
    t.equal(identity.status, 201, 'identity is no encoding');
  });

  await t.test('a number that parsing would round into an integer: 400, nothing stored', async (t) => {
    const rounded: [string, string][] = [
      ['9007199254740990.9', '9007199254740991'],
      ['2.9999999999999999', '3'],
      ['9007199254740993', '9007199254740992'],
      ['1.00000000000000001e1', '10'],
      ['-0.99999999999999999', '-1'],
    ];
    for (const [literal, readAs] of rounded) {
      const body = `{"name":"Rounded","categoryId":${literal}}`;
      const error = await assertErrorAnswer(
        t,
        h,
        await post({ 'Content-Type': 'application/json' }, body),
        400,
        'invalid_request',
      );
      t.match(error['message'], `body.categoryId is ${literal}, which JSON parsers round to ${readAs}`, literal);
    }
    t.notOk((await storedNames()).includes('Rounded'), 'no rounded pet stored');
  });

  await t.test('an integer written with a fraction or exponent that is exact is accepted', async (t) => {
    for (const literal of ['7.0', '7e0', '0.7E1', '70e-1', '700000e-5']) {
      const response = await post({ 'Content-Type': 'application/json' }, `{"name":"Exact","categoryId":${literal}}`);
      t.equal(response.status, 201, literal);
      t.equal((JSON.parse(response.body) as { categoryId: number }).categoryId, 7, literal);
    }
  });

  await t.test('a property sent twice: 400, nothing stored', async (t) => {
    for (const body of [
      '{"name":"First","categoryId":1,"name":"Last"}',
      '{"name":"First","categoryId":1,"n\\u0061me":"Last"}',
    ]) {
      const error = await assertErrorAnswer(
        t,
        h,
        await post({ 'Content-Type': 'application/json' }, body),
        400,
        'invalid_request',
      );
      t.match(error['message'], "body has property 'name' more than once");
    }
    const names = await storedNames();
    t.notOk(names.includes('First') || names.includes('Last'), 'neither name stored');
  });

  await t.test('text that looks like a key inside a string value is not a key', async (t) => {
    const body = '{"name":"\\"name\\":{","categoryId":1}';
    const response = await post({ 'Content-Type': 'application/json' }, body);
    t.equal(response.status, 201, response.body);
  });

  await t.test('JSON parsing keeps its prototype-poisoning guard', async (t) => {
    const poisoned = '{"name":"Rex","categoryId":1,"__proto__":{"x":1}}';
    await assertErrorAnswer(t, h, await post({ 'Content-Type': 'application/json' }, poisoned), 400, 'invalid_request');
  });
});
