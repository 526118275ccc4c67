// Whether dist/ is current with the sources, by modification times: shared by
// build-if-stale.mjs (npm start, npm run probe) and the `netdiag` bin, which asks in its own
// process so a run of the CLI in a checkout pays a few milliseconds of stat calls, not a second
// Node start. A check reads a few hundred mtimes; a full `tsc` costs about 3 s of CPU.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const stamp = join(root, 'dist', '.build-stamp');

/** Newest modification time of the files under `dir`, in milliseconds. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/**
 * `built`: the last build's time, or undefined when there is none; `sources`: the newest source
 * or build setting; `inputs`: that or the lockfile (a dependency's new types can change what
 * compiles), whichever is newer. dist/ is current when `built >= inputs`.
 */
export function buildState() {
  const mtime = (f) => statSync(join(root, f)).mtimeMs;
  const sources = Math.max(
    newest(join(root, 'src')),
    newest(join(root, 'scripts', 'geo')),
    // Every module of the page is bundled into src/generated/page-assets.ts, not only the entry's.
    newest(join(root, 'web')),
    ...['tsconfig.json', 'tsconfig.build.json', 'openapi/openapi.yaml', 'scripts/generate.mjs', 'scripts/compile-geo.mjs', 'scripts/ts-resolve.mjs'].map(mtime),
  );
  // The compiled geo data counts as part of the build: without it the server cannot start.
  const outputs = [join('cli', 'main.js'), ...['asn.bin', 'city.bin'].map((f) => join('data', f))];
  const built = existsSync(stamp) && outputs.every((f) => existsSync(join(root, 'dist', f))) ? statSync(stamp).mtimeMs : undefined;
  return { built, sources, inputs: Math.max(sources, mtime('package-lock.json')) };
}

export const isCurrent = ({ built, inputs }) => built !== undefined && built >= inputs;
