// npm run contract -- review, its parts: the sentences by changed operation, the version step, the Markdown.
// The whole command on realistic pull requests (with the generated clients) is reviewPullRequests.test.ts.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import type { Change } from '../../lib/contract/change.js';
import { loadContract, parseContract, type LoadedContract } from '../../lib/contract/load.js';
import { releasedFile, releasedVersions } from '../../lib/contract/released.js';
import { repoRoot } from '../../lib/repoRoot.js';
import type { ClientChanges } from '../../scripts/contract/clientDeclarations.js';
import {
  compare,
  defaultBases,
  mergeBaseWith,
  placesNamed,
  reviewMarkdown,
  type Comparison,
} from '../../scripts/contract/review.js';
import { scratchDir } from '../helpers/scratchSpace.js';
import { answersCarrying, fresh } from './pullRequests.js';

const specText = readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8');
// Fixtures are edited by path; typing every edit would bury the change under test.
type Doc = any;
const edited = (edit: (doc: Doc) => void): LoadedContract => {
  const doc = parse(specText, { intAsBigInt: true }) as Doc;
  edit(doc);
  return { document: parseContract(stringify(doc), 'head.yaml'), source: 'head.yaml' };
};
const main: LoadedContract = { document: parseContract(specText, 'main.yaml'), source: 'main.yaml' };
const noClientChange: ClientChanges = { refused: {}, added: [], removed: [], changed: [] };
const date = '2026-11-29';
const compared = (base: LoadedContract, edit: (doc: Doc) => void) => compare(base, edited(edit), date, noClientChange);
const markdown = (comparison: Comparison) => reviewMarkdown({ version: 1, date, comparisons: [comparison] });

t.test(
  'a removed operation: its sentence under its heading with the rule id, a major step, the gate fails',
  async (t) => {
    const comparison = compared(main, (doc) => {
      delete doc.paths['/pets'].post;
    });
    t.match(comparison.version, { needed: 'major', enough: false });
    t.match(comparison.gate, { passed: false, breaking: 1 });
    t.same(
      comparison.operations.map((operation) => operation.operationId),
      ['createPet'],
    );
    t.match(
      markdown(comparison),
      /#### `createPet` \(POST \/pets\)\n\n- \*\*breaking\*\*: Calls to POST \/pets now fail \(405\): it was removed without a deprecation period\. \(`api-removed-without-deprecation`\)\n/,
    );
  },
);

t.test('only changed operations appear, each with the scopes, objectives and deprecation that differ', async (t) => {
  const comparison = compared(main, (doc) => {
    doc.paths['/pets'].get.security = [{ bearerAuth: ['pets:read', 'pets:list'] }];
    doc.paths['/pets'].get['x-slo'].availability = 99.5;
  });
  t.same(
    comparison.operations.map((operation) => operation.operationId),
    ['listPets'],
  );
  const [listPets] = comparison.operations;
  t.same(listPets?.scopes, { before: 'bearerAuth [pets:read]', after: 'bearerAuth [pets:read, pets:list]' });
  t.match(listPets?.objectives, { before: /"availability":99\.9/, after: /"availability":99\.5/ });
  t.notOk(listPets?.deprecation, 'an unchanged fact is left out');
  const text = markdown(comparison);
  t.match(text, /- scopes: `bearerAuth \[pets:read\]` → `bearerAuth \[pets:read, pets:list\]`/);
  t.notMatch(text, /getPet|createPet/, 'no unchanged operation, no table of them');
  t.notMatch(text, /\| operation \| before \| after \|/);
});

t.test(
  'the version step: judged from the release that is the base, or from the last release below the head',
  async (t) => {
    const releaseVersion = releasedVersions().at(-1)!;
    const release = loadContract(releasedFile(releaseVersion));
    const additive = (doc: Doc) => {
      doc.components.schemas.Pet.properties[fresh.property] = { type: 'string' };
    };
    // One additive change per answer carrying a Pet.
    const answers = [...answersCarrying(parse(specText), 'Pet').values()].flat().length;
    const fromRelease = compared(release, additive);
    t.match(fromRelease.base, { released: true, version: releaseVersion });
    t.match(fromRelease.version, { release: releaseVersion, needed: 'minor', made: 'minor', enough: true });
    t.match(markdown(fromRelease), /info\.version 1\.2\.0 → 1\.3\.0 is a minor step: enough\./);

    // Unreleased main (1.3.0, a minor step above 1.2.0): an additive change on top is covered by that step.
    const fromMain = compared(main, additive);
    t.match(fromMain.base, { released: false, version: '1.3.0' });
    t.match(fromMain.version, { release: releaseVersion, needed: 'minor', made: 'minor', enough: true });
    t.match(
      markdown(fromMain),
      new RegExp(
        `the base is not a release, so only what the head adds to it is judged: it needs a minor release: the wire a minor release \\(0 breaking, 0 warning, ${answers} additive, 0 none\\), the client's source no release \\(0 exported name\\(s\\) removed, 0 added\\); info\\.version 1\\.3\\.0 is a minor step from the last release 1\\.2\\.0: enough\\.`,
      ),
    );
    t.match(markdown(fromMain), /- \*\*Breaking changes it adds\*\*: none\./);

    // A breaking change on top of it is not covered, whatever main already took.
    const breakingOnMain = compared(main, (doc) => {
      delete doc.paths['/pets'].post;
    });
    t.match(breakingOnMain.version, { needed: 'major', made: 'minor', enough: false });
    t.match(markdown(breakingOnMain), /\*\*Breaking changes it adds\*\*: 1, \*\*refused\*\* without a major step/);

    // Nothing added on top of main: no release needed, and the section is one line saying so.
    const nothing = compared(main, () => {});
    t.match(nothing.version, { needed: 'none', enough: true });
    t.match(
      markdown(nothing),
      /reviews again as of it\)\.\n- \*\*Nothing for consumers\*\*: no change on the wire, none in the client's declarations\.\n$/,
    );
  },
);

t.test("the consumer's sentence, a counter-example and a reviewed reason written once", async (t) => {
  const change: Change = {
    rule: 'request-property-pattern-changed',
    level: 'breaking',
    direction: 'request',
    operation: { operationId: 'createPet', method: 'POST', path: '/pets' },
    pointer: '/paths/~1pets/post/requestBody',
    side: 'head',
    message: 'body `name`: pattern changed',
    consumer: 'Requests whose `name` is only spaces are now refused with 400.',
    counterExample: { value: { name: '  ', categoryId: 1 }, acceptedBy: 'base', refusedBy: 'head' },
  };
  const comparison = compared(main, () => {});
  const reason = 'no key held before is refused';
  comparison.operations = [
    {
      operationId: 'createPet',
      method: 'POST',
      path: '/pets',
      changes: [
        change,
        { ...change, reviewed: reason },
        {
          ...change,
          rule: 'request-property-max-length-decreased',
          consumer: 'Requests whose `name` is longer than 50 characters are now refused with 400.',
          reviewed: reason,
        },
      ],
    },
  ];
  const text = markdown(comparison);
  t.match(
    text,
    '- **breaking**: Requests whose `name` is only spaces are now refused with 400. (`request-property-pattern-changed`)\n' +
      '  - for example `{"name":"  ","categoryId":1}`: accepted by the base, refused by the head\n',
  );
  t.notMatch(text, /body `name`: pattern changed/, 'the shorthand gives way to the sentence');
  t.equal(text.split(reason).length - 1, 1, 'a reviewed reason is written once');
  t.match(text, /reviewed: as for `request-property-pattern-changed` above/);
});

t.test(
  'a request field no longer read: ignored where the object is open, refused where it is closed, each with its body',
  async (t) => {
    const removeStatus = (open: boolean) => (doc: Doc) => {
      delete doc.components.schemas.NewPet.properties.status;
      if (open) delete doc.components.schemas.NewPet.additionalProperties;
    };
    const lineOf = (comparison: Comparison) => {
      const lines = markdown(comparison).split('\n');
      const at = lines.findIndex((line) => line.includes('(`request-property-removed`)'));
      return lines.slice(at, at + 2);
    };
    const [ignored, ignoredExample] = lineOf(compared(main, removeStatus(true)));
    t.equal(
      ignored,
      '- warning: The service no longer reads `status` in the request body; requests that send it are served without it. (`request-property-removed`)',
    );
    // Its example in the other direction from a counter-example: a body both accept, the head ignoring the field.
    t.match(
      ignoredExample,
      /^ {2}- for example `\{[^`]*"status":[^`]*\}`: accepted by the base and by the head, which ignores `status` in it$/,
    );
    const [refused, counterExample] = lineOf(compared(main, removeStatus(false)));
    t.match(
      refused,
      /^- \*\*breaking\*\*: .*`status`.*accepted before, are now refused with 400\. \(`request-property-removed`\)$/,
    );
    t.match(counterExample, /^ {2}- for example `\{[^`]*"status":[^`]*\}`: accepted by the base, refused by the head$/);
  },
);

t.test('the report states its date, and the date decides a removal at the sunset', async (t) => {
  const removeGetPet = (doc: Doc) => {
    delete doc.paths['/pets/{petId}'];
  };
  const head = edited(removeGetPet);
  const before = compare(main, head, '2030-12-04', noClientChange);
  const after = compare(main, head, '2030-12-05', noClientChange);
  t.match(before.operations[0]?.changes[0], { rule: 'api-removed-before-sunset', level: 'breaking' });
  t.match(after.operations[0]?.changes[0], { rule: 'api-removed-after-sunset', level: 'warning' });
  t.match(
    reviewMarkdown({ version: 1, date: '2030-12-05', comparisons: [after] }),
    /- \*\*Date\*\*: 2030-12-05 .*`--date 2030-12-05`/,
  );
});

t.test('each sentence says what a consumer meets, in its words', async (t) => {
  const sentences = (edit: (doc: Doc) => void) => {
    const comparison = compared(main, edit);
    return [...comparison.operations.flatMap((operation) => operation.changes), ...comparison.other].map(
      (change) => `${change.rule}: ${change.consumer}`,
    );
  };
  const moved = sentences((doc) => {
    for (const server of doc.servers) server.url = server.url.replace(/\/v1$/, '/v2');
  });
  t.ok(
    moved.includes(
      'api-server-base-path-changed: Clients configured with `https://api.petstore.example.com/v1` must now call `https://api.petstore.example.com/v2`: every request to the old base path fails.',
    ),
    'a public server: both URLs whole, as a client configures them',
    { moved },
  );
  t.ok(
    moved.some((line) =>
      line.includes(
        'The internal server `https://staging.api.petstore.example.com/v1` moved to `https://staging.api.petstore.example.com/v2`',
      ),
    ),
    'an internal server: said to be one, its URLs never cut to their length',
    { moved },
  );
  // A status GET /pets does not declare yet, and a schema name the spec lacks.
  const status = ['404', '409', '410', '422'].find((code) => !(code in parse(specText).paths['/pets'].get.responses))!;
  const component = fresh.notes.schema;
  const renamed = sentences((doc) => {
    const newPet = doc.components.schemas.NewPet;
    newPet.required = newPet.required.filter((name: string) => name !== 'name');
    newPet.properties.name.deprecated = true;
    doc.components.schemas.Pet.properties[fresh.property] = { type: 'string' };
    doc.components.schemas[component] = { type: 'object', description: 'A note about an animal.' };
    doc.paths['/pets'].get.responses[status] = doc.paths['/pets/{petId}'].get.responses['404'];
  });
  for (const line of [
    'request-property-became-optional: Requests may now leave out `name` in the request body.',
    'request-property-deprecated: `name` in the request body is deprecated: stop sending it before it is removed.',
    `response-optional-property-added: Responses may now carry \`${fresh.property}\` in each item of the \`200\` response; clients ignore it until they use it.`,
    `response-non-success-status-added: Clients of GET /pets may now get a \`${status}\` answer (an error): handle it as one.`,
    `component-schema-added: The schema component \`${component}\` is new (A note about an animal): code generated from the components gains it; no call changes until an operation uses it.`,
  ])
    t.ok(renamed.includes(line), line, { sentences: renamed });
});

/** The tester's change of issue 69: `Error.message` may be 2,000 characters, so an answer may carry 1,001. */
const widenErrorMessage = (doc: Doc) => {
  doc.components.schemas.Error.properties.message.maxLength = 2000;
};
/** The places answering an Error, as the review names them: "getPet response 404". */
const errorAnswers = [...answersCarrying(parse(specText), 'Error')].flatMap(([operationId, statuses]) =>
  statuses.map((status) => `${operationId} response ${status}`),
);

t.test('a long example is shown bounded: its start and its length, the change keeping it whole', async (t) => {
  const comparison = compared(main, widenErrorMessage);
  const [change] = comparison.operations.flatMap((operation) => operation.changes);
  const value = change?.counterExample?.value as { message?: string } | undefined;
  t.equal(value?.message?.length, 1001, 'the counter-example carries a message of 1,001 characters');
  const text = markdown(comparison);
  const examples = text.split('\n').filter((line) => line.includes('for example'));
  t.ok(examples.length > 0, 'the example is printed');
  for (const line of examples) {
    t.match(line, /"message":"[^"]{1,60}…" \(1,001 characters\)/, 'its start, an ellipsis and its length');
    t.ok(line.length < 200, `a short line (${line.length} characters)`);
  }
  t.notOk(text.includes(value?.message ?? ''), 'the whole value is never printed');
});

t.test('one change of a shared schema: one line naming the schema and every place it reaches', async (t) => {
  const comparison = compared(main, widenErrorMessage);
  const rule = 'response-property-max-length-increased';
  const perPlace = comparison.operations.flatMap((operation) => operation.changes).filter((c) => c.rule === rule);
  t.equal(perPlace.length, errorAnswers.length, 'the diff still judges each place');
  t.ok(errorAnswers.length > 10, `Error is shared (${errorAnswers.length} answers)`);
  t.match(comparison.counts, { breaking: errorAnswers.length }, 'the verdict counts every place');
  t.match(comparison.gate, { passed: false, breaking: errorAnswers.length });
  t.equal(comparison.shared.length, 1, 'one shared change');
  t.match(comparison.shared[0], {
    component: '#/components/schemas/Error',
    pointer: '/properties/message',
    change: { rule, level: 'breaking' },
  });
  t.same(
    comparison.shared[0]?.places.map((place) => `${place.operationId} ${place.where}`).sort(),
    [...errorAnswers].sort(),
  );
  const review = markdown(comparison);
  const [text] = review.split('### Changelog entries');
  const lines = (text ?? '').split('\n');
  t.equal(lines.filter((line) => line.includes(`(\`${rule}\`)`)).length, 1, 'said once');
  const used = lines.filter((line) => line.startsWith('  - one change of the shared'));
  t.equal(used.length, 1);
  t.match(used[0], new RegExp(`shared schema \`Error\` .*\\(${errorAnswers.length} places\\)$`));
  // The text names the first placesNamed places (every one on today's spec); --json has them all.
  const places = (comparison.shared[0]?.places ?? []).map((place) => `${place.operationId} ${place.where}`);
  for (const place of places.slice(0, placesNamed)) t.ok(used[0]?.includes(place), place);
  if (places.length > placesNamed) t.match(used[0], /, … \(\d+ places\)$/, 'and says more follow');
  t.equal(lines.filter((line) => line.includes('for example')).length, 1, 'one example');
  // Said of the schema, not of the first place it reaches (the 400 of listPets).
  t.match(
    lines.find((line) => line.includes(`(\`${rule}\`)`)),
    /^- \*\*breaking\*\*: Responses may now carry `message` .* in the shared schema `Error`, which the old contract did not allow/,
  );
  t.match(review, /\*\*Breaking changes it adds\*\*: \d+, \*\*refused\*\*/, 'the verdict stands');

  // The changelog's entries (lib/contract/changelog.ts) say it once too, under the shared components.
  const entries = comparison.changelog.split('\n').filter((line) => line.includes(`\`${rule}\``));
  t.equal(entries.length, 1, 'one changelog entry');
  t.match(
    entries[0],
    new RegExp(`^- schema \`Error\` \\(\`/properties/message\`\\): maxLength .*: ${errorAnswers.length} places\\)$`),
  );
  t.match(comparison.changelog, /### Shared components\n\n- schema `Error`/);
});

t.test('a review over 60,000 characters stops there, its last line saying what was left out', async (t) => {
  const comparison = compared(main, () => {});
  const change: Change = {
    rule: 'request-property-max-length-decreased',
    level: 'breaking',
    direction: 'request',
    operation: { operationId: 'createPet', method: 'POST', path: '/pets' },
    pointer: '/paths/~1pets/post/requestBody',
    side: 'head',
    message: 'body `name`: maxLength `100` → `50`',
    consumer: 'Requests whose body has `name` a text of 51 characters, accepted before, are now refused with 400.',
  };
  // A thousand different sentences: alike ones are said once.
  const changes = Array.from({ length: 1000 }, (_, index) => ({
    ...change,
    consumer: change.consumer.replace('51', String(51 + index)),
  }));
  comparison.operations = [{ operationId: 'createPet', method: 'POST', path: '/pets', changes }];
  const report = { version: 1 as const, date, comparisons: [comparison] };
  const whole = reviewMarkdown(report, Infinity);
  t.ok(whole.length > 100_000, `the whole review is long (${whole.length} characters)`);
  const text = markdown(comparison);
  t.ok(text.length <= 60_000, `capped at 60,000 (${text.length} characters)`);
  const lines = text.trimEnd().split('\n');
  const last = lines.at(-1) ?? '';
  const left = /^… ([\d,]+) more line\(s\) left out: .*`--out FILE` writes it whole.*`--json`/.exec(last);
  t.ok(left, 'the last line says how many lines were left out and how to get them', { last });
  const kept = lines.slice(0, -2);
  const wholeLines = whole.trimEnd().split('\n');
  t.same(kept, wholeLines.slice(0, kept.length), 'what is kept is the start of the whole review');
  t.equal(Number(left?.[1]?.replace(/,/g, '')), wholeLines.length - kept.length, 'the count is exact');
  t.equal(reviewMarkdown(report, Infinity), whole, 'no limit, no cut');
});

t.test('the verb follows the counter-example, a move names both servers, a reviewed line says one thing', async (t) => {
  const sentences = (comparison: Comparison) =>
    [...comparison.operations.flatMap((operation) => operation.changes), ...comparison.other].map(
      (change) => `${change.rule}: ${change.consumer}`,
    );
  // `categoryId` renamed, either name required through anyOf: a response may now come without `categoryId`.
  const renamed = sentences(
    compared(main, (doc) => {
      const pet = doc.components.schemas.Pet;
      pet.properties[fresh.property] = pet.properties.categoryId;
      pet.required = pet.required.filter((name: string) => name !== 'categoryId');
      pet.anyOf = [{ required: ['categoryId'] }, { required: [fresh.property] }];
    }),
  );
  const optional = renamed.filter((line) => line.startsWith('response-property-became-optional: '));
  t.ok(optional.length > 0, 'categoryId is no longer always there', { renamed });
  for (const line of optional) {
    t.match(line, /^response-property-became-optional: Responses may now lack `categoryId` in /, 'lack, not carry');
    const example = /as in `(.*)`, which the old contract always carried/.exec(line)?.[1];
    t.ok(example && !example.includes('"categoryId"'), 'the example shows the absence', { line });
  }

  const servers = (edit: (doc: Doc) => void) => sentences(compared(main, edit));
  const replaced = servers((doc) => {
    doc.servers[0].url = 'https://pets.example.org/api';
  });
  t.same(
    replaced,
    [
      'api-server-host-changed: Clients configured with `https://api.petstore.example.com/v1` must now call `https://pets.example.org/api`: every request to the old host fails.',
    ],
    'a server replaced by one on another host and path moved, judged as a removed server',
  );
  t.same(
    servers((doc) => {
      doc.servers.push({ url: 'https://eu.pets.example.org/api' });
    }),
    ['api-server-added: The API is also served at `https://eu.pets.example.org/api`.'],
    'a server added beside the others is also served at',
  );

  const unscoped = edited((doc) => {
    doc.paths['/pets'].get.security = [{ bearerAuth: [] }];
  });
  const scoped = sentences(compare(unscoped, main, date, noClientChange));
  t.same(
    scoped,
    [
      'api-security-scope-added: GET /pets now asks for the scope `pets:read`; as reviewed, every key accepted before holds it, so none is refused.',
    ],
    'a reviewed scope: no "are now refused" beside a reason that nothing is',
  );
});

t.test(
  'the default bases: what the change adds first (the merge base under CI, else HEAD), then the release',
  async (t) => {
    const release = releasedFile(releasedVersions().at(-1)!);
    const asked: string[] = [];
    const mergeBase = (target: string) => {
      asked.push(target);
      return 'abc123';
    };
    t.same(defaultBases({}, mergeBase), ['HEAD', release], 'outside CI: the committed tree, then the release');
    t.same(asked, [], 'outside CI no merge base is looked for');
    t.same(defaultBases({ CI: 'true', GITHUB_BASE_REF: 'develop' }, mergeBase), ['abc123', release]);
    t.same(defaultBases({ CI: 'true' }, mergeBase), ['abc123', release]);
    t.same(asked, ['origin/develop', 'origin/main'], "the pull request's target branch, else main");
    t.same(
      defaultBases({ CI: 'true' }, () => undefined),
      [release],
      'no target branch in the clone: the release alone',
    );
  },
);

t.test('the merge base is the commit where HEAD left the target branch', async (t) => {
  const dir = scratchDir('pets-review-git-');
  t.teardown(() => {
    dir.remove();
  });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      cwd: dir.path,
      encoding: 'utf8',
    }).trim();
  git('init', '--quiet', '--initial-branch=trunk');
  const commit = (file: string) => {
    writeFileSync(join(dir.path, file), file);
    git('add', file);
    git('commit', '--quiet', '-m', file);
    return git('rev-parse', 'HEAD');
  };
  commit('a');
  const forked = commit('b');
  git('switch', '--quiet', '-c', 'feature');
  commit('c');
  git('switch', '--quiet', 'trunk');
  commit('d');
  git('switch', '--quiet', 'feature');
  t.equal(mergeBaseWith('trunk', dir.path), forked);
  t.equal(mergeBaseWith('origin/trunk', dir.path), undefined, 'a target the clone lacks');
});

t.test('a base with the same contract as the head: its date and one line, not an empty report', async (t) => {
  const comparison = compare(main, main, date, noClientChange);
  const { head, base } = comparison;
  t.equal(
    markdown(comparison),
    `## Contract review: \`main.yaml\` (${head.version}) against \`main.yaml\` (${base.version}, not released)\n\n` +
      `- **Date**: ${date} (sunsets are judged against this day; \`--date ${date}\` reviews again as of it).\n` +
      "- **Nothing for consumers**: no change on the wire, none in the client's declarations.\n",
  );
});
