// `npm start` and `npm run probe` build first only if they must (docs/command-line.md): when
// dist/ is missing or older than a source or build setting (build-state.mjs). `--always`
// (npm run build) builds.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildState, isCurrent, root, stamp } from './build-state.mjs';

/**
 * Removes what tsc emitted for a source that is gone (`x.js` and `x.js.map` without `x.ts`): tsc
 * never deletes, so a moved or removed module would stay in dist/ and in the package (`files`),
 * as the geo compilers did when they moved to scripts/geo/. dist/data/ is not compiled from src/.
 */
function removeOrphans(out, src) {
  for (const entry of readdirSync(out, { withFileTypes: true })) {
    const path = join(out, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'data' && out === join(root, 'dist')) continue;
      removeOrphans(path, join(src, entry.name));
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
      continue;
    }
    const base = /^(.*)\.js(?:\.map)?$/.exec(entry.name)?.[1];
    if (base !== undefined && !existsSync(join(src, `${base}.ts`))) rmSync(path);
  }
}

const state = buildState();
if (!process.argv.includes('--always') && isCurrent(state)) process.exit(0);

// A production install (`npm prune --omit=dev` after the build, README "Production install")
// has no compiler: it runs the dist/ it was given, and one without dist/ says how to make one
// rather than failing on a missing tsc.
const compiler = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
if (!existsSync(compiler)) {
  if (state.built !== undefined) {
    // `npm prune` rewrites the lockfile after the build; only a source newer than the build is news.
    if (state.built < state.sources) process.stderr.write('netdiag: sources or settings are newer than dist/, and this install has no compiler: running dist/ as built\n');
    process.exit(0);
  }
  process.stderr.write(
    'netdiag: dist/ is not built, and this install has no compiler (development dependencies were omitted).\n' +
      'Build where they are installed, then drop them: npm ci && npm run build && npm prune --omit=dev\n' +
      '(README, "Production install").\n',
  );
  process.exit(1);
}

// Said before the wait: the first build of a clone takes about half a minute (the geo tables),
// and `npm start` printed nothing until it was done.
const started = Date.now();
process.stderr.write(`netdiag: building dist/ (${state.built === undefined ? 'the first build takes about 30 s' : 'sources changed since the last build'})…\n`);

// The modules compiled from the OpenAPI document come first: the build imports them.
const generate = spawnSync(process.execPath, [join(root, 'scripts', 'generate.mjs')], { stdio: 'inherit' });
if (generate.status !== 0) process.exit(generate.status ?? 1);

const tsc = spawnSync(process.execPath, [compiler, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
removeOrphans(join(root, 'dist'), join(root, 'src'));
// The geo compilers are TypeScript run in place (compile-geo.mjs says why); Node 22.12-22.17 need the flag.
const geo = spawnSync(process.execPath, ['--experimental-strip-types', join(root, 'scripts', 'compile-geo.mjs')], { stdio: 'inherit' });
if (geo.status !== 0) process.exit(geo.status ?? 1);
// The client package the server hands out at /client/netdiag-client.tgz (src/features/client-package.ts).
const client = spawnSync(process.execPath, [join(root, 'scripts', 'pack-client.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] });
if (client.status !== 0) process.exit(client.status ?? 1);
writeFileSync(stamp, `${new Date().toISOString()}\n`);
process.stderr.write(`netdiag: built in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
