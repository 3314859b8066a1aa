// Lint: typescript-eslint's type-checked strict rules over everything we
// write; formatting is Prettier's (npm run lint -- --fix), checked by npm run lint.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

// Who may import whom (ARCHITECTURE.md): each folder of src/ is a layer, and
// imports run one way, down this list: the process (src/process, src/cli, the
// entry points) > src/app.ts > src/http (the only place that knows fastify's
// request path) > handlers, auth, observability > config > openapi, db (the
// only place that knows pg and PGlite) > errors.ts, generated/. Circles are
// refused apart, below.
const framework = { group: ['fastify', 'fastify-*', '@fastify/*'], message: 'Only src/http knows fastify.' };
const drivers = { group: ['pg', 'pg-*', '@electric-sql/*'], message: 'Only src/db talks to the database.' };
const outsideSrc = {
  group: ['**/lib/**', '**/test/**', '**/scripts/**', '**/generators/**', '**/bench/**'],
  message: 'src/ stands alone: scripts and tests import it, never the reverse.',
};
const above = (...folders) => ({
  group: folders.flatMap((folder) => (folder.endsWith('.js') ? [`**/${folder}`] : [`**/${folder}/**`])),
  message: `A lower layer: ${folders.join(', ')} depend on it, not the reverse (eslint.config.js).`,
});
const processLayer = ['process', 'cli', 'server.js', 'cluster.js', 'app.js'];
const layer = (files, ...patterns) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [outsideSrc, ...patterns] }] },
});
const layerRules = [
  layer(['src/**/*.ts'], drivers),
  layer(['src/http/**/*.ts'], drivers, above(...processLayer)),
  layer(
    ['src/handlers/**/*.ts'],
    framework,
    drivers,
    above('http', 'config', 'auth', 'observability', ...processLayer),
    {
      group: ['**/errors.js'],
      importNames: ['ApiError', 'invalidRequest'],
      message: 'A handler returns its errors (errorResult), so the compiler checks them against the declared statuses.',
    },
  ),
  layer(
    ['src/auth/**/*.ts'],
    framework,
    drivers,
    above('http', 'handlers', 'config', 'observability', ...processLayer),
  ),
  // Observability knows fastify's logger and plugin types (pino options, the
  // request span hook), never the request path in src/http.
  layer(['src/observability/**/*.ts'], drivers, above('http', 'handlers', 'auth', ...processLayer)),
  layer(
    ['src/config/**/*.ts'],
    framework,
    drivers,
    above('http', 'handlers', 'auth', 'observability', 'openapi', ...processLayer),
  ),
  layer(
    ['src/openapi/**/*.ts'],
    framework,
    drivers,
    above('http', 'handlers', 'auth', 'observability', 'config', 'db', ...processLayer),
  ),
  layer(['src/db/**/*.ts'], framework, {
    ...above('http', 'handlers', 'auth', 'observability', 'config', 'openapi', ...processLayer),
    message: 'src/db knows no HTTP, no handlers and no environment variable names (it takes DatabaseOptions).',
  }),
  layer(
    ['src/errors.ts', 'src/entityTags.ts'],
    framework,
    drivers,
    above('http', 'handlers', 'auth', 'observability', 'config', 'openapi', 'db', ...processLayer),
  ),
  // The control socket's place and protocol, shared by the CLI (the client)
  // and src/process (the server, which runs the CLI's commands): below both.
  layer(
    ['src/control/**/*.ts'],
    framework,
    drivers,
    above('http', 'handlers', 'auth', 'observability', 'config', 'openapi', 'db', ...processLayer),
  ),
  layer(['src/app.ts'], drivers, above('process', 'cli', 'server.js', 'cluster.js')),
  layer(['src/cli/**/*.ts'], framework, drivers, above('http', 'process', 'server.js', 'cluster.js', 'app.js')),
];

// An import circle anywhere in src/: a circle is a module that cannot be
// understood, or loaded, on its own. import-x/no-cycle skips type-only imports
// (`import type`, `export type ... from`) and has no option to count them, so
// npm run lint also runs dependency-cruiser's no-circular over src/ with
// tsPreCompilationDeps (.dependency-cruiser.json), which counts them.
const noCircles = {
  files: ['src/**/*.ts'],
  plugins: { 'import-x': importX },
  settings: {
    ...importX.flatConfigs.typescript.settings,
    'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })],
  },
  rules: { 'import-x/no-cycle': 'error' },
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'dist-before/',
      'dist-timed/',
      'data/',
      '.run/',
      'src/generated/',
      'clients/typescript/src/generated/',
      'clients/typescript/dist/',
      'bench/baseline/',
      'coverage/',
      '.tap/',
    ],
  },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Template literals with numbers are how messages and links are built here.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // fastify hooks and handlers are async functions whether or not they await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests may assert on shapes they do not know statically.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'generators/**/*.ts', 'lib/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      // tap's t.test() returns a promise that tap itself awaits.
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // Tests and tools build messages from JSON values they have just checked.
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/restrict-plus-operands': 'off',
      '@typescript-eslint/no-misused-spread': 'off',
      '@typescript-eslint/no-dynamic-delete': 'off',
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      '@typescript-eslint/no-unnecessary-condition': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // A test sends numbers JSON cannot hold exactly, on purpose.
      'no-loss-of-precision': 'off',
    },
  },
  {
    // Prettier wraps code at 120 characters but not strings; a message
    // longer than a screen is split in parts, so that a review sees it whole.
    files: ['src/**/*.ts'],
    rules: { 'max-len': ['error', { code: 140, ignoreUrls: true }] },
  },
  ...layerRules,
  noCircles,
  { files: ['**/*.js', '**/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
);
