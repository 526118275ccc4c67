// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { layerConfigs } from './eslint.layers.js';

/** Node's globals, which the runtime-free core must not use (docs/design.md, "Layout": the core runs on Workers too). */
const NODE_GLOBALS = ['Buffer', 'process', 'global', 'require', 'module', '__dirname', '__filename', 'setImmediate', 'clearImmediate'].map((name) => ({
  name,
  message: `${name} is Node's: the core runs on Workers too (use a port, or a Web API)`,
}));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.scratch/**', '.wrangler/**', 'src/generated/**', 'test/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
    },
  },
  {
    // The Workers runtime and its suites are typed by the Workers platform (tsconfig.workers.json).
    files: ['src/runtime/workers/**/*.ts', 'test/workers/**/*.ts', 'vitest.workers.config.ts'],
    languageOptions: {
      parserOptions: { projectService: false, project: './tsconfig.workers.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // The page's script runs in the browser (tsconfig.web.json: DOM types, no Node).
    files: ['web/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: false, project: './tsconfig.web.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  // The layers of src/ and the runtime-free core (eslint.layers.js, docs/design.md "Layout").
  ...layerConfigs(),
  {
    files: ['src/**/*.ts'],
    ignores: ['src/runtime/node/**', 'src/runtime/workers/**', 'src/cli/**', 'src/**/*.test.ts'],
    rules: {
      // tsconfig.workers.json checks the core against the Workers types, but @types/dns-packet
      // references Node's, so Node's globals stay visible there: this rule keeps them out.
      'no-restricted-globals': ['error', ...NODE_GLOBALS],
    },
  },
  {
    // The one platform requirement of the core: dns-packet reads and writes Node's Buffer, which
    // Workers provide with `nodejs_compat`. The codec's one adapter hands it one; nothing else may.
    files: ['src/engines/dns/wire.ts'],
    rules: { 'no-restricted-globals': ['error', ...NODE_GLOBALS.filter((g) => g.name !== 'Buffer')] },
  },
  {
    // Build-time code (scripts/geo/) may import the run-time sources it shares definitions with,
    // never the reverse: what the server runs must not need what the build alone uses (its
    // packages are development dependencies, absent from a production install). A rule of its own
    // so it does not replace the folders' no-restricted-imports above.
    files: ['src/**/*.ts'],
    // A reader's test may compile its fixture table with the build's own compiler.
    ignores: ['src/**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: ':matches(ImportDeclaration, ExportNamedDeclaration, ExportAllDeclaration, ImportExpression)[source.value=/(^|\\/)scripts\\//]',
          message: 'src/ runs in production; scripts/ is build-time code and its packages are development dependencies',
        },
      ],
    },
  },
  {
    // A function past 80 lines is split into named stages (docs/design.md, "Habits"), each a
    // function named for what it holds. Blank lines and comments are not counted. Tests are not
    // held to it: a port's conformance suite (`*.conformance.ts`) is a test suite too.
    files: ['src/**/*.ts', 'web/**/*.ts'],
    ignores: ['src/**/*.test.ts', 'web/**/*.test.ts', 'src/**/*.conformance.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
  {
    files: ['**/*.js', 'bin/*.mjs', 'bench/*.mjs', 'bench/*.cjs', 'scripts/*.mjs', 'scripts/*.cjs', 'test/support/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    // Its parser options (no project service) kept: replacing languageOptions whole dropped them.
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: globals.node },
  },
);
