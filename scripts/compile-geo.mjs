// Build step after tsc: compiles the embedded geo data into what start-up reads without parsing
// and, for the city data, without holding it (scripts/geo/asn-compile.ts and
// src/runtime/node/ports/geo-lookup/city-table.ts say why): dist/data/asn.bin and city.bin.
// They are compiled again only when the data or the code that compiles and reads them is newer
// (about 7 s of CPU).
//
// The compilers are build-time code: they live in scripts/geo/, not src/, so dist/ does not carry
// them and their data packages are development dependencies. They run here as TypeScript, with
// Node's type stripping (the build passes --experimental-strip-types, which Node 22.12-22.17 need
// and later versions accept) and ts-resolve.mjs for the `.js` import specifiers, importing the
// layouts and paths from the run-time sources that read the tables, so both sides share one
// definition. Type stripping takes only erasable syntax: no enum, namespace or parameter property
// in scripts/geo/ or what it imports at run time (tsc -p tsconfig.json type-checks them all).
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { dirname, join } from 'node:path';
import { root } from './build-state.mjs';

if (!process.features.typescript) {
  process.stderr.write('compile-geo: this Node does not run TypeScript: run it as node --experimental-strip-types scripts/compile-geo.mjs (Node 22.12 or newer)\n');
  process.exit(1);
}
register('./ts-resolve.mjs', import.meta.url);

const { compileAsn } = await import('./geo/asn-compile.ts');
const { compileCity } = await import('./geo/city-compile.ts');
const { embeddedCityPaths, SOURCE_PACKAGES } = await import('./geo/sources.ts');
const { ASN_TABLE_PATH } = await import('../src/runtime/node/ports/geo-lookup/asn-table.ts');
const { CITY_TABLE_PATH } = await import('../src/runtime/node/ports/geo-lookup/city-table.ts');

const outputs = [ASN_TABLE_PATH, CITY_TABLE_PATH];
const require = createRequire(import.meta.url);
const sourceFiles = (dir) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).map((f) => join(root, dir, f));
const inputs = [
  // The compilers, the readers whose layout they write, and the field rules records are shaped by.
  ...sourceFiles('scripts/geo'),
  ...sourceFiles('src/runtime/node/ports/geo-lookup'),
  join(root, 'src', 'core', 'ports', 'geo-lookup.ts'),
  join(root, 'scripts', 'compile-geo.mjs'),
  ...SOURCE_PACKAGES.map((p) => require.resolve(`${p}/package.json`)),
];
const newestInput = Math.max(...inputs.map((f) => statSync(f).mtimeMs));
const current = outputs.every((f) => existsSync(f) && statSync(f).mtimeMs >= newestInput);

/** Written beside and renamed, so a process starting meanwhile never reads half a table. */
function write(path, bytes) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.tmp`, bytes);
  renameSync(`${path}.tmp`, path);
}

if (!current || process.argv.includes('--always')) {
  write(ASN_TABLE_PATH, compileAsn());
  write(CITY_TABLE_PATH, compileCity(embeddedCityPaths()));
}
// Files an earlier layout wrote (city-ipv4.bin, city-ipv6.bin) would only weigh on the install.
const dataDir = dirname(CITY_TABLE_PATH);
for (const name of readdirSync(dataDir)) {
  if (!outputs.some((f) => f === join(dataDir, name))) rmSync(join(dataDir, name));
}
