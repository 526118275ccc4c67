// `npm start` and `npm run probe` build first only if they must (SPEC-NOTES, Commands): when
// dist/ is missing or older than a source or build setting. `--always` (npm run build) builds. A fresh check reads a few hundred
// mtimes (a few milliseconds); a full `tsc` costs about 3 s of CPU on every start.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-stamp');

/** Newest modification time of the files under `dir`, in milliseconds. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const mtime = (f) => statSync(join(root, f)).mtimeMs;
const sources = Math.max(
  newest(join(root, 'src')),
  ...['tsconfig.json', 'tsconfig.build.json', 'openapi/openapi.yaml', 'scripts/generate.mjs', 'web/index.html', 'web/page.css', 'web/main.ts', 'web/speedtest.ts', 'web/dom.ts'].map(mtime),
);
// The lockfile too: a dependency's new types can change what compiles.
const inputs = Math.max(sources, mtime('package-lock.json'));
if (!process.argv.includes('--always') && existsSync(stamp) && statSync(stamp).mtimeMs >= inputs) process.exit(0);

// A production install (`npm prune --omit=dev` after the build, README "Production install")
// has no compiler: it runs the dist/ it was given, and one without dist/ says how to make one
// rather than failing on a missing tsc.
const compiler = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
if (!existsSync(compiler)) {
  if (existsSync(stamp) && existsSync(join(root, 'dist', 'cli', 'main.js'))) {
    // `npm prune` rewrites the lockfile after the build; only a source newer than the build is news.
    if (statSync(stamp).mtimeMs < sources) process.stderr.write('netdiag: sources or settings are newer than dist/, and this install has no compiler: running dist/ as built\n');
    process.exit(0);
  }
  process.stderr.write(
    'netdiag: dist/ is not built, and this install has no compiler (development dependencies were omitted).\n' +
      'Build where they are installed, then drop them: npm ci && npm run build && npm prune --omit=dev\n' +
      '(README, "Production install").\n',
  );
  process.exit(1);
}

// The modules compiled from the OpenAPI document come first: the build imports them.
const generate = spawnSync(process.execPath, [join(root, 'scripts', 'generate.mjs')], { stdio: 'inherit' });
if (generate.status !== 0) process.exit(generate.status ?? 1);

const tsc = spawnSync(process.execPath, [compiler, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
writeFileSync(stamp, `${new Date().toISOString()}\n`);
