// Adds workerd's macOS and Windows binary packages to package-lock.json when they are missing.
// Why: the registry this project installs from serves only workerd's Linux binaries for current
// releases, so `npm install` leaves the other platforms out of the lockfile, and `npm ci` then
// refuses the lockfile ("Missing: @cloudflare/workerd-darwin-64@ from lock file"): npm requires
// every optional dependency to be listed, and skips at install those whose os/cpu do not match.
// The entries carry no integrity (there is no tarball here to hash); on macOS or Windows npm fetches
// them from the public registry. Run after any `npm install` that changes workerd's version.
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);
const PLATFORMS = {
  'darwin-64': ['darwin', 'x64'],
  'darwin-arm64': ['darwin', 'arm64'],
  'windows-64': ['win32', 'x64'],
};

const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const added = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  if (!path.endsWith('node_modules/workerd')) continue;
  const dir = path.slice(0, -'workerd'.length);
  for (const [suffix, [os, cpu]] of Object.entries(PLATFORMS)) {
    const name = `@cloudflare/workerd-${suffix}`;
    const version = entry.optionalDependencies?.[name];
    if (version === undefined || lock.packages[dir + name] !== undefined) continue;
    lock.packages[dir + name] = {
      version, cpu: [cpu], dev: true, license: 'Apache-2.0', optional: true, os: [os],
      engines: { node: '>=16' },
    };
    added.push(`${dir}${name}@${version}`);
  }
}
// npm keeps the root entry ("") first and the rest in order; keep the file as npm would write it.
const keys = Object.keys(lock.packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en')));
lock.packages = Object.fromEntries(keys.map((key) => [key, lock.packages[key]]));
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(added.length === 0 ? 'lockfile already lists every workerd platform' : `added:\n${added.join('\n')}`);
