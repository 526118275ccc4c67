// The test suite's own TypeScript (test/support/) for a benchmark, bundled with esbuild on start:
// Node's type stripping cannot follow the .js specifiers TypeScript's imports use, and bundling
// lets a bench run the very code the suites run.
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

let bundles = 0;

/** Bundles `contents` (export lines naming files under the project root) into `scratch` and imports it (a file of its own each time: modules are cached by URL). */
export async function importTestSupport(contents, scratch) {
  bundles += 1;
  const outfile = join(scratch, `test-support-${String(bundles)}.mjs`);
  await build({ stdin: { contents, resolveDir: root, loader: 'ts' }, bundle: true, platform: 'node', format: 'esm', target: 'node22', packages: 'external', outfile, logLevel: 'warning' });
  return import(pathToFileURL(outfile).href);
}
