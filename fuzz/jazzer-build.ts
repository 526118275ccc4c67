// Bundles each target into one JavaScript module for Jazzer.js, which runs JavaScript, not
// TypeScript (its docs: "Directly executing fuzz targets written in TypeScript is NOT supported"):
// <tmpdir>/netdiag-jazzer/<target>.mjs, with the libraries the parsers use (dns-packet, ipaddr.js,
// negotiator) inside it, so that Jazzer.js instruments them too (it leaves node_modules alone by
// default). Outside the checkout, so that neither git nor ESLint meets the bundles.
//   node fuzz/jazzer-build.ts && npx jazzer /tmp/netdiag-jazzer/dns.mjs --sync <corpus dirs>  (docs/fuzzing.md)
// It also replays each target's corpus through its bundle, so a bundle that does not load or
// behaves otherwise than the sources is caught here, where Jazzer.js cannot run.
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const here = import.meta.dirname;
const out = join(tmpdir(), 'netdiag-jazzer');
const targets = readdirSync(join(here, 'targets'))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.slice(0, -3));

await build({
  entryPoints: targets.map((name) => join(here, 'targets', `${name}.ts`)),
  outdir: out,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  // The CommonJS libraries inside call require() for Node's modules, which an ES module lacks.
  banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  logLevel: 'warning',
});

for (const name of targets) {
  const module = (await import(pathToFileURL(join(out, `${name}.mjs`)).href)) as { fuzz: (data: Buffer) => void };
  const dir = join(here, 'corpus', name);
  // Regression inputs break an invariant until their fix lands (known-findings.ts): not replayed here.
  const seeds = readdirSync(dir).filter((file) => !file.startsWith('regression-'));
  for (const file of seeds) module.fuzz(readFileSync(join(dir, file)));
  console.log(`${join(out, name)}.mjs: ${String(seeds.length)} seeds replayed`);
}
