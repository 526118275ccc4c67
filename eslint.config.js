// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.scratch/**'] },
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
    // The core must stay runtime-free so the same app can run on Workers (ARCHITECTURE.md §1).
    files: ['src/**/*.ts'],
    ignores: ['src/runtime/node/**', 'src/cli/**', 'src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['node:*'], message: 'node: imports belong in src/runtime/node or src/cli' }] }],
    },
  },
  {
    files: ['**/*.js', 'bench/*.mjs', 'bench/*.cjs', 'scripts/*.mjs', 'test/support/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    // Its parser options (no project service) kept: replacing languageOptions whole dropped them.
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: globals.node },
  },
);
