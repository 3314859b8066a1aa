import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { stringify } from 'yaml';
import { repoRoot } from '../../lib/repoRoot.js';
import { diff } from '../../lib/contract/diff.js';
import { parseContract } from '../../lib/contract/load.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import { scratchDir } from '../helpers/scratchSpace.js';
import { reviewedPatternChanges } from '../../lib/contract/reviewed.js';
import { runBreaking } from '../../scripts/contract/breaking.js';

/**
 * `npm run contract -- breaking` in this process (scripts/check-breaking.ts's one call), its output as the
 * process writes it: a process costs seconds of CPU, so one run end to end is kept for what only the
 * process shows (the exit code and stderr of bad input; the corpus's exit 1).
 */
function breaking(args: string[]): { status: number; stdout: string; stderr: string } {
  let [stdout, stderr] = ['', ''];
  const status = runBreaking(args, { out: (text) => (stdout += `${text}\n`), err: (text) => (stderr += `${text}\n`) });
  return { status, stdout, stderr };
}

const npmRunBreaking = (args: string[]) =>
  spawnSync('npm', ['run', '--silent', 'contract', '--', 'breaking', ...args], { cwd: repoRoot, encoding: 'utf8' });

/** A small contract in the shape of ours: one list with a bounded limit, one create. */
function baseline(): JsonObject {
  return {
    openapi: '3.1.0',
    info: { title: 'fixture', version: '1.0.0' },
    paths: {
      '/pets': {
        get: {
          operationId: 'listPets',
          parameters: [
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } },
            { name: 'status', in: 'query', required: false, schema: { $ref: '#/components/schemas/Status' } },
          ],
          responses: {
            '200': {
              description: 'ok',
              content: {
                'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } },
              },
            },
            '400': { description: 'bad' },
          },
        },
        post: {
          operationId: 'createPet',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPet' } } },
          },
          responses: {
            '201': {
              description: 'created',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
            },
          },
        },
      },
      '/pets/{petId}': {
        get: {
          operationId: 'getPet',
          parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
          responses: { '200': { description: 'ok' } },
        },
      },
    },
    components: {
      schemas: {
        Status: { type: 'string', enum: ['available', 'pending', 'sold'] },
        NewPet: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100 },
            status: { $ref: '#/components/schemas/Status' },
          },
        },
        Pet: {
          type: 'object',
          required: ['id', 'name', 'status'],
          properties: {
            id: { type: 'integer' },
            name: { type: 'string', maxLength: 100 },
            status: { $ref: '#/components/schemas/Status' },
          },
        },
      },
    },
  };
}

// Fixtures are edited by path; typing every edit would bury the change under test.
type Doc = any;

/** The baseline with one edit applied. */
function edited(edit: (doc: Doc) => void): JsonObject {
  const doc = baseline();
  edit(doc);
  return doc;
}

/** The breaking changes of an edit, as "rule: message". */
const breakingOf = (before: JsonObject, after: JsonObject) =>
  diff(before, after)
    .filter((change) => change.level === 'breaking')
    .map((change) => `${change.rule}: ${change.message}`);
const changesFor = (edit: (doc: Doc) => void) => breakingOf(baseline(), edited(edit));

// parseContract keeps the last documents it parsed, by their text (lib/contract/load.ts).
t.test('a contract read twice: each reader gets a document of its own', async (t) => {
  const text = stringify(baseline());
  const first = parseContract(text, 'first.yaml');
  const second = parseContract(text, 'second.yaml');
  t.same(second, first, 'the same document');
  t.not(second, first, 'not the same object');
  for (const [reader, document] of [
    ['first', first],
    ['second', second],
  ] as const) {
    (document['info'] as JsonObject)['title'] = `edited by the ${reader} reader`;
    const next = parseContract(text, 'next.yaml');
    t.equal(
      (next['info'] as JsonObject)['title'],
      (baseline()['info'] as JsonObject)['title'],
      `${reader}: not in the next`,
    );
  }
});

t.test('an unchanged contract has no change at all', async (t) => {
  t.same(diff(baseline(), baseline()), []);
});

t.test('every change carries its rule, level, direction, operation and pointer', async (t) => {
  const [change] = diff(
    baseline(),
    edited((doc) => {
      doc.paths['/pets'].get.parameters[0].schema.maximum = 50;
    }),
  );
  t.same(change, {
    rule: 'request-parameter-max-decreased',
    level: 'breaking',
    direction: 'request',
    operation: { operationId: 'listPets', method: 'GET', path: '/pets' },
    pointer: '/paths/~1pets/get/parameters/0/schema',
    side: 'head',
    message: 'query parameter `limit`: maximum `100` → `50`',
    before: 100,
    after: 50,
    consumer: 'Requests with the query parameter `limit` set to `100`, accepted before, are now refused with 400.',
    counterExample: { value: 100, acceptedBy: 'base', refusedBy: 'head' },
  });
  const [removed] = diff(
    baseline(),
    edited((doc) => {
      doc.paths['/pets'].get.parameters.splice(0, 1);
    }),
  );
  t.match(removed, { rule: 'request-parameter-removed', side: 'base', pointer: '/paths/~1pets/get/parameters/0' });
});

t.test('a keyword beside a $ref is kept when dereferencing', async (t) => {
  t.match(
    changesFor((doc) => {
      doc.components.schemas.NewPet.properties.status = { $ref: '#/components/schemas/Status', maxLength: 4 };
    }),
    [/^request-property-max-length-set: request body `application\/json`\.status: maxLength `none` → `4`$/],
  );
});

t.test('the gate fails on a narrowed maximum unless the major version moved', async (t) => {
  const dir = scratchDir('pets-breaking-');
  t.teardown(() => {
    dir.remove();
  });
  const run = (head: JsonObject) => {
    const base = join(dir.path, 'base.yaml');
    const file = join(dir.path, 'head.yaml');
    writeFileSync(base, stringify(baseline()));
    writeFileSync(file, stringify(head));
    return breaking(['--base', base, '--head', file]);
  };
  const narrowed = run(
    edited((doc) => {
      doc.paths['/pets'].get.parameters[0].schema.maximum = 50;
    }),
  );
  t.equal(narrowed.status, 1, 'a narrowed maximum in 1.x fails');
  t.match(
    narrowed.stdout,
    /^ {2}x breaking request-parameter-max-decreased listPets \(GET \/pets\): Requests with the query parameter `limit` set to `100`, accepted before, are now refused with 400\.\n {6}for example `100`: accepted by the base, refused by the head\n {6}at head #\/paths\/~1pets\/get\/parameters\/0\/schema$/m,
    "the consumer's sentence with its level and rule id, and the counter-example under it",
  );
  t.notMatch(narrowed.stdout, /maximum `100` → `50`/, 'the shorthand gives way to the sentence');
  t.match(narrowed.stdout, /^Comparing .* on \d{4}-\d{2}-\d{2}: /m, 'the day the sunsets are judged on');
  t.match(narrowed.stderr, /breaking change\(s\) against .*base\.yaml \(1\.0\.0\)\./, 'the base as named');
  t.notMatch(narrowed.stderr, /released/, 'a base given by --base is not called a release');
  const major = run(
    edited((doc) => {
      doc.paths['/pets'].get.parameters[0].schema.maximum = 50;
      doc.info.version = '2.0.0';
    }),
  );
  t.equal(major.status, 0, 'the same change in 2.0.0 passes', { output: major.stdout + major.stderr });
});

t.test(
  'a request field no longer read where unknown fields are accepted: a warning with a body both accept',
  async (t) => {
    const dir = scratchDir('pets-breaking-ignored-');
    t.teardown(() => {
      dir.remove();
    });
    const open = (doc: Doc) => {
      delete doc.components.schemas.NewPet.additionalProperties;
    };
    const [base, head] = [join(dir.path, 'base.yaml'), join(dir.path, 'head.yaml')];
    writeFileSync(base, stringify(edited(open)));
    writeFileSync(
      head,
      stringify(
        edited((doc) => {
          open(doc);
          delete doc.components.schemas.NewPet.properties.status;
        }),
      ),
    );
    const ignored = breaking(['--base', base, '--head', head]);
    t.equal(ignored.status, 0, 'nothing is refused', { stderr: ignored.stderr });
    t.match(
      ignored.stdout,
      /^ {2}! warning request-property-removed createPet \(POST \/pets\): The service no longer reads `status` in the request body; requests that send it are served without it\.\n {6}for example `\{[^\n]*"status":[^\n]*\}`: accepted by the base and by the head, which ignores `status` in it\n {6}at base #\/paths\/~1pets\/post\/requestBody\/content\/application~1json\/schema\/properties\/status$/m,
      'the sentence, then the body that sends the field, which both sides accept, then where it was',
    );
  },
);

t.test('input that cannot be compared: one line naming the file and the reason, exit 2', async (t) => {
  const dir = scratchDir('pets-breaking-input-');
  t.teardown(() => {
    dir.remove();
  });
  const good = join(dir.path, 'good.yaml');
  writeFileSync(good, stringify(baseline()));
  const notYaml = join(dir.path, 'broken.yaml');
  writeFileSync(notYaml, 'openapi: 3.1.0\npaths: {\n  /pets: [\n');
  const brokenRef = join(dir.path, 'broken-ref.yaml');
  writeFileSync(
    brokenRef,
    stringify(
      edited((doc) => {
        doc.paths['/pets'].post.requestBody.content['application/json'].schema.$ref = '#/components/schemas/Nope';
      }),
    ),
  );
  const badVersion = join(dir.path, 'bad-version.yaml');
  writeFileSync(
    badVersion,
    stringify(
      edited((doc) => {
        doc.info.version = 'banana';
      }),
    ),
  );
  const cases: Array<[string, string[], RegExp]> = [
    [
      'a base that does not parse',
      ['--base', notYaml, '--head', good],
      /^contract breaking: .*broken\.yaml: not YAML: .+\n$/,
    ],
    [
      'a git ref that does not exist',
      ['--base', 'no-such-ref-54', '--head', good],
      /^contract breaking: no-such-ref-54: neither a file nor a git revision that has openapi\.yaml\n$/,
    ],
    [
      'a head whose info.version is not a version',
      ['--base', good, '--head', badVersion],
      /^contract breaking: .*bad-version\.yaml: info\.version "banana" is not MAJOR\.MINOR\.PATCH\n$/,
    ],
    [
      'a head with a broken $ref',
      ['--base', good, '--head', brokenRef],
      /^contract breaking: .*broken-ref\.yaml: \$ref "#\/components\/schemas\/Nope" at #\/paths\/\S+ resolves to nothing\n$/,
    ],
  ];
  for (const [index, [name, args, expected]] of cases.entries()) {
    // The first through npm run, as a process: its exit code and stderr; the others in this process.
    const result = index === 0 ? npmRunBreaking(args) : breaking(args);
    t.equal(result.status, 2, `${name}: exit 2`, { stdout: result.stdout, stderr: result.stderr });
    t.match(result.stderr, expected, `${name}: one line naming the file and the reason`);
    t.notMatch(result.stderr, /\n\s+at /, `${name}: no stack trace`);
  }
});

// A copy of the tree without its history (CI's fresh copies on other Node.js lines) has no revision to name.
const inGitCheckout = spawnSync('git', ['rev-parse', '--verify', 'HEAD'], { cwd: repoRoot }).status === 0;

t.test(
  'a git revision is a base: openapi.yaml at that commit',
  { skip: !inGitCheckout && 'not a git checkout' },
  async (t) => {
    const result = breaking(['--base', 'HEAD', '--json']);
    t.match(JSON.parse(result.stdout), { base: { source: 'openapi.yaml at HEAD' } });
  },
);

t.test('a reviewed pattern change passes, in requests and responses; any other pattern change does not', async (t) => {
  const [reviewed] = reviewedPatternChanges;
  const withName = (pattern: string) => (doc: Doc) => {
    doc.components.schemas.NewPet.properties.name.pattern = pattern;
    doc.components.schemas.Pet.properties.name.pattern = pattern;
  };
  const before = edited(withName(reviewed!.from));
  const after = edited(withName(reviewed!.to));
  t.same(breakingOf(before, after), [], 'the reviewed change, exactly as listed');
  // Another pattern that lets C1 controls through: requests accept more, responses may send what was refused.
  const other = edited(withName('^[^\\x00-\\x1F]+$'));
  t.ok(
    breakingOf(before, other).some((line) => line.startsWith('response-property-pattern-changed: response')),
    'another change of the same pattern is still reported',
  );
  t.match(
    breakingOf(after, before),
    [/^request-property-pattern-changed: request body/],
    'the reverse of a reviewed change is not reviewed: a name with an unpaired surrogate is refused',
  );
});

t.test('a reviewed pattern change covers the lengths it names, exactly', async (t) => {
  const reviewed = reviewedPatternChanges.find((change) => change.lengths !== undefined)!;
  const withCursor = (pattern: string, lengths: { minLength?: number; maxLength?: number }) => (doc: Doc) => {
    const parameters = doc.paths['/pets'].get.parameters as JsonObject[];
    parameters.push({ name: 'cursor', in: 'query', required: false, schema: { type: 'string', ...lengths, pattern } });
  };
  const before = edited(withCursor(reviewed.from, reviewed.lengths!.from));
  const after = edited(withCursor(reviewed.to, reviewed.lengths!.to));
  t.same(breakingOf(before, after), [], 'the reviewed change with its lengths');
  const longer = edited(withCursor(reviewed.to, { ...reviewed.lengths!.to, maxLength: 20 }));
  const whats = (after: JsonObject) => breakingOf(before, after).join('; ');
  t.match(
    whats(longer),
    /max-length-decreased: .*maxLength `64` → `20`.*pattern-changed/,
    'other lengths with the same patterns are not the reviewed change',
  );
  const sentences = diff(before, after).map((change) => change.consumer);
  t.ok(sentences.length > 0, 'the reviewed changes are listed', { sentences });
  for (const sentence of sentences)
    t.match(
      sentence,
      /^The contract no longer allows requests with the query parameter `cursor` set to .*; as reviewed, the service served none of them, so no request it served is refused now\.$/,
      'a reviewed narrowing says what the reason says: the contract refuses, the service refused before',
    );
  const lengthOnly = edited(withCursor(reviewed.from, { minLength: 1, maxLength: 10 }));
  t.match(
    whats(lengthOnly),
    /^request-parameter-max-length-decreased: query parameter `cursor`: maxLength `64` → `10`$/,
    'a length change without the pattern change is reported',
  );
});

t.test('the sunset is judged against the given day, never the clock', async (t) => {
  const deprecated = (doc: Doc) => {
    Object.assign(doc.paths['/pets/{petId}'].get, { deprecated: true, 'x-sunset': '2030-12-05T00:00:00Z' });
  };
  const before = edited(deprecated);
  const after = edited((doc) => {
    deprecated(doc);
    delete doc.paths['/pets/{petId}'];
  });
  const rulesOn = (today: string) => diff(before, after, { today }).map((change) => `${change.level} ${change.rule}`);
  t.same(rulesOn('2030-12-04'), ['breaking api-removed-before-sunset'], 'the day before the sunset');
  t.match(
    diff(before, after, { today: '2030-12-04' })[0]?.consumer,
    /now fail \(404\)/,
    'a path the head no longer has answers 404',
  );
  t.same(rulesOn('2030-12-05'), ['warning api-removed-after-sunset'], 'the sunset day');
  t.throws(() => diff(before, after, { today: '5 Dec 2030' }), { message: /not YYYY-MM-DD/ });
});

t.test('a new deprecation whose sunset has passed on the given day is breaking: the service answers 410', async (t) => {
  const after = edited((doc) => {
    Object.assign(doc.paths['/pets/{petId}'].get, { deprecated: true, 'x-sunset': '2030-12-05T00:00:00Z' });
  });
  const rulesOn = (today: string) =>
    diff(baseline(), after, { today }).map((change) => `${change.level} ${change.rule}`);
  t.same(rulesOn('2030-12-04'), ['warning endpoint-deprecated'], 'the day before the sunset');
  t.same(rulesOn('2030-12-05'), ['warning endpoint-deprecated', 'breaking api-deprecated-sunset-passed'], 'on it');
  t.same(
    diff(after, after, { today: '2031-01-01' }),
    [],
    'a sunset that had passed for the base already changes nothing',
  );
});

t.test('the values decide: an equivalent rewrite passes, a narrowing no rule names is caught', async (t) => {
  const same = diff(
    baseline(),
    edited((doc) => {
      const limit = doc.paths['/pets'].get.parameters[0].schema;
      delete limit.minimum;
      limit.exclusiveMinimum = 0;
    }),
  );
  t.same(
    same.map((change) => [change.rule, change.level]),
    [
      ['request-parameter-min-removed', 'none'],
      ['request-parameter-exclusive-min-set', 'none'],
    ],
  );
  t.notOk(
    same.some((change) => change.counterExample),
    'no counter-example where none exists',
  );
  const [caught] = diff(
    baseline(),
    edited((doc) => {
      doc.components.schemas.NewPet.dependentRequired = { status: ['name', 'nickname'] };
    }),
  );
  t.match(caught, {
    rule: 'request-body-schema-keyword-changed',
    level: 'breaking',
    counterExample: { value: { status: String }, acceptedBy: 'base', refusedBy: 'head' },
    consumer: /^Requests with a body like .*, accepted before, are now refused with 400\.$/,
  });
});

t.test('a response may grow, but not send what the base refused', async (t) => {
  const grown = diff(
    baseline(),
    edited((doc) => {
      doc.components.schemas.Pet.additionalProperties = false;
      doc.components.schemas.Pet.properties.nickname = { type: 'string' };
    }),
  );
  t.notOk(
    grown.some((change) => change.level === 'breaking'),
    'a new optional field in a closed response object is no break',
    { grown },
  );
  const widened = diff(
    baseline(),
    edited((doc) => {
      doc.components.schemas.Pet.properties.name = { anyOf: [{ type: 'string', maxLength: 100 }, { type: 'integer' }] };
    }),
  ).filter((change) => change.direction === 'response' && change.level === 'breaking');
  t.ok(widened.length > 0, 'a name that may now be a number', { widened });
  t.ok(
    widened.every(
      (change) => change.counterExample?.acceptedBy === 'head' && change.counterExample.refusedBy === 'base',
    ),
  );
});

t.test('no change is left "not analysed", and every change speaks to the consumer', async (t) => {
  const changes = diff(
    baseline(),
    edited((doc) => {
      const newPet = doc.components.schemas.NewPet;
      Object.assign(newPet, {
        propertyNames: { maxLength: 10 },
        if: { required: ['status'] },
        then: { properties: { name: { maxLength: 50 } } },
        not: { required: ['nickname'] },
        unevaluatedProperties: false,
      });
    }),
  );
  t.ok(changes.length >= 4);
  t.notOk(changes.some((change) => /not analysed/.test(change.message)));
  t.ok(
    changes.every((change) => /^[A-Z`].*\.$/.test(change.consumer)),
    'one sentence each',
    { changes },
  );
  t.ok(
    changes.some((change) => change.level === 'breaking' && change.counterExample),
    'the if/then narrows names',
  );
});

t.test('an int64 bound (kept as text) raised, lowered or removed is named for what happened', async (t) => {
  const int64Max = 9223372036854775807n;
  const int64Min = -9223372036854775808n;
  // As a contract file holds them: written in digits, read back by the loader that keeps int64 bounds exact.
  const withId = (bounds: { minimum?: bigint | number; maximum?: bigint | number }) =>
    parseContract(
      stringify(
        edited((doc) => {
          doc.paths['/pets/{petId}'].get.parameters[0].schema = { type: 'integer', format: 'int64', ...bounds };
        }),
      ),
      'fixture.yaml',
    );
  const rules = (before: JsonObject, after: JsonObject) =>
    diff(before, after).map((change) => `${change.level} ${change.rule}`);
  const narrow = withId({ minimum: 1, maximum: 9007199254740993n });
  const wide = withId({ minimum: int64Min, maximum: int64Max });
  t.same(
    rules(narrow, wide),
    ['additive request-parameter-min-decreased', 'additive request-parameter-max-increased'],
    'raised and lowered, not removed',
  );
  t.same(
    rules(wide, narrow),
    ['breaking request-parameter-min-increased', 'breaking request-parameter-max-decreased'],
    'the reverse narrows: breaking',
  );
  t.same(
    rules(wide, withId({ minimum: int64Min })),
    ['additive request-parameter-max-removed'],
    'a maximum deleted is removed',
  );
  t.same(
    rules(withId({ minimum: int64Min }), wide),
    ['breaking request-parameter-max-set'],
    'a maximum written where none was is set',
  );
});

t.test('what values cannot show is judged by its rule: long bounds, cycles', async (t) => {
  const longName = (maxLength: number) => (doc: Doc) => {
    doc.components.schemas.NewPet.properties.name.maxLength = maxLength;
  };
  t.match(
    breakingOf(edited(longName(1_000_000)), edited(longName(500_000))),
    [/^request-property-max-length-decreased: .*judged by its bound/],
    'a million characters are not built, the rule decides',
  );
  const tree = (maxLength: number) => (doc: Doc) => {
    doc.components.schemas.NewPet.properties.parent = { $ref: '#/components/schemas/NewPet' };
    doc.components.schemas.NewPet.properties.name.maxLength = maxLength;
  };
  t.match(
    breakingOf(edited(tree(100)), edited(tree(50))),
    [/^request-property-max-length-decreased: request body `application\/json`\.name: /],
    'a schema that refers to itself is compared down to the cycle',
  );
});
