// Lint: typescript-eslint's type-checked strict rules over everything we
// write; formatting is Prettier's (npm run lint -- --fix), checked by npm run lint.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Who may import whom (ARCHITECTURE.md): dependencies run one way, from
// src/http (the only place that knows fastify) through handlers to src/db
// (the only place that knows pg and PGlite).
const framework = { group: ['fastify', 'fastify-*', '@fastify/*'], message: 'Only src/http knows fastify.' };
const httpLayer = { group: ['**/http/**'], message: 'src/http depends on this layer, not the reverse.' };
const drivers = { group: ['pg', 'pg-*', '@electric-sql/*'], message: 'Only src/db talks to the database.' };
const outsideSrc = {
  group: ['**/lib/**', '**/test/**', '**/scripts/**', '**/generators/**', '**/bench/**'],
  message: 'src/ stands alone: scripts and tests import it, never the reverse.',
};
const layer = (files, ...patterns) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [outsideSrc, ...patterns] }] },
});
const layerRules = [
  layer(['src/**/*.ts'], drivers),
  layer(
    ['src/handlers/**/*.ts'],
    framework,
    httpLayer,
    drivers,
    {
      group: ['**/config.js', '**/cli/**', '**/server.js', '**/app.js'],
      message: 'A handler sees its typed input and its dependencies only.',
    },
    {
      group: ['**/errors.js'],
      importNames: ['ApiError', 'invalidRequest'],
      message: 'A handler returns its errors (errorResult), so the compiler checks them against the declared statuses.',
    },
  ),
  layer(['src/db/**/*.ts'], framework, httpLayer, {
    group: ['**/config.js', '**/handlers/**', '**/auth/**', '**/cli/**', '**/server.js', '**/app.js'],
    message: 'src/db knows no HTTP, no handlers and no environment variable names (it takes DatabaseOptions).',
  }),
  layer(['src/auth/**/*.ts', 'src/openapi/**/*.ts', 'src/cli/**/*.ts'], framework, httpLayer, drivers),
];

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
  { files: ['**/*.js', '**/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
);
