import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { stringify } from 'yaml';
import { repoRoot } from '../../lib/repoRoot.js';
import { findBreakingChanges, type JsonObject } from '../../scripts/breaking/compare.js';
import { scratchDir } from '../helpers/scratchSpace.js';
import { reviewedPatternChanges } from '../../scripts/breaking/reviewedPatterns.js';

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

const changesFor = (edit: (doc: Doc) => void) =>
  findBreakingChanges(baseline(), edited(edit)).map((change) => `${change.where}: ${change.what}`);

t.test('an unchanged contract has no breaking change', async (t) => {
  t.same(findBreakingChanges(baseline(), baseline()), []);
});

t.test('breaking request changes are reported', async (t) => {
  const cases: Array<[string, (doc: Doc) => void, RegExp]> = [
    [
      'narrowed maximum',
      (doc) => {
        doc.paths['/pets'].get.parameters[0].schema.maximum = 50;
      },
      /GET \/pets query parameter limit: maximum narrowed: 100 -> 50/,
    ],
    [
      'raised minimum',
      (doc) => {
        doc.paths['/pets'].get.parameters[0].schema.minimum = 5;
      },
      /limit: minimum narrowed: 1 -> 5/,
    ],
    [
      'narrowed maxLength',
      (doc) => {
        doc.components.schemas.NewPet.properties.name.maxLength = 20;
      },
      /POST \/pets request body \(application\/json\)\.name: maxLength narrowed: 100 -> 20/,
    ],
    [
      'raised minLength',
      (doc) => {
        doc.components.schemas.NewPet.properties.name.minLength = 3;
      },
      /\.name: minLength narrowed: 1 -> 3/,
    ],
    [
      'new bound where there was none',
      (doc) => {
        doc.paths['/pets/{petId}'].get.parameters[0].schema.maximum = 1000;
      },
      /petId: maximum narrowed: none -> 1000/,
    ],
    [
      'enum value removed',
      (doc) => {
        doc.components.schemas.Status.enum = ['available', 'pending'];
      },
      /GET \/pets query parameter status: enum value\(s\) removed: \["sold"\]/,
    ],
    [
      'newly required field',
      (doc) => {
        doc.components.schemas.NewPet.required = ['name', 'status'];
      },
      /field status is newly required/,
    ],
    [
      'new required parameter',
      (doc) => {
        doc.paths['/pets'].get.parameters.push({
          name: 'owner',
          in: 'query',
          required: true,
          schema: { type: 'string' },
        });
      },
      /query parameter owner: new required parameter/,
    ],
    [
      'parameter became required',
      (doc) => {
        doc.paths['/pets'].get.parameters[0].required = true;
      },
      /limit: parameter became required/,
    ],
    [
      'type narrowed',
      (doc) => {
        doc.components.schemas.NewPet.properties.name.type = 'integer';
      },
      /\.name: type narrowed/,
    ],
    [
      'pattern added',
      (doc) => {
        doc.components.schemas.NewPet.properties.name.pattern = '^[a-z]+$';
      },
      /\.name: pattern changed/,
    ],
    [
      'field removed from a closed object',
      (doc) => {
        delete doc.components.schemas.NewPet.properties.status;
      },
      /field status removed and unknown fields are rejected/,
    ],
    [
      'media type dropped',
      (doc) => {
        doc.paths['/pets'].post.requestBody.content = { 'application/xml': {} };
      },
      /media type application\/json no longer accepted/,
    ],
  ];
  for (const [name, edit, expected] of cases) {
    const changes = changesFor(edit);
    t.ok(
      changes.some((change) => expected.test(change)),
      name,
      { changes },
    );
  }
});

t.test('removed operations and responses are reported', async (t) => {
  t.match(
    changesFor((doc) => {
      delete doc.paths['/pets/{petId}'];
    }),
    [/GET \/pets\/\{petId\}: operation removed/],
  );
  t.match(
    changesFor((doc) => {
      delete doc.paths['/pets'].get.responses['400'];
    }),
    [/GET \/pets response 400: response removed/],
  );
});

t.test('responses are compared the other way round', async (t) => {
  const reported = (edit: (doc: Doc) => void, expected: RegExp) => {
    const changes = changesFor(edit);
    t.ok(
      changes.some((change) => expected.test(change)),
      String(expected),
      { changes },
    );
  };
  reported((doc) => {
    doc.components.schemas.Status.enum.push('reserved');
  }, /GET \/pets response 200 .*enum value\(s\) added: \["reserved"\]/);
  reported((doc) => {
    doc.components.schemas.Pet.properties.name.maxLength = 200;
  }, /POST \/pets response 201 .*\.name: maxLength widened: 100 -> 200/);
  reported((doc) => {
    doc.components.schemas.Pet.required = ['id', 'name'];
  }, /field status is no longer always present/);
});

t.test('compatible changes are not reported', async (t) => {
  t.same(
    changesFor((doc) => {
      doc.paths['/pets'].get.parameters[0].schema.maximum = 500;
    }),
    [],
    'widened maximum',
  );
  t.same(
    changesFor((doc) => {
      doc.components.schemas.NewPet.properties.name.maxLength = 200;
      doc.components.schemas.Pet.properties.name.maxLength = 50;
    }),
    [],
    'longer names accepted, shorter ones returned',
  );
  t.same(
    changesFor((doc) => {
      doc.paths['/pets'].get.parameters.push({
        name: 'owner',
        in: 'query',
        required: false,
        schema: { type: 'string' },
      });
    }),
    [],
    'optional parameter added',
  );
  t.same(
    changesFor((doc) => {
      doc.paths['/pets'].put = { operationId: 'replacePet', responses: { '200': { description: 'ok' } } };
    }),
    [],
    'operation added',
  );
  t.same(
    changesFor((doc) => {
      doc.paths['/pets'].get.responses['404'] = { description: 'nope' };
    }),
    [],
    'response added',
  );
  t.same(
    changesFor((doc) => {
      doc.paths['/pets/{petId}'].get.parameters[0].name = 'id';
      doc.paths['/pets/{id}'] = doc.paths['/pets/{petId}'];
      delete doc.paths['/pets/{petId}'];
    }),
    [],
    'path parameter renamed',
  );
});

t.test('npm run contract -- breaking fails on a narrowed maximum unless the major version moved', async (t) => {
  const dir = scratchDir('pets-breaking-');
  t.teardown(() => {
    dir.remove();
  });
  const run = (head: JsonObject) => {
    const base = join(dir.path, 'base.yaml');
    const file = join(dir.path, 'head.yaml');
    writeFileSync(base, stringify(baseline()));
    writeFileSync(file, stringify(head));
    return spawnSync(
      process.execPath,
      ['--import=tsx', join(repoRoot, 'scripts/check-breaking.ts'), '--base', base, '--head', file],
      { cwd: repoRoot, encoding: 'utf8' },
    );
  };
  const narrowed = run(
    edited((doc) => {
      doc.paths['/pets'].get.parameters[0].schema.maximum = 50;
    }),
  );
  t.equal(narrowed.status, 1, 'a narrowed maximum in 1.x fails');
  t.match(narrowed.stdout, /maximum narrowed: 100 -> 50/);
  const major = run(
    edited((doc) => {
      doc.paths['/pets'].get.parameters[0].schema.maximum = 50;
      doc.info.version = '2.0.0';
    }),
  );
  t.equal(major.status, 0, 'the same change in 2.0.0 passes', { output: major.stdout + major.stderr });
});

t.test('a reviewed pattern change passes, in requests and responses; any other pattern change does not', async (t) => {
  const [reviewed] = reviewedPatternChanges;
  const withName = (pattern: string) => (doc: Doc) => {
    doc.components.schemas.NewPet.properties.name.pattern = pattern;
    doc.components.schemas.Pet.properties.name.pattern = pattern;
  };
  const before = edited(withName(reviewed!.from));
  const after = edited(withName(reviewed!.to));
  t.same(findBreakingChanges(before, after), [], 'the reviewed change, exactly as listed');
  const other = edited(withName('^[^\\x00-\\x1F]+$'));
  t.match(
    findBreakingChanges(before, other).map(({ where, what }) => `${where}: ${what}`),
    [/\.name: pattern changed/],
    'another change of the same pattern is still reported',
  );
  t.ok(findBreakingChanges(after, before).length > 0, 'the reverse of a reviewed change is not reviewed');
});

t.test('a reviewed pattern change covers the lengths it names, exactly', async (t) => {
  const reviewed = reviewedPatternChanges.find((change) => change.lengths !== undefined)!;
  const withCursor = (pattern: string, lengths: { minLength?: number; maxLength?: number }) => (doc: Doc) => {
    const parameters = doc.paths['/pets'].get.parameters as JsonObject[];
    parameters.push({ name: 'cursor', in: 'query', required: false, schema: { type: 'string', ...lengths, pattern } });
  };
  const before = edited(withCursor(reviewed.from, reviewed.lengths!.from));
  const after = edited(withCursor(reviewed.to, reviewed.lengths!.to));
  t.same(findBreakingChanges(before, after), [], 'the reviewed change with its lengths');
  const longer = edited(withCursor(reviewed.to, { ...reviewed.lengths!.to, maxLength: 20 }));
  const whats = (after: JsonObject) =>
    findBreakingChanges(before, after)
      .map(({ what }) => what)
      .join('; ');
  t.match(
    whats(longer),
    /maxLength narrowed: 64 -> 20.*pattern changed/,
    'other lengths with the same patterns are not the reviewed change',
  );
  const lengthOnly = edited(withCursor(reviewed.from, { minLength: 1, maxLength: 10 }));
  t.match(
    whats(lengthOnly),
    /^maxLength narrowed: 64 -> 10$/,
    'a length change without the pattern change is reported',
  );
});
